import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import got, { ReadError, RequestError, TimeoutError, type Got } from 'got';
import { InterruptedError } from '../errors.js';
import type { Logger } from '../logger.js';
import { gatewayErrorDetail, pathWithQuery } from './gateway-messages.js';
import type { RateLimiter } from './rate-limiter.js';
import { throwIfAborted } from './sleep.js';

/** One request as the client means it; `token` is turned into Authorization by the transport. */
export interface HttpRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers?: Record<string, string>;
  body?: string;
  token?: string;
}

/** Everything the client needs from an answer; no got object survives past this module. */
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
 * An attempt that got no usable answer. Its message is built from the error code and got's
 * text with URLs removed; the got error itself (which carries the request headers, token and
 * Secret-Key included) is deliberately not kept.
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

/** got instances by timeout: extending got merges every option, too costly per account. */
const gotInstances = new Map<string, Got>();

function gotFor(timeoutMs: number): Got {
  const key = String(timeoutMs);
  let instance = gotInstances.get(key);
  if (instance === undefined) {
    instance = got.extend({
      retry: { limit: 0 },
      followRedirect: false,
      throwHttpErrors: false,
      responseType: 'text',
      timeout: { request: timeoutMs },
      agent: sharedAgents,
      headers: { 'user-agent': 'wallet-recon' },
    });
    gotInstances.set(key, instance);
  }
  return instance;
}

/**
 * Sends single attempts through got with the process's keep-alive agents. got's own retries,
 * redirects and pagination are all off: retries and pagination are ours (got's leak credentials
 * or miss RFC 8288 cases), and a redirect could carry Secret-Key to another host.
 */
export class HttpTransport {
  readonly #got: Got;
  readonly #options: HttpTransportOptions;
  #requestCount = 0;

  constructor(options: HttpTransportOptions) {
    this.#options = options;
    this.#got = gotFor(options.timeoutMs);
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
    // The debug lines are built only when debug is on: every request of a night passes here.
    const path = request.url.pathname;
    const debug = logger.isLevelEnabled('debug');
    const loggedPath = debug ? pathWithQuery(request.url) : path;
    try {
      // The one place Authorization is set: from the token the caller took from the token store
      // for this attempt, so every attempt and every page uses the current token. Set here rather
      // than in a got hook: the fewer options a request carries, the less got merges per request.
      const headers = request.token === undefined ? (request.headers ?? {}) : { ...request.headers, authorization: authorizationValue(this.#options.authScheme, request.token) };
      const response = await this.#got(request.url, { method: request.method, headers, body: request.body, signal });
      if (debug) {
        const ms = Math.round(performance.now() - started);
        // A refused request's body is the gateway's explanation (never a token: those come with 2xx).
        const gatewayMessage = response.statusCode >= 400 ? gatewayErrorDetail(response.body) : undefined;
        logger.debug(
          { method: request.method, path: loggedPath, status: response.statusCode, ms, attempt, ...(gatewayMessage === undefined ? {} : { gatewayMessage }) },
          'gateway request',
        );
      }
      this.#options.onAttempt?.(path, response.statusCode);
      return {
        status: response.statusCode,
        headers: response.headers,
        linkHeaders: collectHeaderLines(response.rawHeaders, 'link'),
        body: response.body,
        // Redirects are off, so the URL that answered is the one asked: no second parse per answer.
        url: request.url,
      };
    } catch (error) {
      const ms = Math.round(performance.now() - started);
      if (signal?.aborted || (error instanceof RequestError && error.code === 'ERR_ABORTED')) {
        logger.debug({ method: request.method, path: loggedPath, ms, attempt, code: 'ERR_ABORTED' }, 'gateway request cancelled');
        throw new InterruptedError(`the gateway client was stopped during ${request.method} ${path}`);
      }
      const failure = toTransportFailure(error, this.#options.timeoutMs);
      this.#options.onAttempt?.(path, undefined);
      logger.debug({ method: request.method, path: loggedPath, ms, attempt, code: failure.kind === 'timeout' ? 'ETIMEDOUT' : codeOf(error) }, 'gateway request failed');
      throw failure;
    }
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
  if (error instanceof TimeoutError) return new TransportFailure('timeout', true, `no answer within ${timeoutMs} ms`);
  const code = codeOf(error);
  // got's messages can quote the URL; keep only the words.
  const text = error instanceof Error ? error.message.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>').slice(0, 120) : String(error);
  const retryable = error instanceof ReadError || TRANSIENT_NETWORK_CODES.has(code);
  return new TransportFailure('network', retryable, `${code} (${text})`);
}
