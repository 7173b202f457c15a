import { randomBytes } from 'node:crypto';

export type TokenCheck = 'valid' | 'expired' | 'unknown';

/** Issued access tokens and when they expire, on the clock the sandbox was given. */
export class TokenStore {
  readonly #expiresAt = new Map<string, number>();
  readonly #now: () => Date;

  constructor(now: () => Date) {
    this.#now = now;
  }

  /** Issues an opaque random token valid for `ttlSeconds` from now. */
  issue(ttlSeconds: number): string {
    const nowMs = this.#now().getTime();
    // Forgetting expired tokens here keeps a long-running sandbox from growing without bound.
    for (const [token, expiresAt] of this.#expiresAt) if (expiresAt <= nowMs) this.#expiresAt.delete(token);
    const token = randomBytes(24).toString('base64url');
    this.#expiresAt.set(token, nowMs + ttlSeconds * 1000);
    return token;
  }

  check(token: string): TokenCheck {
    const expiresAt = this.#expiresAt.get(token);
    if (expiresAt === undefined) return 'unknown';
    return this.#now().getTime() < expiresAt ? 'valid' : 'expired';
  }

  revokeAll(): void {
    this.#expiresAt.clear();
  }
}
