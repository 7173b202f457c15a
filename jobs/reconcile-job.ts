import type { AppContext } from '../src/app-context.js';
import { countByStatus, isAccepted, reconciliationExitCode, type ReconciliationResult, type StatusCounts } from '../src/reconciliation/reconciliation-result.js';
import { reconcileBusinessDate, resolveAccountNames } from '../src/reconciliation/reconciliation-service.js';

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
  /** 0 everything matched, 3 any break, missing side, endpoint mismatch, disappeared wallet or missing snapshot. */
  exitCode: 0 | 3;
  /** Results per status over all accounts; discrepancies their case accepted are counted in `accepted` only. */
  summary: StatusCounts;
  /** Discrepancies whose case is accepted: shown, but not breaks for the exit code. */
  accepted: number;
  accounts: Array<{ account: string; summary: StatusCounts }>;
  results: ReconciliationResult[];
}

/**
 * The reconcile job shared by the CLI, the scheduler (after each nightly snapshot) and backfill:
 * reconciles one business date, stores the results and logs the summary.
 */
export async function runReconcileJob(ctx: AppContext, options: ReconcileJobOptions): Promise<ReconcileJobResult> {
  const accounts = options.accounts === undefined ? resolveAccountNames(ctx.config, options.account) : [...options.accounts];
  const results = await reconcileBusinessDate(ctx, accounts, options.date);
  const counted = results.filter((r) => !isAccepted(r));
  const accepted = results.length - counted.length;
  const summary = countByStatus(counted);
  const exitCode = reconciliationExitCode(summary);
  const perAccount = accounts.map((account) => ({ account, summary: countByStatus(counted.filter((r) => r.account === account)) }));
  const log = { businessDate: options.date, accounts, ...summary, accepted };
  const acceptedNote = accepted === 0 ? '' : ` (${accepted} accepted discrepancies not counted)`;
  if (exitCode === 0) ctx.logger.info(log, `reconciliation of ${options.date}: all ${counted.length} results matched${acceptedNote}`);
  else ctx.logger.warn(log, `reconciliation of ${options.date}: ${counted.length - summary.matched} of ${results.length} results need attention${acceptedNote}`);
  return { businessDate: options.date, exitCode, summary, accepted, accounts: perAccount, results };
}

/** Adapter for the nightly job's `reconcile` hook: one account, the business date just captured. */
export async function reconcileAfterSnapshot(ctx: AppContext, account: string, businessDate: string): Promise<void> {
  await runReconcileJob(ctx, { date: businessDate, account });
}
