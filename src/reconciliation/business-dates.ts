import type { AppContext } from '../app-context.js';
import { isCalendarDate, previousDate } from '../clock.js';
import { businessCalendarOf } from '../config/index.js';
import { UsageError } from '../errors.js';

/** Today's business date and the zone it is today in, for messages that refuse a later date. */
export interface BusinessToday {
  /** The business date whose period contains now (after RECON_CUTOFF, already the next day). */
  date: string;
  timezone: string;
}

/** The current business date (the one whose period contains now), from the context's clock. */
export function todayOf(ctx: Pick<AppContext, 'clock' | 'config'>): BusinessToday {
  return { date: businessCalendarOf(ctx.config).businessDateOf(ctx.clock.now()), timezone: ctx.config.timezone };
}

/** The latest business date whose cut-off has passed: the newest day that is complete. */
export function latestClosedDateOf(ctx: Pick<AppContext, 'clock' | 'config'>): string {
  return businessCalendarOf(ctx.config).latestClosedDate(ctx.clock.now());
}

/**
 * Checks a business date given on the command line; `flag` names it in the message. With
 * `notAfter`, a later date is refused: nobody can capture or reconcile a balance before its day.
 */
export function parseBusinessDate(value: string, flag: string, notAfter?: BusinessToday): string {
  if (!isCalendarDate(value)) throw new UsageError(`${flag} ${JSON.stringify(value)} is not a real date: use YYYY-MM-DD, for example 2026-11-20.`);
  if (notAfter !== undefined && value > notAfter.date) {
    throw new UsageError(`${flag} ${value} is in the future (the current business date is ${notAfter.date} in ${notAfter.timezone}): a balance cannot be captured before its day.`);
  }
  return value;
}

/**
 * Checks a `--from`/`--to` range: two real dates, the earlier first and, with `notAfter`,
 * neither after today. Example: `parseDateRange('2026-11-01', '2026-11-30')`.
 */
export function parseDateRange(from: string, to: string, notAfter?: BusinessToday): { from: string; to: string } {
  const first = parseBusinessDate(from, '--from');
  const last = parseBusinessDate(to, '--to');
  if (first > last) throw new UsageError(`--from ${first} is after --to ${last}: give the earlier date first.`);
  parseBusinessDate(last, '--to', notAfter);
  return { from: first, to: last };
}

/**
 * Sorted dates for people to read, consecutive days joined into ranges.
 * Example: `describeDates(['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-05'])` → `2026-11-01 to 2026-11-03, 2026-11-05`.
 */
export function describeDates(dates: readonly string[]): string {
  const runs: Array<[string, string]> = [];
  for (const date of dates) {
    const run = runs.at(-1);
    if (run !== undefined && previousDate(date) === run[1]) run[1] = date;
    else runs.push([date, date]);
  }
  return runs.map(([first, last]) => (first === last ? first : `${first} to ${last}`)).join(', ');
}
