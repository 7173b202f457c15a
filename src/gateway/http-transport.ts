import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { InterruptedError } from '../errors.js';
import type { Logger } from '../logger.js';
import { gatewayErrorDetail, pathWithQuery } from './gateway-messages.js';
import type { RateLimiter } from './rate-limiter.js';
import { throwIfAborted } from './sleep.js';

/** One request as the client means it; `token` is turned into Authorization when it is sent. */
export interface HttpRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers?: Record<string, string>;
  body?: string;
  token?: string;
}

/** Everything the client needs from an answer. */
export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Each Link header line as sent (Node would join repeated lines with commas). */
  linkHeaders: string[];
  body: string;
  /** The URL that answered: relative Link targets resolve against it. */
  url: URL;
}

/** Network codes that mean the connection failed in a way another attempt may not. */
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
]);

/**
 * An attempt that got no usable answer. Its message is built from the error code and the
 * error's text with URLs removed; the error itself is deliberately not kept (nothing that
 * carries the request's headers, token and Secret-Key included, survives the attempt).
 */
export class TransportFailure extends Error {
  constructor(
    readonly kind: 'timeout' | 'network',
    readonly retryable: boolean,
    message: string,
  ) {
    super(message);
    this.name = 'TransportFailure';
  }
}

export interface HttpTransportOptions {
  timeoutMs: number;
  authScheme: string;
  logger: Logger;
  signal?: AbortSignal;
  rateLimiter?: RateLimiter;
  /** Told of every attempt: its path and status, or undefined when no answer came (for metrics). */
  onAttempt?: (path: string, status: number | undefined) => void;
}

/** The Authorization value: `<scheme> <token>`, or the bare token when the scheme is empty. */
export function authorizationValue(scheme: string, token: string): string {
  return scheme === '' ? token : `${scheme} ${token}`;
}

/**
 * The process's keep-alive agents, shared by every account's client: a fleet of accounts on one
 * gateway reuses its connections instead of opening (and closing) a pool per account and night.
 * Credentials travel per request (headers), never per connection. Idle sockets are unref'd by
 * Node's agent, so they never keep a command from exiting, and are dropped when the server closes them.
 */
const sharedAgents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/** No answer (headers and whole body) within the transport's timeout. */
class AnswerTimeout extends Error {}

/** The connection failed while the answer's body was being read: another attempt may succeed. */
class BodyReadError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

/**
 * Sends single attempts with Node's own HTTP client and the process's keep-alive agents. There are
 * no retries, redirects or pagination here: retries and pagination are ours (a library's leak
 * credentials or miss RFC 8288 cases), and a redirect could carry Secret-Key to another host, so
 * none is followed. (A general-purpose HTTP library cost 2–3 ms of CPU per request in its option
 * merging, hooks and streams, about twice what the request itself costs, and 40 ms to load.)
 */
export class HttpTransport {
  readonly #options: HttpTransportOptions;
  #requestCount = 0;

  constructor(options: HttpTransportOptions) {
    this.#options = options;
  }

  /** Requests started so far, every attempt counted. */
  get requestCount(): number {
    return this.#requestCount;
  }

  /** Sends one attempt. Throws TransportFailure (no usable answer) or InterruptedError (aborted). */
  async send(request: HttpRequest, attempt: number): Promise<HttpResponse> {
    const { signal, logger, rateLimiter } = this.#options;
    await rateLimiter?.acquire(signal);
    throwIfAborted(signal);
    this.#requestCount++;
    const started = performance.now();
    // Metrics group by path alone; the log shows the query too (credential-like values masked).
    const path = request.url.pathname;
    const loggedPath = pathWithQuery(request.url);
    try {
      const response = await this.#exchange(request);
      const ms = Math.round(performance.now() - started);
      // A refused request's body is the gateway's explanation (never a token: those come with 2xx).
      const gatewayMessage = response.status >= 400 ? gatewayErrorDetail(response.body) : undefined;
      if (logger.isLevelEnabled('debug')) {
        logger.debug(
          { method: request.method, path: loggedPath, status: response.status, ms, attempt, ...(gatewayMessage === undefined ? {} : { gatewayMessage }) },
          'gateway request',
        );
      }
      this.#options.onAttempt?.(path, response.status);
      return {
        status: response.status,
        headers: response.headers,
        linkHeaders: collectHeaderLines(response.rawHeaders, 'link'),
        body: response.body,
        // Nothing is followed: the URL that answered is the one asked.
        url: request.url,
      };
    } catch (error) {
      const ms = Math.round(performance.now() - started);
      if (signal?.aborted) {
        logger.debug({ method: request.method, path: loggedPath, ms, attempt, code: 'ERR_ABORTED' }, 'gateway request cancelled');
        throw new InterruptedError(`the gateway client was stopped during ${request.method} ${path}`);
      }
      const failure = toTransportFailure(error, this.#options.timeoutMs);
      this.#options.onAttempt?.(path, undefined);
      logger.debug({ method: request.method, path: loggedPath, ms, attempt, code: failure.kind === 'timeout' ? 'ETIMEDOUT' : codeOf(error) }, 'gateway request failed');
      throw failure;
    }
  }

  /** One request and its whole answer as text, within the timeout; rejects on abort, timeout or a failed connection. */
  #exchange(request: HttpRequest): Promise<RawAnswer> {
    const { signal, timeoutMs, authScheme } = this.#options;
    const headers: Record<string, string> = { 'user-agent': 'wallet-recon' };
    for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
    // The one place Authorization is set: from the token the caller took from the token store
    // for this attempt, so every attempt and every page uses the current token.
    if (request.token !== undefined) headers.authorization = authorizationValue(authScheme, request.token);
    if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
    const secure = request.url.protocol === 'https:';
    return new Promise<RawAnswer>((resolve, reject) => {
      let settled = false;
      const finish = (error: Error | undefined, answer?: RawAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (error) {
          req.destroy();
          reject(error);
        } else resolve(answer!);
      };
      const onAbort = () => finish(new InterruptedError());
      const req = (secure ? https : http).request(request.url, { method: request.method, headers, agent: secure ? sharedAgents.https : sharedAgents.http }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error: NodeJS.ErrnoException) => finish(new BodyReadError(error.code ?? 'ECONNRESET', error.message)));
        res.on('aborted', () => finish(new BodyReadError('ECONNRESET', 'the connection closed before the whole answer arrived')));
        res.on('end', () => {
          if (!res.complete) return finish(new BodyReadError('ECONNRESET', 'the connection closed before the whole answer arrived'));
          finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.on('error', (error) => finish(error));
      const timer = setTimeout(() => finish(new AnswerTimeout()), timeoutMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      req.end(request.body);
    });
  }

  /**
   * Nothing to free: the keep-alive sockets are the process's (requests under way stop with the
   * signal; idle sockets never hold the process open).
   */
  close(): void {}
}

function collectHeaderLines(rawHeaders: readonly string[], name: string): string[] {
  const lines: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) lines.push(rawHeaders[i + 1]!);
  return lines;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

function toTransportFailure(error: unknown, timeoutMs: number): TransportFailure {
  if (error instanceof AnswerTimeout) return new TransportFailure('timeout', true, `no answer within ${timeoutMs} ms`);
  const code = codeOf(error);
  // Messages can quote the URL; keep only the words.
  const text = error instanceof Error ? error.message.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>').slice(0, 120) : String(error);
  const retryable = error instanceof BodyReadError || TRANSIENT_NETWORK_CODES.has(code);
  return new TransportFailure('network', retryable, `${code} (${text})`);
}
