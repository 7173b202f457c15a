import type { IssuedToken } from './token-response.js';

/** Renew this long before a known expiry, so a token does not lapse between check and use. */
export const MAX_RENEWAL_SKEW_MS = 30_000;
/** ...but never more than this share of the token's lifetime, so short-lived tokens stay usable. */
export const RENEWAL_SKEW_SHARE = 0.1;

interface HeldToken {
  value: string;
  renewAt: number | undefined;
}

/**
 * Holds the client's access token in memory only and renews it. Renewal is single-flight:
 * however many requests find the token missing or stale at once, one token request is sent
 * and they all wait for it.
 */
export class TokenStore {
  readonly #issue: () => Promise<IssuedToken>;
  readonly #now: () => number;
  #held: HeldToken | undefined;
  #renewal: Promise<string> | undefined;

  constructor(issue: () => Promise<IssuedToken>, now: () => number = Date.now) {
    this.#issue = issue;
    this.#now = now;
  }

  /** The current token, renewing it first when there is none or it is about to expire. */
  get(): Promise<string> {
    const held = this.#held;
    if (held && (held.renewAt === undefined || this.#now() < held.renewAt)) return Promise.resolve(held.value);
    return this.#renew();
  }

  /**
   * Forgets `rejected` after the gateway answered 401 to it. Only that exact token is dropped:
   * when several requests fail with the same stale token, the first one's renewal is kept.
   */
  invalidate(rejected: string): void {
    if (this.#held?.value === rejected) this.#held = undefined;
  }

  /** Drops the token (client closed). */
  clear(): void {
    this.#held = undefined;
  }

  #renew(): Promise<string> {
    // The renewed value is returned directly (not re-checked), so a token that is stale on
    // arrival is still used once instead of looping.
    this.#renewal ??= (async () => {
      try {
        const issuedAt = this.#now();
        const token = await this.#issue();
        this.#held = { value: token.value, renewAt: renewalTime(issuedAt, token.expiresAt) };
        return token.value;
      } finally {
        this.#renewal = undefined;
      }
    })();
    return this.#renewal;
  }
}

function renewalTime(issuedAt: number, expiresAt: number | undefined): number | undefined {
  if (expiresAt === undefined) return undefined;
  const lifetime = Math.max(0, expiresAt - issuedAt);
  return expiresAt - Math.min(MAX_RENEWAL_SKEW_MS, lifetime * RENEWAL_SKEW_SHARE);
}
