import type { AppContext } from '../app-context.js';
import { resultCaseKey, trackCases } from '../cases/track-cases.js';
import { toleranceFor, type Config } from '../config/index.js';
import { listSnapshotRows } from '../db/balance-snapshot.repository.js';
import { listExpectedBalances } from '../db/expected-balance.repository.js';
import {
  findDailyRun,
  findNextReconciledDate,
  findPreviousSnapshotDate,
  findReconciledPairs,
  lockReconciliationDay,
  replaceResultsForDate,
} from '../db/reconciliation-result.repository.js';
import { UsageError } from '../errors.js';
import { todayOf } from './business-dates.js';
import { reconcileAccountDay } from './reconcile-rules.js';
import { resultColumns, type ReconciliationResult } from './reconciliation-result.js';

/** The account names a command works on: all configured, or the one named (which must be configured). */
export function resolveAccountNames(config: Config, name?: string): string[] {
  const configured = config.accounts.map((a) => a.name);
  if (name === undefined) return configured;
  if (!configured.includes(name)) throw new UsageError(`There is no account named "${name}". Configured accounts: ${configured.join(', ')}.`);
  return [name];
}

/**
 * Reconciles the given accounts on one business date and stores the results, replacing that
 * date's earlier results in the same transaction, so a re-run is idempotent and a reader
 * never sees half a day. Concurrent runs for the same account and date wait for each other.
 */
export async function reconcileBusinessDate(ctx: AppContext, accounts: readonly string[], businessDate: string): Promise<ReconciliationResult[]> {
  const computedAt = ctx.clock.now();
  return ctx.database.db.transaction().execute(async (trx) => {
    // Under READ COMMITTED two runs of one date would both delete, then both insert and collide
    // on the unique key: the second waits here until the first commits, then reads its rows.
    // Sorted, so a run over every account and a run over one never take the locks crosswise.
    for (const account of [...accounts].sort()) await lockReconciliationDay(trx, account, businessDate);
    const all: ReconciliationResult[] = [];
    for (const account of accounts) {
      const run = await findDailyRun(trx, account, businessDate);
      const previousDate = run === undefined ? undefined : await findPreviousSnapshotDate(trx, account, businessDate);
      const previousRun = previousDate === undefined ? undefined : await findDailyRun(trx, account, previousDate);
      const books = await listExpectedBalances(trx, account, businessDate);
      // A day's books come whole from one import; the newest id names it should older rows linger.
      const booksImportId = books.reduce<number | null>((id, row) => (row.importId !== null && (id === null || row.importId > id) ? row.importId : id), null);
      const results = reconcileAccountDay({
        account,
        businessDate,
        snapshot: run === undefined ? null : { runId: run.runId, balances: await listSnapshotRows(trx, run.runId) },
        previous: previousRun === undefined ? null : { balances: await listSnapshotRows(trx, previousRun.runId) },
        books,
        toleranceFor: (currency) => toleranceFor(ctx.config, currency),
      });
      all.push(...results.map((r) => ({ ...r, booksImportId })));
    }
    await replaceResultsForDate(trx, accounts, businessDate, all.map((r) => ({ ...resultColumns(r), computed_at: computedAt })));
    // Discrepancy cases: each result that did not match joins (or opens) its case, in the same transaction.
    const cases = await trackCases(trx, {
      accounts,
      businessDate,
      results: all,
      at: computedAt,
      today: todayOf(ctx).date,
      toleranceFor: (currency) => toleranceFor(ctx.config, currency),
    });
    return all.map((r) => ({ ...r, case: cases.get(resultCaseKey(r)) ?? null }));
  });
}

/**
 * Reconciles again the account-date pairs whose inputs changed (a new authoritative snapshot,
 * new books), so stored results never go stale. Only pairs that already have results are
 * redone; with `withFollowing`, also each account's next reconciled date, whose movement and
 * disappeared wallets are measured from the changed day. Returns how many dates were redone.
 */
export async function reconcileChangedDates(
  ctx: AppContext,
  changed: ReadonlyArray<{ account: string; businessDate: string }>,
  options: { withFollowing?: boolean } = {},
): Promise<number> {
  const db = ctx.database.db;
  const pairs = new Map<string, { account: string; businessDate: string }>();
  for (const pair of await findReconciledPairs(db, changed)) pairs.set(`${pair.account}|${pair.businessDate}`, pair);
  if (options.withFollowing) {
    for (const { account, businessDate } of changed) {
      const next = await findNextReconciledDate(db, account, businessDate);
      if (next !== undefined) pairs.set(`${account}|${next}`, { account, businessDate: next });
    }
  }
  const byDate = new Map<string, string[]>();
  for (const { account, businessDate } of pairs.values()) byDate.set(businessDate, [...(byDate.get(businessDate) ?? []), account]);
  for (const [businessDate, accounts] of [...byDate].sort(([a], [b]) => a.localeCompare(b))) await reconcileBusinessDate(ctx, accounts, businessDate);
  return byDate.size;
}
