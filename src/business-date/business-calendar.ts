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
 * - drift: when a capture's reads finished minus the cut-off its run was captured against, in
 *   seconds (negative: before the cut-off); see capture-drift.ts.
 * - rules of D: the calendar (time zone, cut-off, window) in force for D; a database's calendar may
 *   change from a business date on (`calendar set --from`), earlier dates keep theirs.
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
  /** The time zone the cut-off was read in: kept with the run, so its date is read by these rules later. */
  timezone: string;
}

/** The capture window of one business date. */
export interface CaptureWindow {
  businessDate: string;
  /** The time zone of the rules the window follows (absent in a window carried by a job queued before jobs carried it). */
  timezone?: string;
  cutoffAt: Date;
  opensAt: Date;
  closesAt: Date;
}

// Windows must not overlap: the shortest period (a spring-forward day) lasts 23 hours.
export const MAX_CAPTURE_WINDOW_MS = 11 * 3_600_000;

/** Rules that hold from a business date on (a later `calendar set`), until the next such rules. */
export interface DatedCalendarSettings extends BusinessCalendarSettings {
  /** The first business date these rules hold for (YYYY-MM-DD). */
  readonly effectiveFrom: string;
}

interface Rules {
  readonly effectiveFrom: string;
  readonly timezone: string;
  readonly cutoff: string;
  readonly hour: number;
  readonly minute: number;
  readonly windowMs: number;
}

// Before every business date: the first rules hold for every date before a later version.
const FROM_THE_START = '0001-01-01';

function rulesOf(settings: BusinessCalendarSettings, effectiveFrom: string): Rules {
  const match = /^(\d{2}):(\d{2})$/.exec(settings.cutoff);
  if (!match || Number(match[1]) > 23 || Number(match[2]) > 59) throw new RangeError(`cut-off must be HH:MM from 00:00 to 23:59, got "${settings.cutoff}"`);
  if (!(settings.captureWindowMs > 0 && settings.captureWindowMs <= MAX_CAPTURE_WINDOW_MS)) {
    throw new RangeError(`capture window must be more than 0 and at most 11 hours, got ${settings.captureWindowMs} ms`);
  }
  return { effectiveFrom, timezone: settings.timezone, cutoff: settings.cutoff, hour: Number(match[1]), minute: Number(match[2]), windowMs: settings.captureWindowMs };
}

/**
 * Business dates, cut-offs and capture windows; pure, clock-free. One set of rules, or several
 * each effective from a business date (the database's calendar after `calendar set --from`):
 * every date is read by the rules in force for it, so a change never re-reads earlier dates.
 */
export class BusinessCalendar {
  // Ascending by effectiveFrom; the first holds from the start.
  readonly #versions: readonly Rules[];
  readonly #cutoffs = new Map<string, number>();

  constructor(settings: BusinessCalendarSettings, later: readonly DatedCalendarSettings[] = []) {
    const sorted = [...later].sort((a, b) => a.effectiveFrom.localeCompare(b.effectiveFrom));
    this.#versions = [rulesOf(settings, FROM_THE_START), ...sorted.map((v) => rulesOf(v, v.effectiveFrom))];
  }

  /** The time zone of the latest rules: the one new dates are read in. */
  get timezone(): string {
    return this.#latest.timezone;
  }

  /** The capture window of the latest rules. */
  get captureWindowMs(): number {
    return this.#latest.windowMs;
  }

  get #latest(): Rules {
    return this.#versions[this.#versions.length - 1]!;
  }

  /** The rules business date `date` is read by: time zone, cut-off, capture window and since when. */
  rulesFor(date: string): DatedCalendarSettings {
    const rules = this.#rulesIndex(date);
    const v = this.#versions[rules]!;
    return { effectiveFrom: v.effectiveFrom, timezone: v.timezone, cutoff: v.cutoff, captureWindowMs: v.windowMs };
  }

  #rulesIndex(date: string): number {
    for (let i = this.#versions.length - 1; i > 0; i--) if (date >= this.#versions[i]!.effectiveFrom) return i;
    return 0;
  }

  /** The instant business date `date` ends. */
  cutoffOf(date: string): Date {
    let cached = this.#cutoffs.get(date);
    if (cached === undefined) {
      cached = cutoffBy(this.#versions[this.#rulesIndex(date)]!, date);
      // A calendar lives as long as its configuration: one entry per date it was asked about.
      this.#cutoffs.set(date, cached);
    }
    return new Date(cached);
  }

  /** The business date whose period contains the instant: the first date whose cut-off is after it. */
  businessDateOf(instant: Date): string {
    const t = instant.getTime();
    let date = dateBy(this.#versions[this.#versions.length - 1]!, instant);
    if (this.#versions.length === 1) return date;
    // Across a change the rules of a date's neighbour decide where it starts (a day made longer or
    // shorter by the change): step to the first date whose cut-off is after the instant.
    date = dateBy(this.#versions[this.#rulesIndex(date)]!, instant);
    for (let i = 0; i < 4 && this.cutoffOf(addDays(date, -1)).getTime() > t; i++) date = addDays(date, -1);
    for (let i = 0; i < 4 && this.cutoffOf(date).getTime() <= t; i++) date = addDays(date, 1);
    return date;
  }

  /** The latest business date whose cut-off is at or before the instant: the newest closed day. */
  latestClosedDate(instant: Date): string {
    return addDays(this.businessDateOf(instant), -1);
  }

  windowOf(date: string): CaptureWindow {
    const cutoffAt = this.cutoffOf(date);
    const rules = this.#versions[this.#rulesIndex(date)]!;
    const windowMs = rules.windowMs;
    return {
      businessDate: date,
      timezone: rules.timezone,
      cutoffAt,
      opensAt: new Date(cutoffAt.getTime() - windowMs),
      closesAt: new Date(cutoffAt.getTime() + windowMs),
    };
  }

  /**
   * What a capture starting at `instant` serves: inside a window, that date's end of day;
   * otherwise an intraday capture of the date whose period contains it.
   */
  classify(instant: Date): CaptureTiming {
    const date = this.businessDateOf(instant);
    const t = instant.getTime();
    const previous = this.windowOf(addDays(date, -1));
    if (t <= previous.closesAt.getTime()) return timing(previous.businessDate, true, previous.cutoffAt.getTime(), t, previous.timezone!);
    const current = this.windowOf(date);
    return timing(date, t >= current.opensAt.getTime(), current.cutoffAt.getTime(), t, current.timezone!);
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

function cutoffBy(rules: Rules, date: string): number {
  const midnightCutoff = rules.hour === 0 && rules.minute === 0;
  // "After the start of D": a 00:00 cut-off is the midnight that ends D, not the one that starts it.
  const wall = wallOfDate(midnightCutoff ? addDays(date, 1) : date) + (rules.hour * 60 + rules.minute) * 60_000;
  return instantOfWall(wall, rules.timezone);
}

function dateBy(rules: Rules, instant: Date): string {
  const calendarDate = localDateOf(instant.getTime(), rules.timezone);
  return instant.getTime() < cutoffBy(rules, calendarDate) ? calendarDate : addDays(calendarDate, 1);
}

function timing(businessDate: string, endOfDay: boolean, cutoffMs: number, startMs: number, timezone: string): CaptureTiming {
  return { businessDate, endOfDay, cutoffAt: new Date(cutoffMs), driftSeconds: Math.round((startMs - cutoffMs) / 1000), timezone };
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
