import { setMaxListeners } from 'node:events';
import type { AppContext } from '../app-context.js';
import { closeJobQueue, openJobQueue, type PgBoss } from './job-queue.js';
import { startQueueWorker, type QueueWorkerOptions } from './queue-worker.js';

export interface RunningQueueWorker {
  readonly boss: PgBoss;
  /**
   * Stops taking jobs, interrupts settling and the minute's round at once (between accounts:
   * the settle job is retried), lets captures under way finish for `graceMs`, then interrupts
   * them (their jobs go back to the queue) and closes.
   */
  stop(graceMs: number): Promise<void>;
}

/** Opens the server's job queue and starts taking its jobs; the queue's schema must exist (`migrate`). */
export async function openQueueWorker(ctx: AppContext, options: Omit<QueueWorkerOptions, 'signal' | 'maintainSignal'>): Promise<RunningQueueWorker> {
  const work = new AbortController();
  const housekeeping = new AbortController();
  // Every capture under way listens to it: RECON_ACCOUNT_CONCURRENCY of them, often more than 10.
  setMaxListeners(0, work.signal);
  const boss = await openJobQueue(ctx.config, ctx.logger, 'worker');
  let worker: { idle(): Promise<void> };
  try {
    worker = await startQueueWorker(ctx, boss, { ...options, signal: work.signal, maintainSignal: housekeeping.signal });
  } catch (error) {
    await closeJobQueue(boss, 0).catch(() => undefined);
    throw error;
  }
  ctx.logger.info({ schema: ctx.config.queue.schema, concurrency: ctx.config.accountConcurrency }, `taking jobs from the queue in schema "${ctx.config.queue.schema}", ${ctx.config.accountConcurrency} capture(s) at a time`);
  return {
    boss,
    async stop(graceMs) {
      housekeeping.abort(new Error('shutdown'));
      const timer = setTimeout(() => work.abort(new Error('shutdown')), graceMs);
      try {
        // Handlers pg-boss stopped waiting for are interrupted, and their end awaited, before the
        // queue's pool closes (and, after this returns, the database's): none writes to a closed pool.
        await closeJobQueue(boss, graceMs, async () => {
          clearTimeout(timer);
          work.abort(new Error('shutdown'));
          await worker.idle();
        });
      } finally {
        clearTimeout(timer);
        work.abort(new Error('shutdown'));
      }
    },
  };
}
