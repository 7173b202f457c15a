import { got, RequestError } from 'got';
import { NotificationError } from '../../errors.js';
import { maskCredentials } from '../../gateway/gateway-messages.js';
import { parseRetryAfter } from '../../gateway/retry-policy.js';
import { maskUrlSecrets, secretPartsOfUrl } from './url-secrets.js';

// A receiver that takes longer than this is treated as down; the outbox tries again later.
const REQUEST_TIMEOUT_MS = 15_000;

const client = got.extend({
  retry: { limit: 0 },
  // A redirect could carry the body or signature somewhere else: a receiver answers itself.
  followRedirect: false,
  throwHttpErrors: false,
  responseType: 'text',
  timeout: { request: REQUEST_TIMEOUT_MS },
  headers: { 'user-agent': 'wallet-recon' },
});

/**
 * POSTs a JSON body once. 2xx is success; 408, 429 and 5xx are worth another attempt (after
 * Retry-After, when given); any other status is a refusal. `label` names the receiver in errors
 * and never contains the URL (a webhook URL is a credential); a receiver's answer quoted in an
 * error has every secret part of the URL masked (`secretPath`: the path is one, as Slack's).
 */
export async function postJson(
  url: string,
  body: string,
  headers: Record<string, string>,
  label: string,
  now: Date,
  signal?: AbortSignal,
  options: { secretPath: boolean } = { secretPath: false },
): Promise<void> {
  let status: number;
  let retryAfter: string | undefined;
  let excerpt: string;
  try {
    const response = await client.post(url, { body, headers: { 'content-type': 'application/json', ...headers }, signal });
    status = response.statusCode;
    retryAfter = typeof response.headers['retry-after'] === 'string' ? response.headers['retry-after'] : undefined;
    // Masked before it is cut: a cut could split a secret and leave its start readable.
    excerpt = maskCredentials(maskUrlSecrets(response.body, secretPartsOfUrl(url, options))).replace(/\s+/g, ' ').slice(0, 120);
  } catch (error) {
    const code = signal?.aborted ? 'stopped by shutdown' : error instanceof RequestError ? error.code : 'UNKNOWN';
    // Whether it is tried again is the caller's to say (the outbox does; `notify test` does not).
    throw new NotificationError(`${label} could not be reached (${code}).`, true, undefined, { cause: new Error(code) });
  }
  if (status >= 200 && status < 300) return;
  const retryable = status === 408 || status === 429 || status >= 500;
  const retryAfterMs = parseRetryAfter(retryAfter, now.getTime());
  throw new NotificationError(
    `${label} answered ${status}${excerpt ? ` (${excerpt})` : ''}${retryable ? '' : ': refused, not tried again'}.`,
    retryable,
    retryable ? retryAfterMs : undefined,
  );
}

/** The origin of a URL, for messages: never its path or query, which may hold a token. */
export function originOf(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
}
