import { sleep } from './sleep.js';

/** Where a limiter takes time from; tests pass a fake one. */
export interface LimiterClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const systemLimiterClock: LimiterClock = { now: Date.now, sleep };

/**
 * Spaces request starts at least 1/maxRps seconds apart across everyone holding it. Spacing
 * (rather than a bursty bucket) keeps us under a gateway limit we cannot see.
 */
export class RateLimiter {
  #intervalMs: number;
  #nextSlot = 0;
  readonly #clock: LimiterClock;

  constructor(maxRps: number, clock: LimiterClock = systemLimiterClock) {
    this.#intervalMs = 1000 / maxRps;
    this.#clock = clock;
  }

  /** Lowers the rate to `maxRps` if that is stricter: two settings for one gateway, the tighter wins. */
  tighten(maxRps: number): void {
    this.#intervalMs = Math.max(this.#intervalMs, 1000 / maxRps);
  }

  /** Resolves when the caller may start its request; slots are reserved in call order. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const now = this.#clock.now();
    const slot = Math.max(now, this.#nextSlot);
    this.#nextSlot = slot + this.#intervalMs;
    if (slot > now) await this.#clock.sleep(slot - now, signal);
  }
}

/**
 * One limiter per gateway origin: GATEWAY_MAX_RPS is what the gateway allows us, so every
 * account's client talking to the same origin draws on the same budget.
 */
export class GatewayRateLimits {
  readonly #limiters = new Map<string, RateLimiter>();
  readonly #clock: LimiterClock;

  constructor(clock: LimiterClock = systemLimiterClock) {
    this.#clock = clock;
  }

  /** The limiter of `url`'s origin (scheme, host and port), created at `maxRps` on first use. */
  limiterFor(url: string | URL, maxRps: number): RateLimiter {
    const origin = new URL(url).origin;
    let limiter = this.#limiters.get(origin);
    if (limiter === undefined) {
      limiter = new RateLimiter(maxRps, this.#clock);
      this.#limiters.set(origin, limiter);
    } else {
      limiter.tighten(maxRps);
    }
    return limiter;
  }
}

/** The limits of this process, shared by every gateway client that is not given its own. */
export const processRateLimits = new GatewayRateLimits();
