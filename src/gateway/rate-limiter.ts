import { sleep } from './sleep.js';

/**
 * Spaces request starts at least 1/maxRps seconds apart across the whole client. Spacing
 * (rather than a bursty bucket) keeps us under a gateway limit we cannot see.
 */
export class RateLimiter {
  readonly #intervalMs: number;
  #nextSlot = 0;

  constructor(maxRps: number) {
    this.#intervalMs = 1000 / maxRps;
  }

  /** Resolves when the caller may start its request; slots are reserved in call order. */
  async acquire(signal?: AbortSignal): Promise<void> {
    const now = Date.now();
    const slot = Math.max(now, this.#nextSlot);
    this.#nextSlot = slot + this.#intervalMs;
    if (slot > now) await sleep(slot - now, signal);
  }
}
