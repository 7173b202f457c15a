import { describe, expect, it } from 'vitest';
import { backoffDelay, isRetryableStatus, MAX_BACKOFF_MS, parseRetryAfter } from '../../src/gateway/retry-policy.js';

describe('retry policy', () => {
  it('retries only transient statuses', () => {
    for (const status of [408, 425, 429, 500, 502, 503, 504]) expect(isRetryableStatus(status)).toBe(true);
    for (const status of [200, 301, 400, 401, 403, 404, 409, 413, 422, 501]) expect(isRetryableStatus(status)).toBe(false);
  });

  it('grows the backoff ceiling exponentially with full jitter, up to a cap', () => {
    expect(backoffDelay(1, 100, () => 0.999)).toBe(99);
    expect(backoffDelay(3, 100, () => 0.5)).toBe(200);
    expect(backoffDelay(1, 100, () => 0)).toBe(0);
    expect(backoffDelay(40, 500, () => 0.999)).toBeLessThan(MAX_BACKOFF_MS);
  });

  it('reads Retry-After in seconds', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
    expect(parseRetryAfter('120')).toBe(120_000);
  });

  it('reads Retry-After as an HTTP-date, a past date meaning now', () => {
    const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:27:00 GMT', now)).toBe(0);
  });

  it('ignores an absent or unreadable Retry-After', () => {
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-5')).toBeUndefined();
    expect(parseRetryAfter('1.5')).toBeUndefined();
    // Date.parse reads an ISO timestamp, but Retry-After allows only seconds or an HTTP-date.
    expect(parseRetryAfter('2026-11-20T10:00:00Z', 0)).toBeUndefined();
  });
});
