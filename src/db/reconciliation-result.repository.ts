import { sql, type Kysely, type Transaction } from 'kysely';
import type { Insertable } from 'kysely';
import type { Database, ReconciliationResultRow, ReconciliationResultsTable } from './database.types.js';
import { currencyDecimals, rescaleAmount } from '../money/format-amount.js';
import { exactAmount } from './exact-amount.js';
import type { StoredResultRecord } from './result-records.js';

type Db = Kysely<Database> | Transaction<Database>;

// 17 bind parameters per row: 2,000 rows stay well under PostgreSQL's 65,535.
const BATCH_ROWS = 2_000;

/**
 * Waits for, then holds until the transaction ends, the lock of one account's reconciliation
 * of one business date. A transaction-level advisory lock: PGlite has it too.
 */
export async function lockReconciliationDay(db: Transaction<Database>, account: string, businessDate: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`wallet-recon:reconcile:${account}:${businessDate}`}, 0))`.execute(db);
}

/** A result as written: the reconciliation_results columns (the id is the table's). */
export type NewResultRow = Omit<Insertable<ReconciliationResultsTable>, 'id'>;

/** Replaces the results of some accounts for one business date (call inside a transaction). */
export async function replaceResultsForDate(
  db: Db,
  accounts: readonly string[],
  businessDate: string,
  rows: readonly NewResultRow[],
): Promise<void> {
  if (accounts.length > 0) {
    await db.deleteFrom('reconciliation_results').where('business_date', '=', businessDate).where('account', 'in', [...accounts]).execute();
  }
  for (let start = 0; start < rows.length; start += BATCH_ROWS) {
    await db.insertInto('reconciliation_results').values(rows.slice(start, start + BATCH_ROWS)).execute();
  }
}

/** Stored results over a date range (one account or all), by date, account and currency. */
export async function listResults(db: Db, range: { from: string; to: string; account?: string }): Promise<StoredResultRecord[]> {
  let query = db
    .selectFrom('reconciliation_results')
    .selectAll()
    .where('business_date', '>=', range.from)
    .where('business_date', '<=', range.to)
    .orderBy('business_date')
    .orderBy('account')
    .orderBy('currency', (o) => o.nullsFirst());
  if (range.account !== undefined) query = query.where('account', '=', range.account);
  return (await query.execute()).map(resultRecord);
}

/** Stored results of some accounts on one business date, by account and currency. */
export async function listResultsOfDate(db: Db, businessDate: string, accounts: readonly string[]): Promise<StoredResultRecord[]> {
  if (accounts.length === 0) return [];
  const rows = await db
    .selectFrom('reconciliation_results')
    .selectAll()
    .where('business_date', '=', businessDate)
    .where('account', 'in', [...accounts])
    .orderBy('account')
    .orderBy('currency', (o) => o.nullsFirst())
    .execute();
  return rows.map(resultRecord);
}

/** How many results one business date holds, and how many of them did not match (from the per-date state, reconciliation_days). */
export async function countResultsOfDate(db: Db, businessDate: string): Promise<{ results: number; notMatched: number }> {
  const row = await db
    .selectFrom('reconciliation_days')
    .select([sql<string>`coalesce(sum(results), 0)`.as('results'), sql<string>`coalesce(sum(not_matched), 0)`.as('not_matched')])
    .where('business_date', '=', businessDate)
    .executeTakeFirstOrThrow();
  return { results: Number(row.results), notMatched: Number(row.not_matched) };
}

/**
 * The stored results over a range, in the order of `listResults`, a page at a time: each page is
 * read after the last row of the one before (keyset on business date, account, currency; the
 * index reconciliation_results_date_idx), so memory holds one page whatever the range, on the
 * server and on the embedded database alike (where a server-side cursor is not available).
 */
export async function* pageResults(db: Db, range: { from: string; to: string; account?: string }, pageSize = 200): AsyncGenerator<StoredResultRecord[]> {
  let after: { date: string; account: string; currency: string } | undefined;
  for (;;) {
    let query = db
      .selectFrom('reconciliation_results')
      .selectAll()
      .where('business_date', '>=', range.from)
      .where('business_date', '<=', range.to)
      .orderBy('business_date')
      .orderBy('account')
      .orderBy(sql`coalesce(currency, '')`)
      .limit(pageSize);
    if (range.account !== undefined) query = query.where('account', '=', range.account);
    if (after !== undefined) query = query.where(sql<boolean>`(business_date, account, coalesce(currency, '')) > (${after.date}::date, ${after.account}, ${after.currency})`);
    const rows = await query.execute();
    if (rows.length === 0) return;
    const last = rows.at(-1)!;
    after = { date: last.business_date, account: last.account, currency: last.currency ?? '' };
    yield rows.map(resultRecord);
    if (rows.length < pageSize) return;
  }
}

/** A stored result row as the record reports and reconciliation read. */
export function resultRecord(r: ReconciliationResultRow): StoredResultRecord {
  return {
    account: r.account,
    businessDate: r.business_date,
    currency: r.currency,
    gatewayBalance: exactAmount(r.gateway_balance),
    singleBalance: exactAmount(r.single_balance),
    expectedBalance: exactAmount(r.expected_balance),
    previousBalance: exactAmount(r.previous_balance),
    movement: exactAmount(r.movement),
    difference: exactAmount(r.difference),
    status: r.status,
    runId: r.run_id,
    booksImportId: r.books_import_id,
    computedAt: r.computed_at,
    caseId: r.case_id,
    note: r.note,
    scale: r.scale,
    source: r.source,
    bankStatementId: r.bank_statement_id,
    itemsTotal: exactAmount(r.items_total),
    unexplained: exactAmount(r.unexplained),
  };
}

// What reconciliation reads of the snapshots. These follow the `daily_balances` view but find
// the run in authoritative_runs first, because a run that captured no wallet is still a
// snapshot: every wallet gone, not "no snapshot".

/** The run that is the day's truth for an account (see the authoritative_runs view), if any. */
export async function findDailyRun(
  db: Db,
  account: string,
  businessDate: string,
): Promise<{ runId: number; endOfDay: boolean; cutoffDriftSeconds: number | null } | undefined> {
  const row = await db
    .selectFrom('authoritative_runs')
    .select(['run_id', 'end_of_day', 'cutoff_drift_seconds'])
    .where('account', '=', account)
    .where('business_date', '=', businessDate)
    .executeTakeFirst();
  return row === undefined ? undefined : { runId: row.run_id, endOfDay: row.end_of_day, cutoffDriftSeconds: row.cutoff_drift_seconds };
}

/** findDailyRun of every account and date of a range, keyed `account|business_date`: one query for the range. */
export async function findDailyRuns(
  db: Db,
  accounts: readonly string[],
  from: string,
  to: string,
): Promise<Map<string, { runId: number; endOfDay: boolean; cutoffDriftSeconds: number | null }>> {
  if (accounts.length === 0) return new Map();
  const rows = await db
    .selectFrom('authoritative_runs')
    .select(['account', 'business_date', 'run_id', 'end_of_day', 'cutoff_drift_seconds'])
    .where('account', 'in', [...accounts])
    .where('business_date', '>=', from)
    .where('business_date', '<=', to)
    .execute();
  return new Map(rows.map((r) => [`${r.account}|${r.business_date}`, { runId: r.run_id, endOfDay: r.end_of_day, cutoffDriftSeconds: r.cutoff_drift_seconds }]));
}

/** Account-date pairs among those given that already have stored results. */
export async function findReconciledPairs(db: Db, pairs: ReadonlyArray<{ account: string; businessDate: string }>): Promise<Array<{ account: string; businessDate: string }>> {
  if (pairs.length === 0) return [];
  const rows = await sql<{ account: string; business_date: string }>`
    select distinct r.account, r.business_date::text as business_date
    from reconciliation_results r
    join unnest(${pairs.map((p) => p.account)}::text[], ${pairs.map((p) => p.businessDate)}::date[]) as p(account, business_date)
      on p.account = r.account and p.business_date = r.business_date
    order by 2, 1`.execute(db);
  return rows.rows.map((r) => ({ account: r.account, businessDate: r.business_date }));
}

/** The account's first business date after `businessDate` that has stored results (its movement reads this date). */
export async function findNextReconciledDate(db: Db, account: string, businessDate: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('reconciliation_results')
    .select('business_date')
    .where('account', '=', account)
    .where('business_date', '>', businessDate)
    .orderBy('business_date')
    .executeTakeFirst();
  return row?.business_date;
}

/** The latest business date before `businessDate` on which the account has a succeeded run. */
export async function findPreviousSnapshotDate(db: Db, account: string, businessDate: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('snapshot_runs')
    .select('business_date')
    .where('account', '=', account)
    .where('business_date', '<', businessDate)
    .where('status', '=', 'succeeded')
    .orderBy('business_date', 'desc')
    .executeTakeFirst();
  return row?.business_date;
}

/**
 * A balance_history row's balance in its currency's ISO decimals: a day captured in whole units
 * (scale 0) is scaled up, exactly, so every point of a chart is in the same unit. Codes without
 * ISO decimals, and finer stored scales, stay as stored.
 */
export function historyBalance(r: { currency: string; balance: string; scale: number | null }): bigint {
  const iso = currencyDecimals(r.currency);
  if (iso === null || r.scale === null || r.scale > iso) return BigInt(r.balance);
  return rescaleAmount(BigInt(r.balance), r.scale, iso);
}

/**
 * What the stored results of an account's date say, one line per result in currency order: the
 * fields a reconcile computes (not when, nor the case they joined). Two reconciles agree when
 * their lines agree; see resultFingerprint for the same line built from a new result.
 */
export async function listStoredResultFingerprints(db: Db, account: string, businessDate: string): Promise<string[]> {
  const rows = await sql<{ line: string }>`
    select concat_ws('|', coalesce(currency, '~'), status, coalesce(gateway_balance::text, '~'), coalesce(single_balance::text, '~'), coalesce(expected_balance::text, '~'),
      coalesce(previous_balance::text, '~'), coalesce(movement::text, '~'), coalesce(difference::text, '~'), coalesce(scale::text, '~'), coalesce(run_id::text, '~'),
      coalesce(books_import_id::text, '~'), case when coalesce(items_total, 0) <> 0 then concat(items_total::text, '|', unexplained::text) end) as line
    from reconciliation_results
    where account = ${account} and business_date = ${businessDate}
    order by coalesce(currency, '')`.execute(db);
  return rows.rows.map((r) => r.line);
}

/** The line listStoredResultFingerprints reads, for a result about to be written. */
export function resultFingerprint(r: NewResultRow): string {
  const text = (v: unknown) => (v === null || v === undefined ? '~' : String(v));
  // Open items are part of what a sealed date says; a result without any keeps the line it had before items existed.
  const items = r.items_total === null || r.items_total === undefined || r.items_total === '0' ? [] : [text(r.items_total), text(r.unexplained)];
  return [r.currency ?? '~', r.status, text(r.gateway_balance), text(r.single_balance), text(r.expected_balance), text(r.previous_balance), text(r.movement), text(r.difference), text(r.scale), text(r.run_id), text(r.books_import_id), ...items].join(
    '|',
  );
}

/** The case each stored result of an account's date names, by currency ('' for an account-level result). */
export async function listStoredResultCases(db: Db, account: string, businessDate: string): Promise<Map<string, number>> {
  const rows = await db.selectFrom('reconciliation_results').select(['currency', 'case_id']).where('account', '=', account).where('business_date', '=', businessDate).where('case_id', 'is not', null).execute();
  return new Map(rows.map((r) => [r.currency ?? '', r.case_id!]));
}
