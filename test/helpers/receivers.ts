import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A message as the SMTP server received it. */
export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>` (no TLS; any login accepted). */
  url: string;
  mails: ReceivedMail[];
  /** User names that logged in. */
  logins: string[];
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 (smtp-server, from the nodemailer project) that keeps every message. */
export async function startSmtpServer(): Promise<TestSmtpServer> {
  const mails: ReceivedMail[] = [];
  const logins: string[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // Loopback only: a user name and password over plain SMTP are accepted, whatever they are.
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      logins.push(auth.username ?? '');
      callback(null, { user: auth.username });
    },
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, mails, logins, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** One MIME part: its headers (lower-case names, unfolded) and its decoded body. */
export interface MimePart {
  headers: Record<string, string>;
  body: string;
}

function splitHeaders(text: string): { headers: Record<string, string>; body: string } {
  const at = text.indexOf('\r\n\r\n');
  const head = at === -1 ? text : text.slice(0, at);
  const body = at === -1 ? '' : text.slice(at + 4);
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function decode(body: string, encoding: string | undefined): string {
  if (encoding?.toLowerCase() === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding?.toLowerCase() === 'quoted-printable') {
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

/**
 * A small MIME reader for tests (mailparser does not install here): the top headers and every
 * leaf part, multipart nesting followed, bodies decoded from base64 or quoted-printable.
 */
export function parseMail(raw: string): { headers: Record<string, string>; parts: MimePart[] } {
  const top = splitHeaders(raw);
  const parts: MimePart[] = [];
  const walk = (headers: Record<string, string>, body: string) => {
    const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
    if (!boundary || !/^multipart\//i.test(headers['content-type'] ?? '')) {
      parts.push({ headers, body: decode(body, headers['content-transfer-encoding']) });
      return;
    }
    for (const chunk of body.split(`--${boundary}`).slice(1)) {
      if (chunk.startsWith('--')) break;
      const inner = splitHeaders(chunk.replace(/^\r\n/, '').replace(/\r\n$/, ''));
      walk(inner.headers, inner.body);
    }
  };
  walk(top.headers, top.body);
  return { headers: top.headers, parts };
}

/** One sample of a Prometheus text page. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (comments skipped). */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples of one metric whose labels include `labels`. */
export function samplesOf(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
