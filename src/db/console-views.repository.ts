import type { Kysely } from 'kysely';
import type { BusinessCalendar } from '../business-date/business-calendar.js';
import { capturedUnderOtherRules, driftFromCutoff } from '../business-date/capture-drift.js';
import type { CaptureDayStatus, Database } from './database.types.js';

/** How one account's business date was captured (capture_days), if anything was attempted. */
export interface CaptureOfDate {
  account: string;
  status: CaptureDayStatus;
  runId: number | null;
  attempts: number;
  cutoffDriftSeconds: number | null;
  /** The rules the capture was made under, when the calendar now reads its date otherwise. */
  capturedUnder?: string;
  endOfDay: boolean | null;
  lastError: string | null;
}

/**
 * The captures of a date, each one's drift measured from the cut-off its run was captured
 * against (the calendar's cut-off of the date for a run that kept none).
 */
export async function listCapturesOfDate(db: Kysely<Database>, businessDate: string, calendar: Pick<BusinessCalendar, 'cutoffOf' | 'rulesFor'>): Promise<CaptureOfDate[]> {
  const cutoffAt = calendar.cutoffOf(businessDate);
  const rows = await db
    .selectFrom('capture_days as d')
    .leftJoin('snapshot_runs as r', 'r.id', 'd.run_id')
    .select(['d.account', 'd.status', 'd.run_id', 'd.attempts', 'd.end_of_day', 'd.last_error', 'r.reads_finished_at', 'r.started_at', 'r.source', 'r.cutoff_at', 'r.cutoff_timezone'])
    .where('d.business_date', '=', businessDate)
    .execute();
  return rows.map((r) => ({
    account: r.account,
    status: r.status,
    runId: r.run_id,
    attempts: r.attempts,
    cutoffDriftSeconds: r.started_at === null ? null : driftFromCutoff(cutoffAt, { readsFinishedAt: r.reads_finished_at, startedAt: r.started_at, source: r.source, cutoffAt: r.cutoff_at }),
    capturedUnder: r.source === null ? capturedUnderOtherRules(calendar, businessDate, { cutoffAt: r.cutoff_at, cutoffTimezone: r.cutoff_timezone }) : undefined,
    endOfDay: r.end_of_day,
    lastError: r.last_error,
  }));
}

/** Whether the books of an account's business date arrived: how many currencies, from which import. */
export interface BooksOfDate {
  account: string;
  currencies: number;
  source: string;
  importId: number | null;
  importedAt: Date;
}

export async function listBooksOfDate(db: Kysely<Database>, businessDate: string): Promise<BooksOfDate[]> {
  // From the per-date state (reconciliation_days): one row per account, not a row per currency.
  const rows = await db
    .selectFrom('reconciliation_days')
    .select(['account', 'books_currencies', 'books_source', 'books_import_id', 'books_imported_at'])
    .where('business_date', '=', businessDate)
    .where('books_currencies', '>', 0)
    .execute();
  return rows.map((r) => ({ account: r.account, currencies: r.books_currencies, source: r.books_source ?? '', importId: r.books_import_id, importedAt: r.books_imported_at ?? new Date(0) }));
}
