import type { AppContext } from '../src/app-context.js';
import { mapWithConcurrency } from '../src/concurrency.js';
import { selectAccounts } from '../src/config/index.js';
import type { RunTrigger } from '../src/db/database.types.js';
import { findDailyRun } from '../src/db/reconciliation-result.repository.js';
import { reconcileChangedDates } from '../src/reconciliation/reconciliation-service.js';
import { captureAccount, type AccountRunResult, type CaptureOptions } from '../src/snapshot/capture-account.js';
import type { GatewayCapture } from '../src/snapshot/gateway-capture.js';

export type { AccountRunResult } from '../src/snapshot/capture-account.js';

export interface SnapshotJobOptions {
  trigger: RunTrigger;
  /** One account by name; all configured accounts when absent. */
  account?: string;
  /** Only these configured accounts (a night's retry of the ones still missing). */
  accounts?: readonly string[];
  serve?: CaptureOptions['serve'];
  signal?: AbortSignal;
  onProgress?: CaptureOptions['onProgress'];
  createGateway?: CaptureOptions['createGateway'];
  /** Gateway reads already under way, by account name (see CaptureOptions.started); each is claimed or closed. */
  started?: ReadonlyMap<string, GatewayCapture>;
  /**
   * After capturing, reconcile again every date whose authoritative snapshot the new runs
   * became (and the next reconciled date, whose movement starts from it). The worker passes
   * false: it reconciles each captured date itself.
   */
  reconcileChanged?: boolean;
}

export interface SnapshotJobResult {
  /** 0 every account succeeded (or its date was already captured), 1 any failed, 4 any skipped for a held lock. */
  exitCode: number;
  accounts: AccountRunResult[];
  /** Dates reconciled again because a new run became their snapshot (with `reconcileChanged`). */
  reReconciledDates: number;
}

/** Exit code of a set of account results: a failure outranks a lock skip. */
export function snapshotExitCode(results: readonly AccountRunResult[]): number {
  if (results.some((r) => r.status === 'failed')) return 1;
  if (results.some((r) => r.status === 'skipped' && r.skipReason === 'locked')) return 4;
  return 0;
}

/**
 * The snapshot job shared by the CLI, the scheduler and backfill: every selected account,
 * a few at a time; one account's failure never stops the others.
 */
export async function runSnapshotJob(ctx: AppContext, options: SnapshotJobOptions): Promise<SnapshotJobResult> {
  const selected = selectAccounts(ctx.config, options.account);
  const accounts = options.accounts === undefined ? selected : selected.filter((a) => options.accounts!.includes(a.name));
  const results = await mapWithConcurrency(accounts, ctx.config.accountConcurrency, async (account): Promise<AccountRunResult> => {
    // After a stop signal no new account starts; the ones under way record `interrupted`.
    if (options.signal?.aborted) return { account: account.name, status: 'failed', durationMs: 0, error: 'interrupted before it started' };
    const result = await captureAccount(ctx, account, {
      trigger: options.trigger,
      serve: options.serve,
      signal: options.signal,
      onProgress: options.onProgress,
      createGateway: options.createGateway,
      started: options.started?.get(account.name),
    });
    if (result.runId !== undefined) ctx.metrics?.recordRun({ trigger: options.trigger, status: result.status, durationMs: result.durationMs });
    return result;
  });
  let reReconciledDates = 0;
  if (options.reconcileChanged) {
    const changed: Array<{ account: string; businessDate: string }> = [];
    for (const r of results) {
      if (r.status !== 'succeeded' || r.businessDate === undefined) continue;
      const daily = await findDailyRun(ctx.database.db, r.account, r.businessDate);
      if (daily?.runId === r.runId) changed.push({ account: r.account, businessDate: r.businessDate });
    }
    reReconciledDates = await reconcileChangedDates(ctx, changed, { withFollowing: true });
  }
  return { exitCode: snapshotExitCode(results), accounts: results, reReconciledDates };
}
