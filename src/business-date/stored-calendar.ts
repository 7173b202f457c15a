import { sql, type Kysely } from 'kysely';
import type { Config } from '../config/index.js';
import { ConfigError } from '../errors.js';
import type { Database } from '../db/database.types.js';

/** The business calendar a database holds (its latest rules), as the configuration states them. */
export interface CalendarRules {
  timezone: string;
  cutoff: string;
  captureWindowMs: number;
  booksDeadlineMs: number;
  statementDeadlineMs: number;
}

// Before any business date: the first recorded rules hold for every date.
const FROM_THE_START = '0001-01-01';

export function rulesOfConfig(config: Pick<Config, 'timezone' | 'cutoff' | 'captureWindowMs' | 'booksDeadlineMs' | 'statementDeadlineMs'>): CalendarRules {
  return { timezone: config.timezone, cutoff: config.cutoff, captureWindowMs: config.captureWindowMs, booksDeadlineMs: config.booksDeadlineMs, statementDeadlineMs: config.statementDeadlineMs };
}

/** The calendar the database holds now (its latest effective rules), undefined before one is recorded. */
export async function storedCalendar(db: Kysely<Database>): Promise<(CalendarRules & { effectiveFrom: string }) | undefined> {
  const { rows } = await sql<{ effective_from: string; timezone: string; cutoff: string; capture_window_ms: string; books_deadline_ms: string; statement_deadline_ms: string }>`
    select effective_from::text as effective_from, timezone, cutoff, capture_window_ms::text as capture_window_ms, books_deadline_ms::text as books_deadline_ms, statement_deadline_ms::text as statement_deadline_ms
    from business_calendar order by effective_from desc limit 1`.execute(db);
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    effectiveFrom: row.effective_from,
    timezone: row.timezone,
    cutoff: row.cutoff,
    captureWindowMs: Number(row.capture_window_ms),
    booksDeadlineMs: Number(row.books_deadline_ms),
    statementDeadlineMs: Number(row.statement_deadline_ms),
  };
}

/** Records the configuration's calendar when the database holds none yet (the first worker to start); true when it did. */
export async function recordCalendarIfAbsent(db: Kysely<Database>, config: Config, at: Date): Promise<boolean> {
  const rules = rulesOfConfig(config);
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
  { key: 'captureWindowMs', variable: 'RECON_CAPTURE_WINDOW', show: (v) => `${Number(v) / 1000} s` },
  { key: 'booksDeadlineMs', variable: 'RECON_BOOKS_DEADLINE', show: (v) => `${Number(v) / 1000} s` },
  { key: 'statementDeadlineMs', variable: 'RECON_STATEMENT_DEADLINE', show: (v) => `${Number(v) / 1000} s` },
];

/** Each setting where the configuration differs from the database's calendar, said with both values. */
export function calendarDifferences(stored: CalendarRules, configured: CalendarRules): string[] {
  return SETTINGS.filter(({ key }) => stored[key] !== configured[key]).map(
    ({ key, variable, show }) => `${variable} is ${show(configured[key])} here, the database's calendar says ${show(stored[key])}`,
  );
}

/**
 * A worker whose configuration differs from the database's calendar would split a night into two
 * business dates with the workers that follow it: it refuses to start (exit 2), naming both values.
 */
export async function assertWorkerFollowsCalendar(db: Kysely<Database>, config: Config, at: Date): Promise<void> {
  await recordCalendarIfAbsent(db, config, at);
  const stored = await storedCalendar(db);
  if (stored === undefined) return;
  const differences = calendarDifferences(stored, rulesOfConfig(config));
  if (differences.length === 0) return;
  throw new ConfigError(
    `This worker's configuration differs from the business calendar of the database (effective from ${stored.effectiveFrom === FROM_THE_START ? 'the start' : stored.effectiveFrom}): ${differences.join('; ')}. ` +
      'Workers that disagree split a night into two business dates, so it does not start: configure it as the database says (recorded by the first worker that started on it). ' +
      'To change the calendar of the whole fleet, stop every worker, delete the row of the table business_calendar, and start them with the new settings: the first one records them.',
    differences,
  );
}
