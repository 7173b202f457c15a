import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { currencyDecimals } from '../money/format-amount.js';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface SnapshotRow {
  currency: string;
  balance: bigint;
  singleBalance: bigint | null;
  /** Why the single-wallet read could not confirm the listed balance (absent or null: it did). */
  unconfirmedReason?: string | null;
  /**
   * Decimals of both balances as captured (IDR 2, or 0 when the gateway sends whole rupiah).
   * Written as given; left out, the currency's ISO 4217 decimals. Read back, null only for a
   * code without ISO decimals stored before scales were recorded.
   */
  scale?: number | null;
}

// One parameter per column (unnest), not per value: a fleet's 10,000 wallets are one statement,
// far below PostgreSQL's 65,535 bind-parameter limit, and PGlite handles it too (it cannot COPY).
const BATCH_ROWS = 5_000;

/** Writes a run's snapshot rows in a few batched statements. Amounts go in as exact digit strings. */
export async function insertSnapshotRows(db: Db, runId: number, account: string, capturedAt: Date, rows: readonly SnapshotRow[]): Promise<void> {
  for (const batch of snapshotRowBatches(rows)) await snapshotRowsInsert(runId, account, capturedAt, batch).execute(db);
}

/** A run's rows in statement-sized batches (none for no rows). */
export function snapshotRowBatches(rows: readonly SnapshotRow[]): SnapshotRow[][] {
  const batches: SnapshotRow[][] = [];
  for (let start = 0; start < rows.length; start += BATCH_ROWS) batches.push(rows.slice(start, start + BATCH_ROWS));
  return batches;
}

/**
 * The insert of one batch of a run's rows, as a statement of its own or as the data-modifying
 * part of another (the capture writes its last batch in the statement that marks the run succeeded).
 */
export function snapshotRowsInsert(runId: number, account: string, capturedAt: Date, batch: readonly SnapshotRow[]): RawBuilder<unknown> {
  return sql`
      insert into balance_snapshots (run_id, account, currency, balance, single_balance, captured_at, scale, unconfirmed_reason)
      select ${runId}, ${account}, u.currency, u.balance, u.single_balance, ${capturedAt}, u.scale, u.unconfirmed_reason
      from unnest(${batch.map((r) => r.currency)}::text[], ${batch.map((r) => r.balance.toString())}::numeric[], ${batch.map((r) =>
        r.singleBalance === null ? null : r.singleBalance.toString(),
      )}::numeric[], ${batch.map((r) => (r.scale === undefined ? currencyDecimals(r.currency) : r.scale))}::smallint[], ${batch.map((r) => r.unconfirmedReason ?? null)}::text[]) as u(currency, balance, single_balance, scale, unconfirmed_reason)`;
}

/**
 * Writes the snapshot rows of several runs from the staged statements (see createBooksStage), one
 * statement for all of them: each run gets the staged rows of its account and date, captured at
 * its cut-off. The statements file is never held in memory. Returns how many rows were written.
 */
export async function insertSnapshotRowsFromStage(
  db: Transaction<Database>,
  runs: ReadonlyArray<{ runId: number; account: string; businessDate: string; capturedAt: Date }>,
): Promise<number> {
  if (runs.length === 0) return 0;
  const result = await sql`
    insert into balance_snapshots (run_id, account, currency, balance, single_balance, captured_at, scale, unconfirmed_reason)
    select r.run_id, s.account, s.currency, s.balance, null, r.captured_at, s.scale, null
    from unnest(${runs.map((r) => r.runId)}::integer[], ${runs.map((r) => r.account)}::text[], ${runs.map((r) => r.businessDate)}::date[], ${runs.map((r) => r.capturedAt.toISOString())}::timestamptz[])
      as r(run_id, account, business_date, captured_at)
    join books_stage s on s.account = r.account and s.business_date = r.business_date
    order by r.run_id, s.line`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** A run's rows as exact integers, ordered by currency. */
export async function listSnapshotRows(db: Db, runId: number): Promise<SnapshotRow[]> {
  const rows = await db
    .selectFrom('balance_snapshots')
    .select(['currency', 'balance', 'single_balance', 'scale', 'unconfirmed_reason'])
    .where('run_id', '=', runId)
    .orderBy('currency')
    .execute();
  return rows.map((r) => ({
    currency: r.currency,
    balance: BigInt(r.balance),
    singleBalance: r.single_balance === null ? null : BigInt(r.single_balance),
    scale: r.scale,
    unconfirmedReason: r.unconfirmed_reason,
  }));
}
