import type { AppContext } from '../app-context.js';
import { closeJobQueue, openJobQueue, type PgBoss } from './job-queue.js';
import { startQueueWorker, type QueueWorkerOptions } from './queue-worker.js';

export interface RunningQueueWorker {
  readonly boss: PgBoss;
  /** Lets jobs under way finish for `graceMs`, then interrupts them (their jobs go back to the queue) and closes. */
  stop(work: AbortController, graceMs: number): Promise<void>;
}

/** Opens the server's job queue and starts taking its jobs; the queue's schema must exist (`migrate`). */
export async function openQueueWorker(ctx: AppContext, options: QueueWorkerOptions): Promise<RunningQueueWorker> {
  const boss = await openJobQueue(ctx.config, ctx.logger, 'worker');
  try {
    await startQueueWorker(ctx, boss, options);
  } catch (error) {
    await closeJobQueue(boss, 0).catch(() => undefined);
    throw error;
  }
  ctx.logger.info({ schema: ctx.config.queue.schema, concurrency: ctx.config.accountConcurrency }, `taking jobs from the queue in schema "${ctx.config.queue.schema}", ${ctx.config.accountConcurrency} capture(s) at a time`);
  return {
    boss,
    async stop(work, graceMs) {
      const timer = setTimeout(() => work.abort(new Error('shutdown')), graceMs);
      try {
        await closeJobQueue(boss, graceMs + 5_000);
      } finally {
        clearTimeout(timer);
        work.abort(new Error('shutdown'));
      }
    },
  };
}
