import type { AppContext } from '../src/app-context.js';
import { selectAccounts } from '../src/config.js';
import { countConsecutiveFailedNights, hasSucceededSlot } from '../src/db/snapshot-run.repository.js';
import { runSnapshotJob, type SnapshotJobOptions, type SnapshotJobResult } from './snapshot-job.js';

export interface NightlyJobOptions {
  slot: Date;
  signal: AbortSignal;
  createGateway?: SnapshotJobOptions['createGateway'];
  /** Reconciles an account's business date once it was captured (the scheduler passes reconcileAfterSnapshot). */
  reconcile?: (ctx: AppContext, account: string, businessDate: string) => Promise<void>;
}

/**
 * One scheduler tick: snapshot every account for the slot, reconcile what was captured, and
 * raise an error-level line for every account that has failed too many nights in a row.
 */
export async function runNightlyJob(ctx: AppContext, options: NightlyJobOptions): Promise<SnapshotJobResult> {
  const result = await runSnapshotJob(ctx, { trigger: 'schedule', slot: options.slot, signal: options.signal, createGateway: options.createGateway });
  for (const account of result.accounts) {
    if (account.status === 'succeeded' && account.businessDate && options.reconcile && !options.signal.aborted) {
      try {
        await options.reconcile(ctx, account.account, account.businessDate);
      } catch (error) {
        ctx.logger.error({ err: error, account: account.account }, 'reconciliation after the snapshot failed');
      }
    }
    const failures = await countConsecutiveFailedNights(ctx.database.db, account.account);
    if (failures >= ctx.config.maxConsecutiveFailures) {
      ctx.logger.error(
        { account: account.account, consecutiveFailures: failures },
        `account "${account.account}" has failed ${failures} scheduled nights in a row (last error: ${account.error ?? 'see the run ledger'})`,
      );
    }
  }
  ctx.logger.info(
    { succeeded: result.accounts.filter((a) => a.status === 'succeeded').length, failed: result.accounts.filter((a) => a.status === 'failed').length, skipped: result.accounts.filter((a) => a.status === 'skipped').length },
    'scheduled run finished',
  );
  return result;
}

/** Whether any configured account still lacks a succeeded run for the slot. */
export async function slotNeedsCatchUp(ctx: AppContext, slot: Date): Promise<boolean> {
  for (const account of selectAccounts(ctx.config)) {
    if (!(await hasSucceededSlot(ctx.database.db, account.name, slot))) return true;
  }
  return false;
}
