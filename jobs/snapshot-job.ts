import type { AppContext } from '../src/app-context.js';
import { mapWithConcurrency } from '../src/concurrency.js';
import { selectAccounts } from '../src/config/index.js';
import type { RunTrigger } from '../src/db/database.types.js';
import { captureAccount, type AccountRunResult, type CaptureOptions } from '../src/snapshot/capture-account.js';
import type { GatewayCapture } from '../src/snapshot/gateway-capture.js';
import { settleOwedReconciliations } from './reconcile-job.js';

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
   * After capturing, pay what the captured accounts owe: every closed date whose snapshot a new
   * run became (and the next captured date, whose movement starts from it). The worker passes
   * false: it settles what is owed on its own loop.
   */
  reconcileChanged?: boolean;
}

export interface SnapshotJobResult {
  /** 0 every account succeeded (or its date was already captured), 1 any failed, 4 any skipped for a held lock. */
  exitCode: number;
  accounts: AccountRunResult[];
  /** Dates reconciled because their inputs changed (with `reconcileChanged`). */
  reReconciledDates: number;
  /** Captured dates whose cut-off is still ahead: their results follow once it passes. */
  awaitingCutoff: Array<{ account: string; businessDate: string; cutoffAt: Date }>;
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
    const captured = results.filter((r) => r.status === 'succeeded').map((r) => r.account);
    if (captured.length > 0) {
      const settled = await settleOwedReconciliations(ctx, { accounts: captured });
      reReconciledDates = new Set(settled.reconciled.map((p) => p.businessDate)).size;
    }
  }
  const now = ctx.clock.now();
  const awaitingCutoff = results.flatMap((r) =>
    r.status === 'succeeded' && r.timing !== undefined && r.timing.cutoffAt > now ? [{ account: r.account, businessDate: r.timing.businessDate, cutoffAt: r.timing.cutoffAt }] : [],
  );
  return { exitCode: snapshotExitCode(results), accounts: results, reReconciledDates, awaitingCutoff };
}
