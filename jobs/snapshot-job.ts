import type { AppContext } from '../src/app-context.js';
import { mapWithConcurrency } from '../src/concurrency.js';
import { selectAccounts } from '../src/config.js';
import type { RunTrigger } from '../src/db/database.types.js';
import { captureAccount, type AccountRunResult, type CaptureOptions } from '../src/snapshot/capture-account.js';

export type { AccountRunResult } from '../src/snapshot/capture-account.js';

export interface SnapshotJobOptions {
  trigger: RunTrigger;
  /** One account by name; all configured accounts when absent. */
  account?: string;
  slot?: Date;
  signal?: AbortSignal;
  onProgress?: CaptureOptions['onProgress'];
  createGateway?: CaptureOptions['createGateway'];
}

export interface SnapshotJobResult {
  /** 0 every account succeeded (or its slot was already captured), 1 any failed, 4 any skipped for a held lock. */
  exitCode: number;
  accounts: AccountRunResult[];
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
  const accounts = selectAccounts(ctx.config, options.account);
  const results = await mapWithConcurrency(accounts, ctx.config.accountConcurrency, async (account): Promise<AccountRunResult> => {
    // After a stop signal no new account starts; the ones under way record `interrupted`.
    if (options.signal?.aborted) return { account: account.name, status: 'failed', durationMs: 0, error: 'interrupted before it started' };
    return captureAccount(ctx, account, {
      trigger: options.trigger,
      slot: options.slot,
      signal: options.signal,
      onProgress: options.onProgress,
      createGateway: options.createGateway,
    });
  });
  return { exitCode: snapshotExitCode(results), accounts: results };
}
