import { maskUrlPasswords } from '../logger.js';
import { maskSecretValues } from '../secret.js';

/** ` (account "eu-main")`, or nothing when the client was not given an account name. */
export function accountSuffix(account: string | undefined): string {
  return account === undefined ? '' : ` (account "${account}")`;
}

/** `for account "eu-main"`-style phrase for sentences about credentials. */
export function forAccount(account: string | undefined): string {
  return account === undefined ? '' : ` for account "${account}"`;
}

/** `GET /v1/data/wallets/balances`: method and path, never the query. */
export function requestLabel(method: string, url: URL): string {
  return `${method} ${url.pathname}`;
}

/** "1 attempt" / "5 attempts". */
export function attempts(count: number): string {
  return `${count} attempt${count === 1 ? '' : 's'}`;
}

/**
 * A short, printable excerpt of a body that is not secret (never the token response), with
 * anything long and token-like masked, for "not JSON" messages.
 */
export function bodyExcerpt(body: string): string {
  const flat = body
    .slice(0, 200)
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[A-Za-z0-9+/_=.~-]{24,}/g, '[…]');
  return flat.length > 60 ? `${flat.slice(0, 60)}…` : flat;
}

/** Query parameters whose values may be credentials (a token in the URL, a signature, a session). */
const SECRET_QUERY_KEY = /token|secret|key|pass|auth|session|sig|credential|code/i;

/**
 * `/v1/data/wallets/balances?per_page=500&page=2`: the path with its query, for logs and for the
 * messages of refused requests (a 400 is most often about a query value). Values of parameters
 * whose names suggest a credential are shown as `[redacted]`.
 */
export function pathWithQuery(url: URL): string {
  if (url.search === '' || url.search === '?') return url.pathname;
  const parts = url.search.slice(1).split('&').map((part) => {
    const eq = part.indexOf('=');
    if (eq < 0) return part;
    let name: string;
    try {
      name = decodeURIComponent(part.slice(0, eq).replace(/\+/g, ' '));
    } catch {
      name = part.slice(0, eq);
    }
    return SECRET_QUERY_KEY.test(name) ? `${part.slice(0, eq)}=[redacted]` : part;
  });
  return `${url.pathname}?${parts.join('&')}`;
}

/** How much of the gateway's own explanation a message or log line carries. */
export const ERROR_DETAIL_MAX_CHARS = 300;

/** JSON fields that hold the gateway's explanation, most specific first. */
const EXPLANATION_FIELDS = ['message', 'error_description', 'error', 'detail', 'title', 'reason'] as const;

/**
 * The gateway's own words about a request it refused (the `message` or `error` of a JSON body,
 * else the body's text), with credentials masked and cut to ERROR_DETAIL_MAX_CHARS; undefined
 * for an empty body or one that says nothing (`{}`). Never call it on a successful token response.
 *
 * @example gatewayErrorDetail('{"code":400,"message":"per_page must be an integer from 1 to 100"}')
 *   // 'per_page must be an integer from 1 to 100'
 */
export function gatewayErrorDetail(body: string): string | undefined {
  // Bounded before any work: an error page can be megabytes of HTML.
  const text = body.length > 65_536 ? body.slice(0, 65_536) : body;
  if (text.trim() === '') return undefined;
  let detail: string | undefined;
  try {
    detail = explanationOf(JSON.parse(text) as unknown);
  } catch {
    // An HTML error page: its words without the markup.
    detail = /^\s*</.test(text) ? text.replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ').replace(/<[^>]*>/g, ' ') : text;
  }
  if (detail === undefined) return undefined;
  const flat = maskCredentials(detail.replace(/\p{Cc}+/gu, ' ').replace(/\s+/g, ' ').trim());
  if (flat === '') return undefined;
  return flat.length > ERROR_DETAIL_MAX_CHARS ? `${flat.slice(0, ERROR_DETAIL_MAX_CHARS - 1)}…` : flat;
}

function explanationOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return value === null ? undefined : String(value);
  if (!Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const said = EXPLANATION_FIELDS.map((field) => record[field])
      .map((field) => (typeof field === 'string' ? field : field !== null && typeof field === 'object' && !Array.isArray(field) ? explanationOf(field) : undefined))
      .filter((field): field is string => field !== undefined && field.trim() !== '');
    // `{"error":"invalid_request","error_description":"…"}` says most in both.
    if (said.length > 0) return [...new Set(said)].slice(0, 2).join(': ');
    if (Object.keys(record).length === 0) return undefined;
  } else if (value.length === 0) return undefined;
  return JSON.stringify(value);
}

/**
 * Masks what could be a credential in the gateway's words: the values registered as secret (the
 * API secret, tokens in use), `Bearer …`-style values, `secret=…`/`"token": "…"` pairs, passwords
 * in URLs, and long token-like runs of letters and digits.
 */
export function maskCredentials(text: string): string {
  return maskSecretValues(maskUrlPasswords(text))
    .replace(/\b(Bearer|Basic|Digest)\s+[^\s"',;]{6,}/gi, '$1 [redacted]')
    .replace(
      /\b([\w-]*(?:secret|token|password|passwd|authorization|api[-_]?key|session|signature)[\w-]*)(["']?\s*[:=]\s*["']?)(?!\[redacted\]|(?:Bearer|Basic|Digest)\s)[^\s"',&;}]+/gi,
      '$1$2[redacted]',
    )
    .replace(/(?=[A-Za-z0-9_.~+=-]*\d)(?=[A-Za-z0-9_.~+=-]*[A-Za-z])(?<![A-Za-z0-9_.~+=-])[A-Za-z0-9_.~+=-]{24,}/g, '[redacted]');
}

/** `; the gateway said: "…"` for a message, or nothing when the gateway said nothing. */
export function gatewaySaid(detail: string | undefined): string {
  return detail === undefined ? '' : `; the gateway said: "${detail}"`;
}
