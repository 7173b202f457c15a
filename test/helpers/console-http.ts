import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { spawnCli } from './run-cli.js';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Milliseconds from sending to the end of the answer. */
  ms: number;
}

/**
 * One HTTP request over its own connection, from `localAddress` (127.0.0.2, 127.0.0.3… are
 * distinct client addresses on a Linux loopback), with exactly the headers given (Host included).
 */
export function httpRequest(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string; localAddress?: string },
): Promise<HttpAnswer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers: options.headers, localAddress: options.localAddress, agent: false },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body, ms: performance.now() - started }));
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/** A browser's sign-in form from one client address: its CSRF cookie and token. */
export interface LoginForm {
  cookie: string;
  token: string;
  localAddress: string;
}

export async function openLoginForm(port: number, localAddress: string): Promise<LoginForm> {
  const page = await httpRequest(port, { path: '/login', headers: { host: `127.0.0.1:${port}` }, localAddress });
  const cookie = [page.headers['set-cookie']].flat().map((c) => String(c).split(';')[0]!).find((c) => c.startsWith('recon_login_csrf='))!;
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return { cookie, token, localAddress };
}

/** POST /login as a browser on this console would (same-origin, the form's token). */
export function postLogin(port: number, form: LoginForm, user: string, password: string, extraHeaders: Record<string, string> = {}): Promise<HttpAnswer> {
  return httpRequest(port, {
    method: 'POST',
    path: '/login',
    localAddress: form.localAddress,
    headers: { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded', ...extraHeaders },
    body: new URLSearchParams({ user, password, _csrf: form.token }).toString(),
  });
}

/** `wallet-recon console` started as a process; its standard output (the JSON log) is kept. */
export interface StartedConsole {
  port: number;
  child: ChildProcess;
  log(): string;
  stop(): Promise<void>;
}

export async function startConsoleProcess(env: Record<string, string | undefined>, port: number): Promise<StartedConsole> {
  const child = spawnCli(['console', '--port', String(port)], env);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const deadline = Date.now() + 60_000;
  while (!out.includes('The review console listens on')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the console did not start (exit ${child.exitCode}): ${err}${out}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    port,
    child,
    log: () => out + err,
    stop: async () => {
      if (child.exitCode !== null) return;
      const closed = new Promise((resolve) => child.once('close', resolve));
      child.kill('SIGTERM');
      await closed;
    },
  };
}
