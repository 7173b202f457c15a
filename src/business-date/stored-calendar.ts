import { sql, type Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import type { CalendarVersion } from '../config/config-types.js';
import { ConfigError, UsageError } from '../errors.js';
import type { Database } from '../db/database.types.js';
import { BusinessCalendar } from './business-calendar.js';
import { durationSetting, formatDuration } from './duration.js';
import { addDays } from './zoned-time.js';

/** The business calendar's rules: time zone, cut-off, capture window, books and statement deadlines. */
export interface CalendarRules {
  timezone: string;
  cutoff: string;
  captureWindowMs: number;
  booksDeadlineMs: number;
  statementDeadlineMs: number;
}

// Before any business date: the first recorded rules hold for every date.
export const FROM_THE_START = '0001-01-01';

export function rulesOfConfig(config: Pick<Config, 'timezone' | 'cutoff' | 'captureWindowMs' | 'booksDeadlineMs' | 'statementDeadlineMs'>): CalendarRules {
  return { timezone: config.timezone, cutoff: config.cutoff, captureWindowMs: config.captureWindowMs, booksDeadlineMs: config.booksDeadlineMs, statementDeadlineMs: config.statementDeadlineMs };
}

/** Every version of the database's calendar, oldest first; empty before one is recorded (or before the table exists). */
export async function calendarVersions(db: Kysely<Database>): Promise<CalendarVersion[]> {
  // `migrate` opens a database that may not have the table yet.
  const { rows: exists } = await sql<{ present: boolean }>`select to_regclass('business_calendar') is not null as present`.execute(db);
  if (!exists[0]?.present) return [];
  const { rows } = await sql<{ effective_from: string; timezone: string; cutoff: string; capture_window_ms: string; books_deadline_ms: string; statement_deadline_ms: string; recorded_at: Date }>`
    select effective_from::text as effective_from, timezone, cutoff, capture_window_ms::text as capture_window_ms, books_deadline_ms::text as books_deadline_ms,
      statement_deadline_ms::text as statement_deadline_ms, recorded_at
    from business_calendar order by effective_from`.execute(db);
  return rows.map((row) => ({
    effectiveFrom: row.effective_from,
    timezone: row.timezone,
    cutoff: row.cutoff,
    captureWindowMs: Number(row.capture_window_ms),
    booksDeadlineMs: Number(row.books_deadline_ms),
    statementDeadlineMs: Number(row.statement_deadline_ms),
    recordedAt: new Date(row.recorded_at),
  }));
}

/** The calendar the database holds now (its latest rules), undefined before one is recorded. */
export async function storedCalendar(db: Kysely<Database>): Promise<CalendarVersion | undefined> {
  return (await calendarVersions(db)).at(-1);
}

/**
 * The configuration a command works with: the database's calendar when it holds one (every
 * version, the latest as the configuration's fields), with each setting where the configuration
 * said otherwise; the configuration as it is when the database holds none yet.
 */
export async function followStoredCalendar(db: Kysely<Database>, config: Config): Promise<{ config: Config; differences: string[] }> {
  const versions = await calendarVersions(db);
  const latest = versions.at(-1);
  if (latest === undefined) return { config, differences: [] };
  const differences = calendarDifferences(latest, rulesOfConfig(config));
  return {
    config: { ...config, ...rulesOfConfig(latest), calendarVersions: versions },
    differences,
  };
}

/** Records the configuration's calendar when the database holds none yet (the first worker to start); true when it did. */
export async function recordCalendarIfAbsent(db: Kysely<Database>, rules: CalendarRules, at: Date): Promise<boolean> {
  const { rows } = await sql<{ effective_from: string }>`
    insert into business_calendar (effective_from, timezone, cutoff, capture_window_ms, books_deadline_ms, statement_deadline_ms, recorded_at)
    select ${FROM_THE_START}::date, ${rules.timezone}, ${rules.cutoff}, ${rules.captureWindowMs}, ${rules.booksDeadlineMs}, ${rules.statementDeadlineMs}, ${at}
    where not exists (select 1 from business_calendar)
    on conflict do nothing
    returning effective_from::text as effective_from`.execute(db);
  return rows.length > 0;
}

const SETTINGS: Array<{ key: keyof CalendarRules; variable: string; show: (v: number | string) => string }> = [
  { key: 'timezone', variable: 'RECON_TIMEZONE', show: String },
  { key: 'cutoff', variable: 'RECON_CUTOFF', show: String },
  { key: 'captureWindowMs', variable: 'RECON_CAPTURE_WINDOW', show: (v) => formatDuration(Number(v)) },
  { key: 'booksDeadlineMs', variable: 'RECON_BOOKS_DEADLINE', show: (v) => formatDuration(Number(v)) },
  { key: 'statementDeadlineMs', variable: 'RECON_STATEMENT_DEADLINE', show: (v) => formatDuration(Number(v)) },
];

/** Each setting where the configuration differs from the database's calendar, said with both values. */
export function calendarDifferences(stored: CalendarRules, configured: CalendarRules): string[] {
  return SETTINGS.filter(({ key }) => stored[key] !== configured[key]).map(
    ({ key, variable, show }) => `${variable} is ${show(configured[key])} here, the database's calendar says ${show(stored[key])}`,
  );
}

/** "from the start" or "from 2026-12-05". */
export function sinceWhen(effectiveFrom: string): string {
  return effectiveFrom === FROM_THE_START ? 'from the start' : `from ${effectiveFrom}`;
}

/** The `calendar set` command line that makes the database's calendar the configured one. */
function setCommandFor(configured: CalendarRules, stored: CalendarRules): string {
  const options = [
    configured.timezone !== stored.timezone ? `--timezone ${configured.timezone}` : '',
    configured.cutoff !== stored.cutoff ? `--cutoff ${configured.cutoff}` : '',
    configured.captureWindowMs !== stored.captureWindowMs ? `--capture-window ${durationSetting(configured.captureWindowMs)}` : '',
    configured.booksDeadlineMs !== stored.booksDeadlineMs ? `--books-deadline ${durationSetting(configured.booksDeadlineMs)}` : '',
    configured.statementDeadlineMs !== stored.statementDeadlineMs ? `--statement-deadline ${durationSetting(configured.statementDeadlineMs)}` : '',
  ].filter((o) => o !== '');
  return `wallet-recon calendar set ${options.join(' ')} --from DATE`;
}

/** The warning a command other than the worker prints when the configuration differs from the database's calendar. */
export function followedCalendarWarning(config: Config, differences: readonly string[]): string {
  const latest = config.calendarVersions?.at(-1);
  return (
    `the database's business calendar (${latest === undefined ? 'recorded' : sinceWhen(latest.effectiveFrom)}) differs from this configuration: ${differences.join('; ')}. ` +
    `This command follows the database's calendar; "wallet-recon calendar show" shows it, "wallet-recon calendar set … --from DATE" changes it.`
  );
}

/**
 * A worker whose configuration differs from the database's calendar would split a night into two
 * business dates with the workers that follow it: it refuses to start (exit 2), naming both values.
 * The first worker to start records its configuration as the calendar. Returns the configuration
 * to work with: the database's calendar, every version of it.
 */
export async function assertWorkerFollowsCalendar(db: Kysely<Database>, configured: Config, at: Date): Promise<Config> {
  await recordCalendarIfAbsent(db, rulesOfConfig(configured), at);
  const { config, differences } = await followStoredCalendar(db, configured);
  if (differences.length === 0) return config;
  const latest = config.calendarVersions!.at(-1)!;
  throw new ConfigError(
    `This worker's configuration differs from the business calendar of the database (${sinceWhen(latest.effectiveFrom)}): ${differences.join('; ')}. ` +
      'Workers that disagree split a night into two business dates, so it does not start: configure it as the database says ("wallet-recon calendar show"). ' +
      `To change the calendar of the whole fleet from a business date on, run "${setCommandFor(rulesOfConfig(configured), latest)}", then restart every worker with the new settings.`,
    differences,
  );
}

/**
 * Adds a version of the calendar, effective from business date `from`: dates before it keep the
 * rules they were read by. `from` must not have begun under the rules in force now (the current
 * business date is under way, its captures already planned); a version not yet in force may be
 * replaced. The first change of a database without a calendar records the configuration's rules
 * as the calendar up to `from`. Returns every version after the change.
 */
export async function setCalendarFrom(
  db: Kysely<Database>,
  configured: Config,
  change: Partial<CalendarRules>,
  from: string,
  at: Date,
): Promise<CalendarVersion[]> {
  return db.transaction().execute(async (trx) => {
    // One change at a time: two `calendar set` at once could each check against the other's absence.
    await sql`lock table business_calendar in exclusive mode`.execute(trx);
    await recordCalendarIfAbsent(trx, rulesOfConfig(configured), at);
    const versions = await calendarVersions(trx);
    const calendar = new BusinessCalendar(versions[0]!, versions.slice(1));
    const today = calendar.businessDateOf(at);
    if (from <= today) {
      throw new UsageError(
        `--from ${from} is not in the future: the current business date is ${today} (${calendar.rulesFor(today).timezone}), its captures are already planned by the rules in force. ` +
          `A change takes effect from ${addDays(today, 1)} at the earliest, so that no date is re-read by rules it was not captured under.`,
      );
    }
    const base = [...versions].reverse().find((v) => v.effectiveFrom <= from)!;
    const rules: CalendarRules = { ...rulesOfConfig(base), ...Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined)) };
    // Windows of neighbouring dates must not overlap: the first date of the new rules may be short.
    const proposed = new BusinessCalendar(versions[0]!, [...versions.slice(1).filter((v) => v.effectiveFrom !== from), { effectiveFrom: from, ...rules }]);
    const before = proposed.windowOf(addDays(from, -1));
    const first = proposed.windowOf(from);
    if (first.opensAt.getTime() <= before.closesAt.getTime()) {
      throw new UsageError(
        `With these rules the business date ${from} would end at ${first.cutoffAt.toISOString()}, too soon after ${addDays(from, -1)} ended (${before.cutoffAt.toISOString()}): ` +
          'their capture windows would overlap. Choose another --from, or a shorter --capture-window.',
      );
    }
    await sql`
      insert into business_calendar (effective_from, timezone, cutoff, capture_window_ms, books_deadline_ms, statement_deadline_ms, recorded_at)
      values (${from}::date, ${rules.timezone}, ${rules.cutoff}, ${rules.captureWindowMs}, ${rules.booksDeadlineMs}, ${rules.statementDeadlineMs}, ${at})
      on conflict (effective_from) do update set timezone = excluded.timezone, cutoff = excluded.cutoff, capture_window_ms = excluded.capture_window_ms,
        books_deadline_ms = excluded.books_deadline_ms, statement_deadline_ms = excluded.statement_deadline_ms, recorded_at = excluded.recorded_at`.execute(trx);
    return calendarVersions(trx);
  });
}
