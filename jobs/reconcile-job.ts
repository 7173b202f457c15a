import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { AppContext } from '../src/app-context.js';
import { allAccountNames, businessCalendarOf, deadlinesOf } from '../src/config/index.js';
import type { Database } from '../src/db/database.types.js';
import { UsageError } from '../src/errors.js';
import { enqueueEvent } from '../src/notifications/outbox.js';
import type { BooksMissingData, ReconciliationFailedData } from '../src/notifications/events.js';
import { countByStatus, isAccepted, reconciliationExitCode, type ReconciliationResult, type StatusCounts } from '../src/reconciliation/reconciliation-result.js';
import { reconcileBusinessDate, reconcileOwedDates, resolveAccountNames, type ReconcileFailure, type SettledReconciliations } from '../src/reconciliation/reconciliation-service.js';
import { formatLocalTime } from '../src/business-date/local-time.js';

export interface ReconcileJobOptions {
  /** Business date, YYYY-MM-DD. */
  date: string;
  /** One configured account; all configured accounts when absent. */
  account?: string;
  /** Several accounts, already checked to be configured (backfill: those tracked on the date); wins over `account`. */
  accounts?: readonly string[];
}

export interface ReconcileJobResult {
  businessDate: string;
  /** 0 everything matched (or still awaits its books), 3 any break, missing side, endpoint mismatch, disappeared wallet, missing snapshot or missed books. */
  exitCode: 0 | 3;
  /** Results per status over all accounts; discrepancies their case accepted are counted in `accepted` only. */
  summary: StatusCounts;
  /** Discrepancies whose case is accepted: shown, but not breaks for the exit code. */
  accepted: number;
  accounts: Array<{ account: string; summary: StatusCounts }>;
  results: ReconciliationResult[];
}

/**
 * Written with the results that say a date's books were missed: one `books.missing` per account
 * and date, ever (the dedupe key), in the reconcile's own transaction.
 */
function notifyMissingBooks(ctx: AppContext) {
  return async (trx: Transaction<Database>, results: readonly ReconciliationResult[]): Promise<void> => {
    const calendar = businessCalendarOf(ctx.config);
    for (const r of results) {
      if (r.status !== 'no_books') continue;
      const cutoffAt = calendar.cutoffOf(r.businessDate);
      const data: BooksMissingData = {
        account: r.account,
        businessDate: r.businessDate,
        cutoffAt: cutoffAt.toISOString(),
        deadlineAt: new Date(cutoffAt.getTime() + deadlinesOf(ctx.config, r.businessDate).booksDeadlineMs).toISOString(),
      };
      await enqueueEvent(trx, ctx.config, 'books.missing', data, `books.missing:${r.account}:${r.businessDate}`, ctx.clock.now());
    }
  };
}

/**
 * Tells people an account-date could not be reconciled: one `reconciliation.failed` per account,
 * date and reason (the worker tries again every minute; the same failure is not sent again).
 */
function notifyFailure(ctx: AppContext) {
  return async (failure: ReconcileFailure): Promise<void> => {
    const data: ReconciliationFailedData = { account: failure.account, businessDate: failure.businessDate, reason: failure.reason };
    const reasonKey = createHash('sha256').update(failure.reason).digest('hex').slice(0, 16);
    await enqueueEvent(ctx.database.db, ctx.config, 'reconciliation.failed', data, `reconciliation.failed:${failure.account}:${failure.businessDate}:${reasonKey}`, ctx.clock.now());
  };
}

/**
 * The reconcile job shared by the CLI, the scheduler and backfill: reconciles one business date,
 * stores the results and logs the summary. A date whose cut-off has not passed cannot be
 * reconciled yet: its closing balance is not known.
 */
export async function runReconcileJob(ctx: AppContext, options: ReconcileJobOptions): Promise<ReconcileJobResult> {
  const accounts = options.accounts === undefined ? resolveAccountNames(ctx.config, options.account) : [...options.accounts];
  const cutoffAt = businessCalendarOf(ctx.config).cutoffOf(options.date);
  if (ctx.clock.now() < cutoffAt) {
    throw new UsageError(
      `Business date ${options.date} cannot be reconciled yet: its cut-off is ${formatLocalTime(cutoffAt, ctx.config.timezone)} (RECON_CUTOFF ${ctx.config.cutoff} in ${ctx.config.timezone}). Run it after that.`,
    );
  }
  const results = await reconcileBusinessDate(ctx, accounts, options.date, { afterWrite: notifyMissingBooks(ctx) });
  const counted = results.filter((r) => !isAccepted(r));
  const accepted = results.length - counted.length;
  const summary = countByStatus(counted);
  const exitCode = reconciliationExitCode(summary);
  const perAccount = accounts.map((account) => ({ account, summary: countByStatus(counted.filter((r) => r.account === account)) }));
  const log = { businessDate: options.date, accounts, ...summary, accepted };
  const acceptedNote = accepted === 0 ? '' : ` (${accepted} accepted discrepancies not counted)`;
  const awaiting = summary.awaiting_books > 0 ? ` (books not imported yet for ${new Set(counted.filter((r) => r.status === 'awaiting_books').map((r) => r.account)).size} account(s))` : '';
  if (exitCode === 0) ctx.logger.info(log, `reconciliation of ${options.date}: all ${counted.length - summary.awaiting_books} results matched${awaiting}${acceptedNote}`);
  else ctx.logger.warn(log, `reconciliation of ${options.date}: ${counted.length - summary.matched - summary.awaiting_books} of ${results.length} results need attention${acceptedNote}`);
  return { businessDate: options.date, exitCode, summary, accepted, accounts: perAccount, results };
}

/**
 * Pays what is owed for some accounts (all configured when absent): every date whose inputs
 * changed since its results were computed and whose cut-off has passed, and every date whose
 * books deadline passed. Every command that changes an input calls it before it exits; the
 * worker calls it every minute, so what anyone changed is reconciled.
 */
export async function settleOwedReconciliations(ctx: AppContext, options: { accounts?: readonly string[]; signal?: AbortSignal } = {}): Promise<SettledReconciliations> {
  const accounts = options.accounts ?? allAccountNames(ctx.config);
  const settled = await reconcileOwedDates(ctx, accounts, { afterWrite: notifyMissingBooks(ctx), signal: options.signal, onFailure: notifyFailure(ctx) });
  if (settled.reconciled.length > 0) {
    ctx.logger.info({ reconciled: settled.reconciled }, `reconciled ${settled.reconciled.length} account-date(s) whose inputs had changed`);
  }
  return settled;
}

/** Adapter for the nightly job's `reconcile` hook: pays what the night's accounts owe, until `signal` stops it. */
export async function reconcileAfterSnapshot(ctx: AppContext, accounts: readonly string[], signal?: AbortSignal): Promise<void> {
  await settleOwedReconciliations(ctx, { accounts, signal });
}
