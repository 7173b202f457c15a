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
  const rows = await db
    .selectFrom('expected_balances')
    .select((eb) => ['account', eb.fn.countAll<string>().as('currencies'), eb.fn.max('source').as('source'), eb.fn.max('import_id').as('import_id'), eb.fn.max('imported_at').as('imported_at')])
    .where('business_date', '=', businessDate)
    .groupBy('account')
    .execute();
  return rows.map((r) => ({ account: r.account, currencies: Number(r.currencies), source: r.source, importId: r.import_id, importedAt: r.imported_at }));
}
