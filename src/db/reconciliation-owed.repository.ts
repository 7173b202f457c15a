import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, ReconciliationStatus, ReconciliationStatusView } from './database.types.js';
import { stateOnClock } from './state-on-clock.js';

type Db = Kysely<Database> | Transaction<Database>;

// The owed marks are written by triggers (see migration 2026-11-26T0001) whenever an input of a
// date changes; this module reads them, clears what a reconcile paid, and adds the marks no row
// change makes (a books deadline that passed).

export interface OwedDate {
  account: string;
  businessDate: string;
  reason: string;
}

/** Owed dates of some accounts up to a business date (inclusive), oldest first. */
export async function listOwedDates(db: Db, accounts: readonly string[], upTo: string): Promise<OwedDate[]> {
  if (accounts.length === 0) return [];
  const rows = await db
    .selectFrom('reconciliation_owed')
    .select(['account', 'business_date', 'reason'])
    .where('account', 'in', [...accounts])
    .where('business_date', '<=', upTo)
    .orderBy('business_date')
    .orderBy('account')
    .execute();
  return rows.map((r) => ({ account: r.account, businessDate: r.business_date, reason: r.reason }));
}

/** The marks a reconcile is about to pay, by account: read before its inputs, cleared after its write. */
export async function readOwedMarks(db: Db, accounts: readonly string[], businessDate: string): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const rows = await db
    .selectFrom('reconciliation_owed')
    .select(['account', 'seq'])
    .where('account', 'in', [...accounts])
    .where('business_date', '=', businessDate)
    .execute();
  return new Map(rows.map((r) => [r.account, String(r.seq)]));
}

/**
 * Clears the marks a reconcile read, in its transaction. A mark written again meanwhile (books
 * imported while the reconcile ran) has another seq and stays: the date is owed once more.
 */
export async function clearOwedMarks(db: Db, businessDate: string, marks: ReadonlyMap<string, string>): Promise<void> {
  for (const [account, seq] of marks) {
    await db.deleteFrom('reconciliation_owed').where('account', '=', account).where('business_date', '=', businessDate).where('seq', '=', seq).execute();
  }
}

/**
 * Clears the marks of account-dates that have nothing to reconcile: no snapshot, no recorded miss
 * and no results (books for a day never captured, say). Such a date is `not_captured`, not owed.
 */
export async function clearOwedWithoutSnapshot(db: Db, accounts: readonly string[]): Promise<void> {
  if (accounts.length === 0) return;
  await sql`
    delete from reconciliation_owed o
    where o.account = any(${[...accounts]}::text[])
      and not exists (select 1 from snapshot_runs r where r.account = o.account and r.business_date = o.business_date and r.status = 'succeeded')
      and not exists (select 1 from missed_dates m where m.account = o.account and m.business_date = o.business_date)
      and not exists (select 1 from reconciliation_results x where x.account = o.account and x.business_date = o.business_date)`.execute(db);
}

/** Marks a date owed (what the triggers do for row changes). */
export async function markOwed(db: Db, account: string, businessDate: string, reason: string): Promise<void> {
  await sql`select owe_reconciliation(${account}, ${businessDate}::date, ${reason})`.execute(db);
}

/** Account-dates whose stored results still await their books, oldest first. */
export async function listDatesAwaitingBooks(db: Db, accounts: readonly string[]): Promise<Array<{ account: string; businessDate: string }>> {
  return listDatesWithStatus(db, accounts, 'awaiting_books');
}

/** Account-dates with a stored result of this status (awaiting books, awaiting a statement), oldest first. */
export async function listDatesWithStatus(db: Db, accounts: readonly string[], status: ReconciliationStatus): Promise<Array<{ account: string; businessDate: string }>> {
  if (accounts.length === 0) return [];
  const rows = await db
    .selectFrom('reconciliation_results')
    .select(['account', 'business_date'])
    .distinct()
    .where('status', '=', status)
    .where('account', 'in', [...accounts])
    .orderBy('business_date')
    .execute();
  return rows.map((r) => ({ account: r.account, businessDate: r.business_date }));
}

/** Rows of the reconciliation_status view over a range (one account or all), by date and account; with `now`, states on that clock (stateOnClock). */
export async function listReconciliationStatus(db: Db, range: { from: string; to: string; accounts?: readonly string[]; now?: Date }): Promise<ReconciliationStatusView[]> {
  let query = db
    .selectFrom('reconciliation_status')
    .selectAll()
    .where('business_date', '>=', range.from)
    .where('business_date', '<=', range.to)
    .orderBy('business_date')
    .orderBy('account');
  if (range.accounts !== undefined) {
    if (range.accounts.length === 0) return [];
    query = query.where('account', 'in', [...range.accounts]);
  }
  const rows = await query.execute();
  const now = range.now;
  return now === undefined ? rows : rows.map((r) => ({ ...r, state: stateOnClock(r, now) }));
}

/**
 * The account-dates of a range that a report's summary needs besides its results: those owed
 * (results computed from inputs that changed since; not a state of the clock, so the view decides
 * it) and those of a bank statement. Only these, and only their keys: a year of 200 accounts is
 * 73,000 rows of the view, which a summary held whole for the few it reads (60 MB of a report).
 */
export async function listOwedOrBankDays(
  db: Db,
  range: { from: string; to: string; accounts?: readonly string[] },
): Promise<Array<{ account: string; businessDate: string; state: ReconciliationStatusView['state']; source: ReconciliationStatusView['source'] }>> {
  if (range.accounts !== undefined && range.accounts.length === 0) return [];
  let query = db
    .selectFrom('reconciliation_status')
    .select(['account', 'business_date', 'state', 'source'])
    .where('business_date', '>=', range.from)
    .where('business_date', '<=', range.to)
    .where((eb) => eb.or([eb('state', '=', 'owed'), eb('source', '=', 'bank')]))
    .orderBy('business_date')
    .orderBy('account');
  if (range.accounts !== undefined) query = query.where('account', 'in', [...range.accounts]);
  return (await query.execute()).map((r) => ({ account: r.account, businessDate: r.business_date, state: r.state, source: r.source }));
}

/** How many account-dates of a range are owed (results computed from inputs that changed since). */
export async function countOwedDates(db: Db, range: { from: string; to: string }, accounts: readonly string[]): Promise<number> {
  // 'owed' does not depend on the clock (only awaiting_books / no_books do), so the view decides it.
  if (accounts.length === 0) return 0;
  const row = await db
    .selectFrom('reconciliation_status')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('business_date', '>=', range.from)
    .where('business_date', '<=', range.to)
    .where('account', 'in', [...accounts])
    .where('state', '=', 'owed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
