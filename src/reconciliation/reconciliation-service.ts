import type { AppContext } from '../app-context.js';
import { resultCaseKey, trackCases } from '../cases/track-cases.js';
import { toleranceFor, type Config } from '../config.js';
import { listSnapshotRows } from '../db/balance-snapshot.repository.js';
import { listExpectedBalances } from '../db/expected-balance.repository.js';
import { findDailyRun, findPreviousSnapshotDate, lockReconciliationDay, replaceResultsForDate } from '../db/reconciliation-result.repository.js';
import { UsageError } from '../errors.js';
import { todayOf } from './business-dates.js';
import { reconcileAccountDay } from './reconcile-rules.js';
import type { ReconciliationResult } from './reconciliation-result.js';

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
      all.push(
        ...reconcileAccountDay({
          account,
          businessDate,
          snapshot: run === undefined ? null : { runId: run.runId, balances: await listSnapshotRows(trx, run.runId) },
          previous: previousRun === undefined ? null : { balances: await listSnapshotRows(trx, previousRun.runId) },
          books: await listExpectedBalances(trx, account, businessDate),
          toleranceFor: (currency) => toleranceFor(ctx.config, currency),
        }),
      );
    }
    await replaceResultsForDate(trx, accounts, businessDate, all, computedAt);
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
