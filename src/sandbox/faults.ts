import { createRandom } from './wallet-fixtures.js';

/** Misbehaviour the emulator can be told to show, for tests and demos of the client's resilience. */
export interface FaultSettings {
  /** Delay added before every answer, in milliseconds. */
  latencyMs: number;
  /** Probability (0..1) of answering 500, 502 or 503 instead. */
  failRate: number;
  /** Requests per second allowed before answering 429; 0 means unlimited. */
  rateLimit: number;
  /** Probability (0..1) of resetting the connection without answering. */
  dropRate: number;
  /** For this long after it is set (at start: after the emulator starts), every request answers 503. */
  outageMs: number;
}

export const NO_FAULTS: Readonly<FaultSettings> = Object.freeze({ latencyMs: 0, failRate: 0, rateLimit: 0, dropRate: 0, outageMs: 0 });

export const MAX_LATENCY_MS = 600_000;
export const MAX_OUTAGE_MS = 7 * 86_400_000;
export const MAX_RATE_LIMIT = 1_000_000;

/** What to do with one request instead of (or before) answering it. */
export type FaultDecision = { kind: 'none' } | { kind: 'drop' } | { kind: 'rate-limited' } | { kind: 'fail'; status: 500 | 502 | 503 };

/** The problem with one fault setting, phrased for the flag or option that carries it; undefined when valid. */
export function checkFaultSetting(name: keyof FaultSettings, value: number): string | undefined {
  switch (name) {
    case 'latencyMs':
      return Number.isInteger(value) && value >= 0 && value <= MAX_LATENCY_MS ? undefined : `must be an integer from 0 to ${MAX_LATENCY_MS} milliseconds`;
    case 'rateLimit':
      return Number.isInteger(value) && value >= 0 && value <= MAX_RATE_LIMIT
        ? undefined
        : `must be an integer from 0 (unlimited) to ${MAX_RATE_LIMIT} requests per second`;
    case 'outageMs':
      return Number.isInteger(value) && value >= 0 && value <= MAX_OUTAGE_MS ? undefined : `must be a duration from 0 to 7 days`;
    case 'failRate':
    case 'dropRate':
      return Number.isFinite(value) && value >= 0 && value <= 1 ? undefined : 'must be a probability from 0 to 1';
  }
}

/**
 * Decides each request's fate. Probabilities come from their own seeded stream, so a seed
 * replays the same sequence of faults for the same sequence of requests.
 */
export class FaultInjector {
  #settings: FaultSettings = { ...NO_FAULTS };
  readonly #random: () => number;
  readonly #monotonicMs: () => number;
  #tokens = 0;
  #refilledAt = 0;
  #outageFrom = 0;

  readonly #outageClockMs: () => number;

  /** `outageClockMs` times outages (tests pass their fake clock); the rate limit always runs on `monotonicMs`. */
  constructor(seed: number, monotonicMs: () => number = () => performance.now(), outageClockMs: () => number = monotonicMs) {
    // A different stream from the balances', so changing fault settings never changes the wallets.
    this.#random = createRandom((seed ^ 0x5eed_fa17) >>> 0);
    this.#monotonicMs = monotonicMs;
    this.#outageClockMs = outageClockMs;
  }

  get settings(): Readonly<FaultSettings> {
    return { ...this.#settings };
  }

  /** Replaces the given settings; throws a RangeError naming the first invalid one. */
  update(changes: Partial<FaultSettings>): void {
    for (const [name, value] of Object.entries(changes) as Array<[keyof FaultSettings, number | undefined]>) {
      if (value === undefined) continue;
      const problem = checkFaultSetting(name, value);
      if (problem) throw new RangeError(`${name} ${problem} (got ${value})`);
    }
    this.#settings = { ...this.#settings, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) };
    // A new limit starts with a full bucket, as a freshly configured gateway would.
    this.#tokens = this.#settings.rateLimit;
    this.#refilledAt = this.#monotonicMs();
    if (changes.outageMs !== undefined) this.#outageFrom = this.#outageClockMs();
  }

  decide(): FaultDecision {
    // Every draw happens on every request, so changing one setting never shifts another's sequence.
    const dropRoll = this.#random();
    const failRoll = this.#random();
    const statusRoll = this.#random();
    if (this.#settings.outageMs > 0 && this.#outageClockMs() - this.#outageFrom < this.#settings.outageMs) return { kind: 'fail', status: 503 };
    if (dropRoll < this.#settings.dropRate) return { kind: 'drop' };
    if (!this.#takeRateToken()) return { kind: 'rate-limited' };
    if (failRoll < this.#settings.failRate) return { kind: 'fail', status: ([500, 502, 503] as const)[Math.floor(statusRoll * 3)]! };
    return { kind: 'none' };
  }

  // A token bucket holding one second's worth of requests, refilled continuously.
  #takeRateToken(): boolean {
    const limit = this.#settings.rateLimit;
    if (limit === 0) return true;
    const now = this.#monotonicMs();
    this.#tokens = Math.min(limit, this.#tokens + ((now - this.#refilledAt) / 1000) * limit);
    this.#refilledAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
