import type { AppContext } from '../app-context.js';
import { businessCalendarOf } from '../config/index.js';
import type { SlotService } from '../scheduler/slot-schedule.js';
import { captureKey, QUEUES, settleKey, type PgBoss } from './job-queue.js';
import { planNight, type NightPlan } from './night-plan.js';

/**
 * The calendar a job's date was planned by, carried in the job: whichever worker runs it reads
 * the window as planned, never recomputed from its own process's settings. Absent in jobs queued
 * before jobs carried it (then the running worker's calendar, the database's, decides).
 */
export interface JobCalendar {
  timezone: string;
  cutoff: string;
  cutoffAt: string;
  opensAt: string;
  closesAt: string;
}

/** What a capture job carries: the account, the slot it serves, the date's calendar, and which attempt of the night it is. */
export interface CaptureJobData {
  account: string;
  businessDate: string;
  slot: string;
  attempt: number;
  calendar?: JobCalendar;
}

export interface SettleJobData {
  businessDate: string;
  slot: string;
  calendar?: JobCalendar;
}

/** The calendar of a planned slot, for its jobs' data. */
export function jobCalendarOf(ctx: AppContext, serve: SlotService): JobCalendar {
  const rules = businessCalendarOf(ctx.config).rulesFor(serve.window.businessDate);
  return {
    timezone: rules.timezone,
    cutoff: rules.cutoff,
    cutoffAt: serve.window.cutoffAt.toISOString(),
    opensAt: serve.window.opensAt.toISOString(),
    closesAt: serve.window.closesAt.toISOString(),
  };
}

/** The slot a job serves with the window it carries (its planner's), else the window by this process's calendar. */
export function serviceOfJob(ctx: AppContext, data: { businessDate: string; slot: string; calendar?: JobCalendar }): SlotService {
  const carried = data.calendar;
  const window =
    carried === undefined
      ? businessCalendarOf(ctx.config).windowOf(data.businessDate)
      : { businessDate: data.businessDate, timezone: carried.timezone, cutoffAt: new Date(carried.cutoffAt), opensAt: new Date(carried.opensAt), closesAt: new Date(carried.closesAt) };
  return { slot: new Date(data.slot), window };
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
  const calendar = jobCalendarOf(ctx, serve);
  for (const account of plan.toCapture) {
    const data: CaptureJobData = { account, businessDate: date, slot: serve.slot.toISOString(), attempt: 1, calendar };
    if ((await boss.send(QUEUES.capture, { ...data }, captureJobOptions(ctx, data, startAfter))) !== null) queued++;
  }
  const settle: SettleJobData = { businessDate: date, slot: serve.slot.toISOString(), calendar };
  await boss.send(QUEUES.settle, { ...settle }, { singletonKey: settleKey(date, 'closed'), startAfter: window.closesAt });
  ctx.logger.info(
    { businessDate: date, slot: serve.slot.toISOString(), accounts: plan.accounts.length, queued, windowClosesAt: window.closesAt.toISOString() },
    `slot ${serve.slot.toISOString()} planned the night of ${date}: ${queued} capture job(s) queued, ${plan.toCapture.length - queued} already queued, ${plan.accounts.length - plan.toCapture.length} already captured`,
  );
  return { plan, queued };
}
