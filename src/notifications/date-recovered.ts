import type { AppContext } from '../app-context.js';
import { hasQueuedOutcome } from '../db/notification.repository.js';
import { findFirstEndOfDayCapture } from '../db/snapshot-run.repository.js';
import { enqueueEvent } from './outbox.js';

/** The dedupe key of a date.at_risk event: one per account and business date. */
export const atRiskKey = (account: string, businessDate: string) => `date.at_risk:${account}:${businessDate}`;

/**
 * Ends the worry a `date.at_risk` started: for each account whose business date now has an
 * end-of-day capture and was announced at risk, queues one `date.recovered` (by the worker, a
 * manual snapshot or a backfill — whoever captured it). Returns the accounts announced now.
 */
export async function announceRecoveredDates(ctx: AppContext, accounts: readonly string[], businessDate: string): Promise<string[]> {
  const db = ctx.database.db;
  const announced: string[] = [];
  for (const account of accounts) {
    if (!(await hasQueuedOutcome(db, atRiskKey(account, businessDate)))) continue;
    const capture = await findFirstEndOfDayCapture(db, account, businessDate);
    if (capture === undefined) continue;
    const written = await enqueueEvent(
      db,
      ctx.config,
      'date.recovered',
      { account, businessDate, capturedAt: capture.capturedAt.toISOString(), runId: capture.runId },
      `date.recovered:${account}:${businessDate}`,
      ctx.clock.now(),
    );
    if (written > 0) {
      announced.push(account);
      ctx.logger.info({ account, businessDate, runId: capture.runId }, `business date ${businessDate} of account "${account}" was captured after all (run ${capture.runId}): no longer at risk`);
    }
  }
  return announced;
}
