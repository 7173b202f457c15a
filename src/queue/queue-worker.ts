import { runCaptureJob, runSettleJob } from '../../jobs/queued-night-job.js';
import type { ReconcileHook } from '../../jobs/nightly-job.js';
import type { AppContext } from '../app-context.js';
import { QUEUES, type PgBoss } from './job-queue.js';
import type { CaptureJobData, SettleJobData } from './night-jobs.js';

export interface QueueWorkerOptions {
  reconcile?: ReconcileHook;
  /** The minute's round (books pulls, owed results, sign-off checks, dates left unsettled): one job a minute for the fleet. */
  maintain(signal: AbortSignal): Promise<void>;
  /** After a job that may have written notifications: send them now. */
  afterJob(): void;
  /** Stops captures (aborted once the shutdown grace is over: a capture under way may finish). */
  signal: AbortSignal;
  /**
   * Stops settling a date and the minute's round, between accounts, as soon as the worker stops:
   * what they leave is done again (the settle job is retried, the next minute's job comes).
   */
  maintainSignal: AbortSignal;
}

// How often an idle worker asks for work: pg-boss's least (0.5 s) would poll 2×concurrency
// queries a second per worker for nothing; 1 s keeps a night's start prompt.
const POLL_SECONDS = 1;

/**
 * Makes this process one of the fleet's workers: it takes capture jobs RECON_ACCOUNT_CONCURRENCY
 * at a time, settle jobs one at a time, and the minute's maintenance when it comes up. Which
 * worker captures an account is pg-boss's decision alone (one active job per account and date).
 */
export async function startQueueWorker(ctx: AppContext, boss: PgBoss, options: QueueWorkerOptions): Promise<{ idle(): Promise<void> }> {
  const { signal } = options;
  // Handlers under way: pg-boss stops waiting for them at its timeout, while they still write to
  // the database; the worker closes its pools only once they have ended.
  const running = new Set<Promise<unknown>>();
  const tracked = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    void work.then(
      () => running.delete(work),
      () => running.delete(work),
    );
    return work;
  };
  for (let i = 0; i < ctx.config.accountConcurrency; i++) {
    const self: { id?: string } = {};
    self.id = await boss.work<CaptureJobData>(QUEUES.capture, { batchSize: 1, pollingIntervalSeconds: POLL_SECONDS }, async ([job]) => {
      try {
        return await tracked(runCaptureJob(ctx, boss, job!, signal));
      } finally {
        options.afterJob();
        // A job done means more may be waiting: ask again at once instead of after the polling
        // interval (pg-boss waits it out after every job otherwise, one job a second per slot).
        if (self.id !== undefined) boss.notifyWorker(self.id);
      }
    });
  }
  await boss.work<SettleJobData>(QUEUES.settle, { batchSize: 1, pollingIntervalSeconds: POLL_SECONDS }, async ([job]) => {
    try {
      return await tracked(runSettleJob(ctx, job!, options.maintainSignal, options.reconcile));
    } finally {
      options.afterJob();
    }
  });
  await boss.work(QUEUES.maintain, { batchSize: 1, pollingIntervalSeconds: POLL_SECONDS }, async () => {
    await tracked(options.maintain(options.maintainSignal));
    options.afterJob();
  });
  // pg-boss's cron makes one job a minute for the whole fleet, whichever worker's clock ticks first.
  await boss.schedule(QUEUES.maintain, '* * * * *', {}, { singletonKey: 'maintain' });
  return {
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
