import { sql, type Kysely, type RawBuilder } from 'kysely';
import { InterruptedError } from '../errors.js';
import type { CaseState, Database, ReconciliationResultRow } from './database.types.js';
import type { StoredResultRecord } from './result-records.js';
import type { ResultCase } from './case-records.js';
import { historyBalance, resultRecord } from './reconciliation-result.repository.js';

/** A stored result and the case it names (state now, age to the report's today). */
export type StreamedResult = StoredResultRecord & { case: ResultCase | null };

type CursorRow = ReconciliationResultRow & { c_state: CaseState | null; c_opened_on: string | null; c_resolved_on: string | null; c_accepted_until: string | null };

/**
 * A report's reads in one read-only REPEATABLE READ transaction: every query of `fn` (its
 * cursors included) sees the database as it was at the first one, so a summary tallied in one
 * pass and the rows listed in another agree even while results are written meanwhile.
 */
export async function withReportSnapshot<T>(db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return fn(db);
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(fn);
}

/**
 * A report snapshot (see withReportSnapshot) held across the chunks of a streamed report: the
 * generator's chunks are read in one transaction, committed after the last and rolled back when
 * the consumer stops early (an error, a stop signal).
 */
export async function* inReportSnapshot<T>(db: Kysely<Database>, chunks: (trx: Kysely<Database>) => AsyncIterable<T>): AsyncGenerator<T> {
  if (db.isTransaction) {
    yield* chunks(db);
    return;
  }
  const trx = await db.startTransaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute();
  let done = false;
  try {
    yield* chunks(trx);
    await trx.commit().execute();
    done = true;
  } finally {
    if (!done) await trx.rollback().execute();
  }
}

// Cursors of one transaction need names of their own (a report reads several, one after another).
let cursors = 0;

/**
 * The rows of `query` in batches of `batchRows` from a server-side cursor, so memory holds one
 * batch whatever the range. In a transaction (a report snapshot) the cursor is declared there
 * and closed when done; otherwise in a read-only transaction of its own. The planner is told the
 * whole result is wanted (cursor_tuple_fraction 1): a range of a year is read by one scan and
 * one sort, not by an index walk that visits the table's pages at random. The cursor is closed
 * when the consumer stops early, and the reading stops (InterruptedError) once `signal` is aborted.
 */
export async function* cursorBatches<Row>(db: Kysely<Database>, query: RawBuilder<unknown>, batchRows = 500, signal?: AbortSignal): AsyncGenerator<Row[]> {
  if (!db.isTransaction) {
    yield* inReadOnlyTransaction(db, (trx) => cursorBatches<Row>(trx, query, batchRows, signal));
    return;
  }
  const name = sql.id(`report_cursor_${++cursors}`);
  await sql`set local cursor_tuple_fraction = 1`.execute(db);
  await sql`declare ${name} no scroll cursor for ${query}`.execute(db);
  let open = true;
  try {
    for (;;) {
      stopIfAborted(signal);
      const { rows } = await sql<Row>`fetch forward ${sql.lit(batchRows)} from ${name}`.execute(db);
      if (rows.length === 0) break;
      yield rows;
      if (rows.length < batchRows) break;
    }
    open = false;
    await sql`close ${name}`.execute(db);
  } finally {
    // Stopped early: the cursor is closed with the transaction, or here when that goes on.
    if (open) await sql`close ${name}`.execute(db).catch(() => undefined);
  }
}

/** A read stopped by SIGINT or SIGTERM (the reason the CLI aborts its signal with). */
function stopIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted !== true) return;
  const reason: unknown = signal.reason;
  throw new InterruptedError(`Stopped by ${reason instanceof Error ? reason.message : String(reason)} before the report was complete.`);
}

async function* inReadOnlyTransaction<T>(db: Kysely<Database>, chunks: (trx: Kysely<Database>) => AsyncIterable<T>): AsyncGenerator<T> {
  const trx = await db.startTransaction().setAccessMode('read only').execute();
  let done = false;
  try {
    yield* chunks(trx);
    await trx.commit().execute();
    done = true;
  } finally {
    if (!done) await trx.rollback().execute();
  }
}

/** What a report's summary counts of a result: its keys, status and source, and its case. */
export type ResultTallyRow = Pick<StreamedResult, 'account' | 'businessDate' | 'currency' | 'status' | 'source' | 'case'>;

type CaseAge = (c: { state: CaseState; openedOn: string; resolvedOn: string | null }) => number;
type CaseColumns = { case_id: number | null; c_state: CaseState | null; c_opened_on: string | null; c_resolved_on: string | null; c_accepted_until: string | null };

function resultsOfRange(columns: RawBuilder<unknown>, range: { from: string; to: string; account?: string }): RawBuilder<unknown> {
  return sql`select ${columns}, c.state as c_state, c.opened_on::text as c_opened_on, c.resolved_on::text as c_resolved_on, c.accepted_until::text as c_accepted_until
      from reconciliation_results r
      left join reconciliation_cases c on c.id = r.case_id
      where r.business_date between ${range.from}::date and ${range.to}::date
        ${range.account === undefined ? sql`` : sql`and r.account = ${range.account}`}
      order by r.business_date, r.account, coalesce(r.currency, '')`;
}

function caseOf(row: CaseColumns, ageOf: CaseAge): ResultCase | null {
  return row.case_id === null || row.c_state === null
    ? null
    : { id: row.case_id, state: row.c_state, ageDays: ageOf({ state: row.c_state, openedOn: row.c_opened_on!, resolvedOn: row.c_resolved_on }), acceptedUntil: row.c_accepted_until };
}

/**
 * The stored results over a range (one account or all) with their cases, by date, account and
 * currency (the order of listResults), in batches read from one server-side cursor (see
 * cursorBatches): memory holds one batch whatever the range. `ageOf` gives a case's age in days
 * (the caller's rule, to its today).
 */
export async function* streamResultBatches(
  db: Kysely<Database>,
  range: { from: string; to: string; account?: string },
  ageOf: CaseAge,
  batchRows = 500,
  signal?: AbortSignal,
): AsyncGenerator<StreamedResult[]> {
  for await (const rows of cursorBatches<CursorRow>(db, resultsOfRange(sql`r.*`, range), batchRows, signal)) {
    yield rows.map((row) => ({ ...resultRecord(row), case: caseOf(row, ageOf) }));
  }
}

/**
 * The same results in the same order with only what a summary counts (ResultTallyRow): a summary
 * pass over a year of 200 accounts × 50 currencies reads 3.65 million results, and their amounts,
 * notes and times made most of its work and of the garbage a long report's memory grew with.
 */
export async function* streamResultTallyRows(
  db: Kysely<Database>,
  range: { from: string; to: string; account?: string },
  ageOf: CaseAge,
  batchRows = 500,
  signal?: AbortSignal,
): AsyncGenerator<ResultTallyRow[]> {
  type Row = CaseColumns & Pick<ReconciliationResultRow, 'account' | 'business_date' | 'currency' | 'status' | 'source'>;
  const columns = sql`r.account, r.business_date, r.currency, r.status, r.source, r.case_id`;
  for await (const rows of cursorBatches<Row>(db, resultsOfRange(columns, range), batchRows, signal)) {
    yield rows.map((row) => ({ account: row.account, businessDate: row.business_date, currency: row.currency, status: row.status, source: row.source, case: caseOf(row, ageOf) }));
  }
}

/** Balances of a range by business date, as the charts read them. */
export interface DatedBalance {
  account: string;
  currency: string;
  businessDate: string;
  balance: bigint;
}

/**
 * The gateway's end-of-day balances of a range (`balance_history`, in each currency's ISO
 * decimals, as historyBalance gives them), by currency, account and date, in batches from a cursor.
 */
export async function* streamBalanceHistory(db: Kysely<Database>, range: { from: string; to: string; account?: string }, batchRows = 2_000): AsyncGenerator<DatedBalance[]> {
  const query = sql`select account, currency, business_date::text as business_date, balance::text as balance, scale
      from balance_history
      where business_date between ${range.from}::date and ${range.to}::date
        ${range.account === undefined ? sql`` : sql`and account = ${range.account}`}
      order by currency, account, business_date`;
  for await (const rows of cursorBatches<{ account: string; currency: string; business_date: string; balance: string; scale: number | null }>(db, query, batchRows)) {
    yield rows.map((r) => ({ account: r.account, currency: r.currency, businessDate: r.business_date, balance: historyBalance(r) }));
  }
}

/**
 * The balances bank statements stated for bank accounts over a range (the `bank` results'
 * compared balance, in the currency's scale), by account, currency and date, in batches from a cursor.
 */
export async function* streamBankBalances(db: Kysely<Database>, range: { from: string; to: string; account?: string }, batchRows = 2_000): AsyncGenerator<DatedBalance[]> {
  const query = sql`select account, currency, business_date::text as business_date, trunc(gateway_balance)::text as balance
      from reconciliation_results
      where source = 'bank' and currency is not null and gateway_balance is not null
        and business_date between ${range.from}::date and ${range.to}::date
        ${range.account === undefined ? sql`` : sql`and account = ${range.account}`}
      order by account, currency, business_date`;
  for await (const rows of cursorBatches<{ account: string; currency: string; business_date: string; balance: string }>(db, query, batchRows)) {
    yield rows.map((r) => ({ account: r.account, currency: r.currency, businessDate: r.business_date, balance: BigInt(r.balance) }));
  }
}

/** The books' balances of a range (`expected_balances`, as listExpectedBalancesBetween gives them), by account, currency and date, in batches from a cursor. */
export async function* streamBooksBalances(db: Kysely<Database>, range: { from: string; to: string; account?: string }, batchRows = 2_000): AsyncGenerator<DatedBalance[]> {
  const query = sql`select account, currency, business_date::text as business_date, balance::text as balance
      from expected_balances
      where business_date between ${range.from}::date and ${range.to}::date
        ${range.account === undefined ? sql`` : sql`and account = ${range.account}`}
      order by account, currency, business_date`;
  for await (const rows of cursorBatches<{ account: string; currency: string; business_date: string; balance: string }>(db, query, batchRows)) {
    yield rows.map((r) => ({ account: r.account, currency: r.currency, businessDate: r.business_date, balance: BigInt(r.balance) }));
  }
}
