import type { IssuedToken } from './token-response.js';

/** Renew this long before a known expiry, so a token does not lapse between check and use. */
export const MAX_RENEWAL_SKEW_MS = 30_000;
/** ...but never more than this share of the token's lifetime, so short-lived tokens stay usable. */
export const RENEWAL_SKEW_SHARE = 0.1;
/** Renewals after a revocation allowed per client (one client serves one account's run). */
export const DEFAULT_MAX_REVOCATIONS = 20;

interface HeldToken {
  value: string;
  renewAt: number | undefined;
}

/** What the store knows of one token's use: it decides what a 401 to it means. */
interface TokenUse {
  /** The gateway accepted it at least once: a later 401 is a revocation, not bad credentials. */
  accepted: boolean;
  inFlight: number;
  /** Woken each time a request with this token ends. */
  waiters: Array<() => void>;
}

/**
 * What a 401 to a token means:
 * - `retry`: the token had served requests, so it expired or was revoked; the current (renewed)
 *   token is to be used for the repeat.
 * - `refused-on-first-use`: no request with it was ever accepted — bad credentials or a wrong
 *   Authorization scheme; renewing would only repeat the refusal.
 * - `too-many-revocations`: the run already renewed `maxRevocations` revoked tokens.
 */
export type RefusalVerdict = 'retry' | 'refused-on-first-use' | 'too-many-revocations';

export interface TokenStoreOptions {
  now?: () => number;
  maxRevocations?: number;
  /** Told of every token issued (the logger masks its value) and, on `clear`, of each again to forget it. */
  onIssued?: (value: string) => void;
  onForgotten?: (value: string) => void;
}

/**
 * Holds the client's access token in memory only and renews it. Renewal is single-flight:
 * however many requests find the token missing, stale or revoked at once, one token request is
 * sent and they all wait for it.
 */
export class TokenStore {
  readonly #issue: () => Promise<IssuedToken>;
  readonly #now: () => number;
  readonly #maxRevocations: number;
  readonly #onIssued: (value: string) => void;
  readonly #onForgotten: (value: string) => void;
  readonly #uses = new Map<string, TokenUse>();
  #held: HeldToken | undefined;
  #renewal: Promise<string> | undefined;
  #revocations = 0;

  constructor(issue: () => Promise<IssuedToken>, options: TokenStoreOptions = {}) {
    this.#issue = issue;
    this.#now = options.now ?? Date.now;
    this.#maxRevocations = options.maxRevocations ?? DEFAULT_MAX_REVOCATIONS;
    this.#onIssued = options.onIssued ?? (() => undefined);
    this.#onForgotten = options.onForgotten ?? (() => undefined);
  }

  /** Tokens the gateway revoked (refused after serving) that this store renewed. */
  get revocations(): number {
    return this.#revocations;
  }

  /** The current token, renewing it first when there is none or it is about to expire. */
  get(): Promise<string> {
    const held = this.#held;
    if (held && (held.renewAt === undefined || this.#now() < held.renewAt)) return Promise.resolve(held.value);
    return this.#renew();
  }

  /** Marks a request with `token` as sent; `finish` or `refused` must follow. */
  begin(token: string): void {
    this.#use(token).inFlight++;
  }

  /** A request with `token` ended without a 401; `accepted` when the gateway answered 2xx. */
  finish(token: string, accepted: boolean): void {
    const use = this.#use(token);
    if (accepted) use.accepted = true;
    this.#end(use);
  }

  /**
   * A request with `token` got 401. When no request with it has been accepted yet but others
   * are still in flight, waits for them: with many requests sent at once, one refusal may
   * arrive before the acceptance that proves the token was good.
   */
  async refused(token: string): Promise<RefusalVerdict> {
    const use = this.#use(token);
    this.#end(use);
    while (!use.accepted && use.inFlight > 0) await new Promise<void>((resolve) => use.waiters.push(resolve));
    if (!use.accepted) return 'refused-on-first-use';
    if (this.#held?.value === token) {
      // Only the held token counts and is dropped: the 401s of the other requests in flight with
      // it then find the renewed token and repeat with it, without a renewal of their own.
      if (this.#revocations >= this.#maxRevocations) return 'too-many-revocations';
      this.#revocations++;
      this.#held = undefined;
    }
    return 'retry';
  }

  /** Drops every token (client closed). */
  clear(): void {
    this.#held = undefined;
    for (const value of this.#uses.keys()) this.#onForgotten(value);
    this.#uses.clear();
  }

  #use(token: string): TokenUse {
    let use = this.#uses.get(token);
    if (!use) {
      use = { accepted: false, inFlight: 0, waiters: [] };
      this.#uses.set(token, use);
    }
    return use;
  }

  #end(use: TokenUse): void {
    use.inFlight = Math.max(0, use.inFlight - 1);
    for (const wake of use.waiters.splice(0)) wake();
  }

  #renew(): Promise<string> {
    // The renewed value is returned directly (not re-checked), so a token that is stale on
    // arrival is still used once instead of looping.
    this.#renewal ??= (async () => {
      try {
        const issuedAt = this.#now();
        const token = await this.#issue();
        this.#onIssued(token.value);
        // Records are kept until `clear`: a request that took a token just before it was
        // replaced must still find that it had been accepted. A run holds a handful of tokens.
        this.#use(token.value);
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
