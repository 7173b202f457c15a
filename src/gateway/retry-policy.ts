/**
 * When a failed attempt is worth repeating, and how long to wait first. Pure functions so the
 * rules are tested without a network; the loop that applies them lives in send-with-retry.ts.
 */

/** Statuses that say "try again later": timeouts, too early, rate limits and transient server faults. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Backoff never grows past this, whatever the attempt number. */
export const MAX_BACKOFF_MS = 30_000;

/** Whether an HTTP status is transient and the same request may be sent again. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/**
 * Exponential backoff with full jitter: a uniform delay in [0, min(cap, base·2^(retry−1))).
 * Full jitter spreads clients that failed together, so they do not return together.
 * `retry` is 1 for the first retry.
 */
export function backoffDelay(retry: number, baseMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

/**
 * The wait a Retry-After header asks for, in ms: delay-seconds or an HTTP-date (RFC 9110 §10.2.3).
 * A date in the past means "now" (0). Undefined when the header is absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only a date that names a weekday/month is an HTTP-date; Date.parse alone accepts "12".
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
