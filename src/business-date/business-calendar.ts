import { formatDuration } from './duration.js';
import { addDays, instantOfWall, localDateOf, wallOfDate } from './zoned-time.js';

/**
 * Glossary.
 * - business date D: the accounting day a balance belongs to (YYYY-MM-DD).
 * - cut-off of D: the instant D ends: the first instant after 00:00 local on D whose local time is
 *   RECON_CUTOFF (with 00:00, midnight between D and D+1; with 17:00, 17:00 on D).
 * - period of D: from the cut-off of D-1 (inclusive) to the cut-off of D (exclusive).
 * - capture window of D: RECON_CAPTURE_WINDOW either side of D's cut-off (inclusive); a capture that
 *   starts inside it is D's end-of-day snapshot, one that starts outside every window is intraday.
 * - drift: when a capture's reads finished minus the cut-off of its date as configured now, in
 *   seconds (negative: before the cut-off); see capture-drift.ts.
 */
export interface BusinessCalendarSettings {
  readonly timezone: string;
  /** Local time of the cut-off, `HH:MM`. */
  readonly cutoff: string;
  readonly captureWindowMs: number;
}

/** When a capture that starts at some instant counts, and for which business date. */
export interface CaptureTiming {
  businessDate: string;
  /** Inside the date's capture window: the date's end-of-day snapshot. */
  endOfDay: boolean;
  cutoffAt: Date;
  driftSeconds: number;
}

/** The capture window of one business date. */
export interface CaptureWindow {
  businessDate: string;
  cutoffAt: Date;
  opensAt: Date;
  closesAt: Date;
}

// Windows must not overlap: the shortest period (a spring-forward day) lasts 23 hours.
export const MAX_CAPTURE_WINDOW_MS = 11 * 3_600_000;

/** Business dates, cut-offs and capture windows of one configuration; pure, clock-free. */
export class BusinessCalendar {
  readonly #timezone: string;
  readonly #cutoffHour: number;
  readonly #cutoffMinute: number;
  readonly #windowMs: number;
  readonly #cutoffs = new Map<string, number>();

  constructor(settings: BusinessCalendarSettings) {
    const match = /^(\d{2}):(\d{2})$/.exec(settings.cutoff);
    if (!match || Number(match[1]) > 23 || Number(match[2]) > 59) throw new RangeError(`cut-off must be HH:MM from 00:00 to 23:59, got "${settings.cutoff}"`);
    if (!(settings.captureWindowMs > 0 && settings.captureWindowMs <= MAX_CAPTURE_WINDOW_MS)) {
      throw new RangeError(`capture window must be more than 0 and at most 11 hours, got ${settings.captureWindowMs} ms`);
    }
    this.#timezone = settings.timezone;
    this.#cutoffHour = Number(match[1]);
    this.#cutoffMinute = Number(match[2]);
    this.#windowMs = settings.captureWindowMs;
  }

  get timezone(): string {
    return this.#timezone;
  }

  get captureWindowMs(): number {
    return this.#windowMs;
  }

  /** The instant business date `date` ends. */
  cutoffOf(date: string): Date {
    let cached = this.#cutoffs.get(date);
    if (cached === undefined) {
      const midnightCutoff = this.#cutoffHour === 0 && this.#cutoffMinute === 0;
      // "After the start of D": a 00:00 cut-off is the midnight that ends D, not the one that starts it.
      const wall = wallOfDate(midnightCutoff ? addDays(date, 1) : date) + (this.#cutoffHour * 60 + this.#cutoffMinute) * 60_000;
      cached = instantOfWall(wall, this.#timezone);
      // A calendar lives as long as its configuration: one entry per date it was asked about.
      this.#cutoffs.set(date, cached);
    }
    return new Date(cached);
  }

  /** The business date whose period contains the instant. */
  businessDateOf(instant: Date): string {
    const calendarDate = localDateOf(instant.getTime(), this.#timezone);
    return instant.getTime() < this.cutoffOf(calendarDate).getTime() ? calendarDate : addDays(calendarDate, 1);
  }

  /** The latest business date whose cut-off is at or before the instant: the newest closed day. */
  latestClosedDate(instant: Date): string {
    return addDays(this.businessDateOf(instant), -1);
  }

  windowOf(date: string): CaptureWindow {
    const cutoffAt = this.cutoffOf(date);
    return {
      businessDate: date,
      cutoffAt,
      opensAt: new Date(cutoffAt.getTime() - this.#windowMs),
      closesAt: new Date(cutoffAt.getTime() + this.#windowMs),
    };
  }

  /**
   * What a capture starting at `instant` serves: inside a window, that date's end of day;
   * otherwise an intraday capture of the date whose period contains it.
   */
  classify(instant: Date): CaptureTiming {
    const date = this.businessDateOf(instant);
    const t = instant.getTime();
    const previous = addDays(date, -1);
    const previousCutoff = this.cutoffOf(previous).getTime();
    if (t - previousCutoff <= this.#windowMs) return timing(previous, true, previousCutoff, t);
    const cutoff = this.cutoffOf(date).getTime();
    return timing(date, cutoff - t <= this.#windowMs, cutoff, t);
  }

  /** The business date whose cut-off is nearest to an instant, with the distance to it. */
  nearestCutoff(instant: Date): { businessDate: string; cutoffAt: Date; distanceMs: number } {
    const date = this.businessDateOf(instant);
    const t = instant.getTime();
    const before = this.cutoffOf(addDays(date, -1)).getTime();
    const after = this.cutoffOf(date).getTime();
    return t - before <= after - t
      ? { businessDate: addDays(date, -1), cutoffAt: new Date(before), distanceMs: t - before }
      : { businessDate: date, cutoffAt: new Date(after), distanceMs: after - t };
  }
}

function timing(businessDate: string, endOfDay: boolean, cutoffMs: number, startMs: number): CaptureTiming {
  return { businessDate, endOfDay, cutoffAt: new Date(cutoffMs), driftSeconds: Math.round((startMs - cutoffMs) / 1000) };
}

/**
 * How a capture stands to its business date, for people:
 * `2026-11-20, end of day, 5 min before cut-off` or `2026-11-20, intraday`.
 */
export function describeCaptureTiming(businessDate: string, endOfDay: boolean | null, driftSeconds: number | null): string {
  if (!endOfDay) return `${businessDate}, intraday`;
  if (driftSeconds === null) return `${businessDate}, end of day`;
  if (driftSeconds === 0) return `${businessDate}, end of day, at the cut-off`;
  return `${businessDate}, end of day, ${formatDuration(driftSeconds * 1000)} ${driftSeconds < 0 ? 'before' : 'after'} cut-off`;
}
