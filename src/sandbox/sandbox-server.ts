import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../logger.js';
import type { FaultInjector } from './faults.js';
import { formatLinkHeader } from './link-header-writer.js';
import { sendError, sendJson, successBody, walletJson } from './json-response.js';
import { pageLinks, parsePageRequest, totalPages } from './pagination.js';
import type { TokenStore } from './issued-tokens.js';
import { isCurrencyCode, type SandboxWallet } from './wallet-fixtures.js';

/** Counters tests assert on. Route counters include requests a fault then answered or dropped. */
export interface SandboxStats {
  tokensIssued: number;
  requests: number;
  balanceListRequests: number;
  singleRequests: number;
}

/** Everything the request handler reads; `wallets` is kept sorted by currency and changed in place. */
export interface SandboxState {
  readonly apiKey: string;
  readonly apiSecret: string;
  readonly postsPerPage: number;
  readonly tokenTtlSeconds: number;
  readonly wallets: SandboxWallet[];
  /** Listed wallets whose single read answers 404, as a gateway whose two endpoints disagree on what exists. */
  readonly unreadable: Set<string>;
  readonly tokens: TokenStore;
  readonly faults: FaultInjector;
  readonly stats: SandboxStats;
  /** Aborted on close, so requests waiting out an injected latency stop waiting. */
  readonly closing: AbortSignal;
  readonly logger: Logger | undefined;
  /** host:port to build absolute links with when a request has no usable Host header. */
  readonly fallbackHost: () => string;
}

type Route = { name: 'token' } | { name: 'balances' } | { name: 'balance'; currency: string };

const MAX_TOKEN_BODY_BYTES = 16 * 1024;
const FAILURE_MESSAGES = {
  500: 'Internal server error (injected by the sandbox)',
  502: 'Bad gateway (injected by the sandbox)',
  503: 'Service unavailable (injected by the sandbox)',
} as const;

function matchRoute(pathname: string): { route: Route; method: 'GET' | 'POST' } | undefined {
  if (pathname === '/v1/auth/token') return { route: { name: 'token' }, method: 'POST' };
  if (pathname === '/v1/data/wallets/balances') return { route: { name: 'balances' }, method: 'GET' };
  const single = /^\/v1\/data\/wallets\/([^/]+)\/balance$/.exec(pathname);
  if (!single) return undefined;
  let currency = single[1]!;
  try {
    currency = decodeURIComponent(currency);
  } catch {
    // A malformed escape is just another unknown currency: the 404 below says so.
  }
  return { route: { name: 'balance', currency }, method: 'GET' };
}

function requestUrl(req: IncomingMessage, fallbackHost: string): URL {
  const host = req.headers.host ?? '';
  // Links are built from Host, so only a plain host[:port] is trusted into them.
  const usable = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? host : fallbackHost;
  const path = (req.url ?? '/').startsWith('/') ? (req.url ?? '/') : '/';
  return new URL(path, `http://${usable}`);
}

// Comparing digests keeps the comparison constant-time even when the lengths differ.
function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function isJsonMediaType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept
    .split(',')
    .map((part) => part.split(';')[0]!.trim().toLowerCase())
    .some((type) => type === '*/*' || type === 'application/*' || type === 'application/json');
}

async function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Applies latency and the fault decision; returns false when the request has been answered or dropped. */
async function passFaults(state: SandboxState, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const { latencyMs, rateLimit } = state.faults.settings;
  if (latencyMs > 0) {
    try {
      await delay(latencyMs, undefined, { signal: state.closing });
    } catch {
      return false;
    }
    if (req.socket.destroyed) return false;
  }
  const decision = state.faults.decide();
  switch (decision.kind) {
    case 'none':
      return true;
    case 'drop':
      // A TCP reset, not a clean close: what a crashed proxy or a dropped connection looks like.
      req.socket.resetAndDestroy();
      return false;
    case 'rate-limited':
      sendError(res, 429, `Too many requests: the sandbox allows ${rateLimit} requests per second`, { 'Retry-After': '1' });
      return false;
    case 'fail':
      sendError(res, decision.status, FAILURE_MESSAGES[decision.status]);
      return false;
  }
}

async function issueToken(state: SandboxState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!isJsonMediaType(req.headers['content-type'])) {
    return sendError(res, 415, 'Content-Type must be application/json, with a body such as {"api_key": "..."}');
  }
  if (!acceptsJson(req.headers.accept)) return sendError(res, 406, 'Accept must allow application/json');
  const raw = await readBody(req, MAX_TOKEN_BODY_BYTES);
  if (raw === undefined) return sendError(res, 413, `The request body is larger than ${MAX_TOKEN_BODY_BYTES} bytes`, { Connection: 'close' });
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return sendError(res, 400, 'The request body is not valid JSON; send {"api_key": "..."}');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return sendError(res, 400, 'The request body must be a JSON object such as {"api_key": "..."}');
  }
  const apiKey = (body as Record<string, unknown>).api_key;
  const secret = req.headers['secret-key'];
  if (typeof secret !== 'string' || secret === '') return sendError(res, 401, 'Missing Secret-Key header: send the API secret in it');
  if (typeof apiKey !== 'string' || apiKey === '') return sendError(res, 401, 'Missing api_key in the request body');
  // Both are compared before answering so the response time does not tell which one was wrong.
  const keyMatches = sameSecret(apiKey, state.apiKey);
  const secretMatches = sameSecret(secret, state.apiSecret);
  if (!keyMatches || !secretMatches) return sendError(res, 401, 'Invalid API key or secret');
  const token = state.tokens.issue(state.tokenTtlSeconds);
  state.stats.tokensIssued++;
  const data = JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: state.tokenTtlSeconds });
  // RFC 6749 §5.1: token responses must not be cached.
  sendJson(res, 200, successBody('Token issued', data), { 'Cache-Control': 'no-store', Pragma: 'no-cache' });
}

function authorize(state: SandboxState, req: IncomingMessage, res: ServerResponse): boolean {
  const header = req.headers.authorization;
  const refuse = (message: string, challenge: string) => {
    sendError(res, 401, message, { 'WWW-Authenticate': challenge });
    return false;
  };
  if (!header) return refuse('Missing Authorization header: send "Authorization: Bearer <access token>"', 'Bearer realm="sandbox"');
  // RFC 6750 §2.1: the scheme is case-insensitive, the token is b64token.
  const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
  if (!match) return refuse('The Authorization header must read "Bearer <access token>"', 'Bearer realm="sandbox", error="invalid_request"');
  switch (state.tokens.check(match[1]!)) {
    case 'valid':
      return true;
    case 'expired':
      return refuse('The access token has expired; request a new one from /v1/auth/token', 'Bearer realm="sandbox", error="invalid_token"');
    case 'unknown':
      return refuse('The access token is not valid; request a new one from /v1/auth/token', 'Bearer realm="sandbox", error="invalid_token"');
  }
}

function listBalances(state: SandboxState, url: URL, res: ServerResponse): void {
  const request = parsePageRequest(url.searchParams, state.postsPerPage);
  if ('problem' in request) return sendError(res, 400, request.problem);
  const total = state.wallets.length;
  const page = state.wallets.slice(request.start, request.start + request.perPage);
  sendJson(res, 200, successBody('Wallet balances retrieved', `[${page.map(walletJson).join(',')}]`), {
    'X-PH-Total': String(total),
    'X-PH-TotalPages': String(totalPages(total, request.perPage)),
    Link: formatLinkHeader(pageLinks(url, request, total)),
  });
}

function readBalance(state: SandboxState, currency: string, res: ServerResponse): void {
  const wallet = isCurrencyCode(currency) && !state.unreadable.has(currency) ? state.wallets.find((w) => w.currency === currency) : undefined;
  if (!wallet) {
    const shown = JSON.stringify(currency.slice(0, 32));
    const hint = isCurrencyCode(currency) ? '' : '; currency codes are three uppercase letters such as USD';
    return sendError(res, 404, `No wallet for currency ${shown}${hint}`);
  }
  sendJson(res, 200, successBody('Wallet balance retrieved', walletJson(wallet)));
}

async function handle(state: SandboxState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  state.stats.requests++;
  const url = requestUrl(req, state.fallbackHost());
  const match = matchRoute(url.pathname);
  if (!match) return sendError(res, 404, `No endpoint at ${url.pathname}`);
  if (req.method !== match.method) {
    return sendError(res, 405, `${req.method ?? 'This method'} is not allowed on ${url.pathname}; use ${match.method}`, { Allow: match.method });
  }
  if (match.route.name === 'balances') state.stats.balanceListRequests++;
  if (match.route.name === 'balance') state.stats.singleRequests++;
  if (!(await passFaults(state, req, res))) return;
  if (match.route.name === 'token') return issueToken(state, req, res);
  if (!authorize(state, req, res)) return;
  if (match.route.name === 'balances') return listBalances(state, url, res);
  return readBalance(state, match.route.currency, res);
}

/** The node:http request listener that serves the gateway interface from `state`. */
export function createRequestHandler(state: SandboxState): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (state.logger) {
      const logger = state.logger;
      // Only method, path and status: headers and query strings could carry credentials.
      res.once('finish', () => logger.debug({ method: req.method, path: (req.url ?? '').split('?')[0], status: res.statusCode }, 'sandbox request'));
    }
    handle(state, req, res).catch((error: unknown) => {
      state.logger?.error({ err: error }, 'sandbox request failed');
      if (!res.headersSent) sendError(res, 500, 'Internal sandbox error');
      else res.destroy();
    });
  };
}
