import type { AppContext } from '../src/app-context.js';
import { selectAccounts } from '../src/config/index.js';
import { exhaustJobRetries } from '../src/db/job-queue.repository.js';
import { findEndOfDayCaptures } from '../src/db/snapshot-run.repository.js';
import { someAccountWithoutEndOfDay } from '../src/queue/night-progress.js';
import { QUEUES, settleKey, type PgBoss } from '../src/queue/job-queue.js';
import { captureJobOptions, jobCalendarOf, serviceOfJob, type CaptureJobData, type SettleJobData } from '../src/queue/night-jobs.js';
import type { SlotService } from '../src/scheduler/slot-schedule.js';
import { captureAccount, WORKER } from '../src/snapshot/capture-account.js';
import { raiseDateAtRisk, settleNight, type NightAccountOutcome, type ReconcileHook } from './nightly-job.js';

/** What a capture job came to: kept as the job's output, so `queue` and pg-boss's tables say it too. */
export type CaptureJobOutcome =
  | { outcome: 'captured'; runId: number; worker: string }
  | { outcome: 'already-captured'; runId: number }
  | { outcome: 'retry'; runId?: number; error: string; nextAttemptAt: string; worker: string }
  | { outcome: 'not-configured' };

/** Thrown into pg-boss when a capture job gives up at its window's close: the job fails into the dead-letter queue. */
export class CaptureWindowClosedError extends Error {}

/**
 * One capture job: one attempt for one account and business date, its own snapshot_runs row.
 * A failed attempt is re-queued as a new job of the same key starting after the next of
 * RECON_RETRY_DELAYS (the longest with refused credentials) while that is inside the window;
 * otherwise the job fails into the dead-letter queue and the date's settle job records the miss.
 * When the last account of the date is captured after its cut-off, the date is settled at once.
 */
export async function runCaptureJob(
  ctx: AppContext,
  boss: PgBoss,
  job: PgBoss.Job<CaptureJobData>,
  signal: AbortSignal,
): Promise<CaptureJobOutcome> {
  const data = job.data;
  const serve = serviceOfJob(ctx, data);
  const { window } = serve;
  const log = ctx.logger.child({ account: data.account, businessDate: data.businessDate, job: job.id, attempt: data.attempt });
  const account = ctx.config.accounts.find((a) => a.name === data.account);
  if (account === undefined) {
    log.warn(`account "${data.account}" is no longer configured: its capture job is dropped`);
    return { outcome: 'not-configured' };
  }
  // Whether the date was captured after the slot (by another worker, or by hand). The capture
  // asks it itself under the account's lock; the job asks only when it cannot capture (one round
  // trip less per job): its window closed, or another process holds the lock.
  const capturedMeanwhile = async (): Promise<CaptureJobOutcome | undefined> => {
    const already = (await findEndOfDayCaptures(ctx.database.db, [data.account], data.businessDate, serve.slot)).get(data.account);
    if (!already) return undefined;
    log.info({ capturedBy: already.runId }, `skipped: ${data.businessDate} was captured by run ${already.runId} (${already.trigger}) after the slot`);
    await settleIfComplete(ctx, boss, serve);
    return { outcome: 'already-captured', runId: already.runId };
  };
  if (ctx.clock.now() >= window.closesAt) return (await capturedMeanwhile()) ?? giveUp(ctx, job, log, 'the capture window closed before this attempt could start');

  // pg-boss fails an active job once its expiry passes, while its handler runs on: another worker
  // would then capture the same account and date beside this one. The capture stops before that,
  // so the job's outcome is the capture's own (a retry, said why) and one capture runs at a time.
  const expiryMs = job.expireInSeconds * 1000;
  const deadline = AbortSignal.timeout(Math.max(1000, expiryMs - Math.min(30_000, expiryMs / 10)));
  const result = await captureAccount(ctx, account, { trigger: 'schedule', serve, signal: AbortSignal.any([signal, deadline]) });
  if (result.runId !== undefined) ctx.metrics?.recordRun({ trigger: 'schedule', status: result.status, durationMs: result.durationMs });
  if (result.status === 'succeeded' && result.businessDate === data.businessDate) {
    await settleIfComplete(ctx, boss, serve);
    return { outcome: 'captured', runId: result.runId!, worker: WORKER };
  }
  if (result.status === 'skipped' && result.skipReason === 'already-captured') {
    await settleIfComplete(ctx, boss, serve);
    return { outcome: 'already-captured', runId: result.capturedBy ?? 0 };
  }
  if (result.status === 'skipped' && result.skipReason === 'locked') {
    const captured = await capturedMeanwhile();
    if (captured) return captured;
  }
  const error =
    deadline.aborted && !signal.aborted && result.status !== 'succeeded'
      ? `the capture job's time ran out (${job.expireInSeconds} s, RECON_QUEUE_JOB_EXPIRY) before the capture finished: it was stopped, and is tried again`
      : (result.error ?? (result.status === 'succeeded' ? `the capture finished after the window of ${data.businessDate} closed` : result.status));
  const delays = ctx.config.retryDelaysMs;
  // Refused credentials do not heal by themselves: people hear of it now, and the gateway is
  // asked again only after the longest delay.
  if (result.errorCode === 'E_AUTH') await raiseDateAtRisk(ctx, { account: data.account, businessDate: data.businessDate, windowClosesAt: window.closesAt, reason: error });
  const delay = result.errorCode === 'E_AUTH' ? Math.max(...delays) : delays[Math.min(data.attempt - 1, delays.length - 1)]!;
  const next = new Date(ctx.clock.now().getTime() + delay);
  if (signal.aborted) {
    // The worker is stopping: the same attempt goes back to the queue for another worker now.
    throw new Error(`interrupted by shutdown: ${error}`);
  }
  if (next >= window.closesAt) return giveUp(ctx, job, log, error);
  const retry: CaptureJobData = { ...data, attempt: data.attempt + 1 };
  await boss.send(QUEUES.capture, { ...retry }, captureJobOptions(ctx, retry, next));
  log.warn(
    { nextAttempt: next.toISOString(), windowClosesAt: window.closesAt.toISOString(), error },
    `account "${data.account}" not captured for ${data.businessDate} yet: next attempt at ${next.toISOString()} (the window closes at ${window.closesAt.toISOString()})`,
  );
  return { outcome: 'retry', runId: result.runId, error, nextAttemptAt: next.toISOString(), worker: WORKER };
}

async function giveUp(ctx: AppContext, job: PgBoss.Job<CaptureJobData>, log: AppContext['logger'], error: string): Promise<never> {
  const { account, businessDate } = job.data;
  await exhaustJobRetries(ctx.database.db, ctx.config.queue.schema, QUEUES.capture, job.id);
  log.warn({ error }, `capture job of account "${account}" for ${businessDate} gives up: no attempt fits before its window closes (${error}); it goes to the dead-letter queue`);
  throw new CaptureWindowClosedError(`account "${account}" was not captured for ${businessDate} inside its capture window: ${error}`);
}

/**
 * Once every account of a date has its capture and the cut-off has passed, the date is settled
 * now rather than at its window's close (the settle job of that close still runs and finds it settled).
 */
async function settleIfComplete(ctx: AppContext, boss: PgBoss, serve: SlotService): Promise<void> {
  const names = selectAccounts(ctx.config).map((a) => a.name);
  if (await someAccountWithoutEndOfDay(ctx.database.db, names, serve.window.businessDate, serve.slot)) return;
  const data: SettleJobData = { businessDate: serve.window.businessDate, slot: serve.slot.toISOString(), calendar: jobCalendarOf(ctx, serve) };
  const startAfter = new Date(Math.max(ctx.clock.now().getTime(), serve.window.cutoffAt.getTime()));
  await boss.send(QUEUES.settle, { ...data }, { singletonKey: settleKey(data.businessDate, 'captured'), startAfter });
}

/**
 * The settle job of a business date: at its window's close (or once every account is captured),
 * every account not captured is settled — missed once, with one `date.missed` across the fleet —
 * the date is reconciled and its one `night.completed` digest written.
 */
export async function runSettleJob(ctx: AppContext, job: PgBoss.Job<SettleJobData>, signal: AbortSignal, reconcile?: ReconcileHook): Promise<{ captured: number; missed: number; pending: number }> {
  const serve = serviceOfJob(ctx, job.data);
  const names = selectAccounts(ctx.config).map((a) => a.name);
  const captured = await findEndOfDayCaptures(ctx.database.db, names, serve.window.businessDate);
  const closed = ctx.clock.now() >= serve.window.closesAt;
  const outcomes: NightAccountOutcome[] = names.map((account) => ({
    account,
    status: captured.has(account) ? 'captured' : 'pending',
    attempts: 0,
    ...(captured.has(account) ? { runId: captured.get(account)!.runId } : {}),
  }));
  // Before the close, only a date with every account captured is settled; the close settles the rest.
  if (!closed && outcomes.some((o) => o.status !== 'captured')) return { captured: captured.size, missed: 0, pending: names.length - captured.size };
  const result = await settleNight(ctx, { serve, signal, reconcile, outcomes });
  if (result.interrupted) throw new Error(`settling ${serve.window.businessDate} was interrupted: it is tried again`);
  return {
    captured: result.accounts.filter((a) => a.status === 'captured').length,
    missed: result.accounts.filter((a) => a.status === 'missed').length,
    pending: result.accounts.filter((a) => a.status === 'pending').length,
  };
}
