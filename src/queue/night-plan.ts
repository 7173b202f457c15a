import type { AppContext } from '../app-context.js';
import { selectAccounts } from '../config/index.js';
import { recordScheduledAccounts } from '../db/capture-day.repository.js';
import { findEndOfDayCaptures } from '../db/snapshot-run.repository.js';
import type { SlotService } from '../scheduler/slot-schedule.js';

/** What one slot asks of the night: the accounts to capture for its business date. */
export interface NightPlan {
  serve: SlotService;
  /** Every configured account: from this date on the worker answers for them. */
  accounts: string[];
  /** Those without an end-of-day capture finished at or after the slot: the slot captures them. */
  toCapture: string[];
}

/**
 * Plans a slot, in process (the embedded database) and as jobs alike: records that the worker
 * answers for every account from this date on, and which accounts the slot captures. An account
 * whose date was captured after the slot fired (another worker, a manual run) is skipped, and
 * the log says why.
 */
export async function planNight(ctx: AppContext, serve: SlotService): Promise<NightPlan> {
  const date = serve.window.businessDate;
  const accounts = selectAccounts(ctx.config).map((a) => a.name);
  await recordScheduledAccounts(ctx.database.db, accounts, date, serve.slot);
  const captured = await findEndOfDayCaptures(ctx.database.db, accounts, date, serve.slot);
  for (const [account, run] of captured) {
    ctx.logger.info(
      { account, businessDate: date, slot: serve.slot.toISOString(), capturedBy: run.runId, capturedAt: run.finishedAt?.toISOString() },
      `slot ${serve.slot.toISOString()} skips account "${account}": run ${run.runId} (${run.trigger}) captured ${date} at ${run.finishedAt?.toISOString() ?? 'an unknown time'}, after the slot`,
    );
  }
  return { serve, accounts, toCapture: accounts.filter((a) => !captured.has(a)) };
}
