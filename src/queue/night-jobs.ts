import type { AppContext } from '../app-context.js';
import type { SlotService } from '../scheduler/slot-schedule.js';
import { captureKey, QUEUES, settleKey, type PgBoss } from './job-queue.js';
import { planNight, type NightPlan } from './night-plan.js';

/** What a capture job carries: the account, the slot it serves, and which attempt of the night it is. */
export interface CaptureJobData {
  account: string;
  businessDate: string;
  slot: string;
  attempt: number;
}

export interface SettleJobData {
  businessDate: string;
  slot: string;
}

/** The options of a capture job: keyed by account and date, expiring after a capture's time. */
export function captureJobOptions(ctx: AppContext, data: CaptureJobData, startAfter: Date): PgBoss.SendOptions {
  return {
    singletonKey: captureKey(data.account, data.businessDate),
    startAfter,
    expireInSeconds: Math.max(1, Math.round(ctx.config.queue.jobExpiryMs / 1000)),
    deadLetter: QUEUES.captureDead,
  };
}

/**
 * Plans a slot as jobs on the server's queue: one capture job per account and business date
 * (a second worker planning the same slot adds none: the key is already waiting or active), and
 * the date's settle job at the close of its capture window. Returns how many capture jobs were new.
 */
export async function queueNight(ctx: AppContext, boss: PgBoss, serve: SlotService): Promise<{ plan: NightPlan; queued: number }> {
  const plan = await planNight(ctx, serve);
  const { window } = serve;
  const date = window.businessDate;
  const startAfter = new Date(Math.max(serve.slot.getTime(), window.opensAt.getTime()));
  let queued = 0;
  for (const account of plan.toCapture) {
    const data: CaptureJobData = { account, businessDate: date, slot: serve.slot.toISOString(), attempt: 1 };
    if ((await boss.send(QUEUES.capture, { ...data }, captureJobOptions(ctx, data, startAfter))) !== null) queued++;
  }
  const settle: SettleJobData = { businessDate: date, slot: serve.slot.toISOString() };
  await boss.send(QUEUES.settle, { ...settle }, { singletonKey: settleKey(date, 'closed'), startAfter: window.closesAt });
  ctx.logger.info(
    { businessDate: date, slot: serve.slot.toISOString(), accounts: plan.accounts.length, queued, windowClosesAt: window.closesAt.toISOString() },
    `slot ${serve.slot.toISOString()} planned the night of ${date}: ${queued} capture job(s) queued, ${plan.toCapture.length - queued} already queued, ${plan.accounts.length - plan.toCapture.length} already captured`,
  );
  return { plan, queued };
}
