import type { Kysely } from 'kysely';
import type { CaptureDayStatus, Database } from './database.types.js';

/** How one account's business date was captured (capture_days), if anything was attempted. */
export interface CaptureOfDate {
  account: string;
  status: CaptureDayStatus;
  runId: number | null;
  attempts: number;
  cutoffDriftSeconds: number | null;
  endOfDay: boolean | null;
  lastError: string | null;
}

export async function listCapturesOfDate(db: Kysely<Database>, businessDate: string): Promise<CaptureOfDate[]> {
  const rows = await db.selectFrom('capture_days').selectAll().where('business_date', '=', businessDate).execute();
  return rows.map((r) => ({ account: r.account, status: r.status, runId: r.run_id, attempts: r.attempts, cutoffDriftSeconds: r.cutoff_drift_seconds, endOfDay: r.end_of_day, lastError: r.last_error }));
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
