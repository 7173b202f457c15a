/**
 * Where services take "now" from, and how they wait, so schedules, business dates, retries
 * within a capture window and staleness run on a fake clock in tests.
 */
export interface Clock {
  now(): Date;
  /** Waits `ms` of this clock's time; rejects with the signal's reason when it is aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

export const systemClock: Clock = {
  now: () => new Date(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      const onAbort = () => {
        clearTimeout(timer);
        reject(abortReason(signal!));
      };
      // setTimeout holds at most 2^31-1 ms; a longer wait is chained by the caller's loop.
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.max(0, Math.min(ms, 2_147_483_647)));
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};

/**
 * A clock that stays where it is put; tests move it by hand. Its `sleep` is virtual time:
 * the sleeper wakes on the next turn of the event loop with the clock moved to its wake-up
 * time (never backwards), so an hour of retries takes milliseconds and the order of wake-ups
 * follows their wake-up times.
 */
export class FixedClock implements Clock {
  #now: Date;
  readonly #sleepers: Array<{ wake: number; resolve: () => void }> = [];
  #draining = false;
  constructor(start: Date | string) {
    this.#now = new Date(start);
  }
  now(): Date {
    return new Date(this.#now);
  }
  set(to: Date | string): void {
    this.#now = new Date(to);
  }
  advance(ms: number): void {
    this.#now = new Date(this.#now.getTime() + ms);
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<void>((resolve, reject) => {
      const sleeper = { wake: this.#now.getTime() + Math.max(0, ms), resolve };
      const onAbort = () => {
        const index = this.#sleepers.indexOf(sleeper);
        if (index >= 0) this.#sleepers.splice(index, 1);
        reject(abortReason(signal!));
      };
      sleeper.resolve = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#sleepers.push(sleeper);
      this.#drainSoon();
    });
  }
  #drainSoon(): void {
    if (this.#draining) return;
    this.#draining = true;
    setImmediate(() => {
      this.#draining = false;
      this.#sleepers.sort((a, b) => a.wake - b.wake);
      const next = this.#sleepers.shift();
      if (next === undefined) return;
      if (next.wake > this.#now.getTime()) this.#now = new Date(next.wake);
      next.resolve();
      if (this.#sleepers.length > 0) this.#drainSoon();
    });
  }
}

/** The calendar date (YYYY-MM-DD) of an instant in an IANA time zone. */
export function businessDateOf(instant: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(instant);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** Whether a string is a real calendar date in YYYY-MM-DD form (rejects 2026-02-30). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** Every date from `from` to `to` inclusive, as YYYY-MM-DD strings. */
export function datesBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let d = new Date(`${from}T00:00:00Z`); d <= new Date(`${to}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + 1)) {
    out.push(d.toISOString().slice(0, 10));
  }
  return out;
}

/** The date before a YYYY-MM-DD date. */
export function previousDate(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - 1);
  return d.toISOString().slice(0, 10);
}
