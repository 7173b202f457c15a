import { createRequire } from 'node:module';
import type { CronExpression, CronExpressionParser as Parser } from 'cron-parser';
import type { BusinessCalendar, CaptureWindow } from '../business-date/business-calendar.js';
import { formatDuration } from '../business-date/duration.js';
import { zoneLabel } from '../business-date/local-time.js';
import { instantOfWall, wallClockOf } from '../business-date/zoned-time.js';

/** A scheduled slot and the business date it serves, fixed when it fires. */
export interface SlotService {
  slot: Date;
  window: CaptureWindow;
}

// A DST shift moves a wall time by at most two hours from where the same offset would put it.
const LOOK_BEHIND_MS = 3 * 3_600_000;

/**
 * cron-parser (and luxon, which it loads) only when a schedule is walked or an expression needs
 * its full check: every command validates RECON_SCHEDULE, and loading them cost each command that
 * never schedules (a snapshot, a report) about half a megabyte of code to read and compile.
 */
function cronParser(): typeof Parser {
  return (createRequire(import.meta.url)('cron-parser') as { CronExpressionParser: typeof Parser }).CronExpressionParser;
}

/** Each field's range, minute first (a seconds field, when given, is checked by cron-parser). */
const PLAIN_FIELD_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0, 59],
  [0, 23],
];

/**
 * Whether an expression is plainly valid without cron-parser: minute and hour `*` or a number in
 * range, every day of every month (`* * *`). That covers the default "55 23 * * *" and the usual
 * nightly schedules; anything else (ranges, steps, names, days that may not exist) gets the full check.
 * Exported for its tests: a plain expression wrongly sent to the full check gives the same answer,
 * only slower, so no other test would notice.
 */
export function isPlainDaily(fields: readonly string[]): boolean {
  if (fields.length !== 5 || fields[2] !== '*' || fields[3] !== '*' || fields[4] !== '*') return false;
  return PLAIN_FIELD_RANGES.every(([min, max], i) => fields[i] === '*' || (/^\d{1,2}$/.test(fields[i]!) && Number(fields[i]) >= min && Number(fields[i]) <= max));
}

/** Why a cron expression is not accepted, or undefined. Five fields, or six with seconds first. */
export function checkCronExpression(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return `must be a cron expression of 5 fields (minute hour day month weekday) or 6 with seconds first, such as "55 23 * * *" (got ${fields.length} field${fields.length === 1 ? '' : 's'})`;
  }
  if (isPlainDaily(fields)) return undefined;
  try {
    cronParser().parse(expression);
    return undefined;
  } catch (error) {
    return `is not a valid cron expression (${(error as Error).message})`;
  }
}

const DAY_MS = 86_400_000;

/**
 * The wall times (as UTC milliseconds) an expression matches strictly after `after`, in order.
 * A plain daily expression with a fixed minute and hour ("55 23 * * *", the usual nightly
 * schedule) is one wall time a day, counted here: walking it with cron-parser and luxon cost a
 * worker's start about a quarter of a second of CPU for the year its schedule check covers.
 */
function wallTimesAfter(expression: string, after: number): { next(): number } {
  const fields = expression.trim().split(/\s+/);
  if (isPlainDaily(fields) && fields[0] !== '*' && fields[1] !== '*') return dailyWallTimesAfter(Number(fields[0]), Number(fields[1]), after);
  const walls: CronExpression = cronParser().parse(expression, { currentDate: new Date(after), tz: 'UTC' });
  return { next: () => walls.next().getTime() };
}

/** The wall times of minute `minute` of hour `hour`, every day, strictly after `after`. Exported for its tests. */
export function dailyWallTimesAfter(minute: number, hour: number, after: number): { next(): number } {
  const offset = (hour * 60 + minute) * 60_000;
  // The last of them at or before `after`; each next() is a day on.
  let wall = Math.floor(after / DAY_MS) * DAY_MS + offset;
  if (wall > after) wall -= DAY_MS;
  return { next: () => (wall += DAY_MS) };
}

/**
 * The instants of a cron schedule in a time zone. The expression is matched against local
 * wall-clock time; a wall time the clocks jump over (DST gap) fires at the first instant after
 * the gap, one that occurs twice fires at its first occurrence only — the same rule as the
 * cut-off, so every local day has each of its slots exactly once.
 */
export class SlotSchedule {
  readonly expression: string;
  readonly timezone: string;

  constructor(expression: string, timezone: string) {
    const problem = checkCronExpression(expression);
    if (problem) throw new RangeError(`schedule "${expression}" ${problem}`);
    this.expression = expression;
    this.timezone = timezone;
  }

  /** The first slot strictly after an instant, or undefined when there is none. */
  nextAfter(instant: Date): Date | undefined {
    for (const slot of this.slotsAfter(instant)) return slot;
    return undefined;
  }

  /** Slots after `from` up to and including `to`, at most `limit` of them. */
  between(from: Date, to: Date, limit = 10_000): Date[] {
    const slots: Date[] = [];
    for (const slot of this.slotsAfter(from)) {
      if (slot > to || slots.length >= limit) break;
      slots.push(slot);
    }
    return slots;
  }

  /**
   * Every slot strictly after an instant, in order, each once. The expression was checked when
   * the schedule was built (cron-parser refuses one that can never match, such as 30 February).
   */
  *slotsAfter(instant: Date): Generator<Date> {
    let last = instant.getTime();
    // Walk wall times from a little before the instant's own: the instant a wall time maps to
    // never decreases as the wall time grows, so skipping those at or before `last` is enough
    // (two wall times in one DST gap map to the same instant and fire once).
    const walls = wallTimesAfter(this.expression, wallClockOf(last, this.timezone) - LOOK_BEHIND_MS);
    for (;;) {
      const slot = instantOfWall(walls.next(), this.timezone);
      if (slot <= last) continue;
      last = slot;
      yield new Date(slot);
    }
  }
}

/** What a slot serves: the business date whose cut-off is nearest to it. */
export function serviceOfSlot(calendar: BusinessCalendar, slot: Date): SlotService {
  return { slot, window: calendar.windowOf(calendar.nearestCutoff(slot).businessDate) };
}

// A fixed span (a year and a bit, every weekday and both DST changes) instead of "now":
// whether a schedule fits its windows does not depend on when the configuration is read.
const CHECK_FROM = new Date('2026-01-01T00:00:00Z');
const CHECK_TO = new Date('2027-02-01T00:00:00Z');

/**
 * Why a schedule does not fit the capture windows (a slot outside every window would capture
 * nothing useful), or undefined when each slot lies inside the window of its nearest cut-off.
 */
export function checkScheduleFitsWindows(schedule: SlotSchedule, calendar: BusinessCalendar): string | undefined {
  for (const slot of schedule.between(CHECK_FROM, CHECK_TO, 5_000)) {
    const nearest = calendar.nearestCutoff(slot);
    if (nearest.distanceMs > calendar.captureWindowMs) {
      const wall = new Date(wallClockOf(slot.getTime(), calendar.timezone)).toISOString();
      const local = wall.slice(11, 19);
      // A slot that fits every other day misses on the day the clocks change: name that day and the change.
      const before = zoneLabel(new Date(Math.min(slot.getTime(), nearest.cutoffAt.getTime()) - 86_400_000), calendar.timezone);
      const after = zoneLabel(new Date(Math.max(slot.getTime(), nearest.cutoffAt.getTime())), calendar.timezone);
      const day = before === after ? `on ${wall.slice(0, 10)}` : `on ${wall.slice(0, 10)}, when the clocks change from ${before} to ${after}`;
      return (
        `fires at ${local} (${calendar.timezone}) ${day}, ${formatDuration(nearest.distanceMs)} from the nearest cut-off, ` +
        `outside the capture window of ±${formatDuration(calendar.captureWindowMs)} (RECON_CAPTURE_WINDOW): a capture then would be no day's end-of-day balance. ` +
        `Move the schedule closer to RECON_CUTOFF or widen the window`
      );
    }
  }
  return undefined;
}
