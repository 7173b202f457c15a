import type { Command } from 'commander';
import { addDays } from '../business-date/zoned-time.js';
import { businessCalendarOf } from '../config/index.js';
import { countQueueJobs, type QueueCounts } from '../db/job-queue.repository.js';
import { UsageError } from '../errors.js';
import type { JobCalendar } from '../queue/night-jobs.js';
import type { AppContext } from '../app-context.js';
import { formatTable } from '../text-table.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';
import { formatLocalTime } from '../business-date/local-time.js';

// The queues a night is made of, in the order printed; which dead-letter queue each has is pg-boss's to say.
const NIGHT_QUEUES = ['capture', 'settle-date', 'maintain'] as const;

function assertServer(ctx: AppContext): void {
  if (ctx.database.kind !== 'postgres') {
    throw new UsageError('The job queue exists on a PostgreSQL server only (DATABASE_URL): on the embedded database the worker runs its night in process. "wallet-recon runs" lists its captures.');
  }
}

/** Jobs created since the previous business date's capture window opened: the current and previous night. */
function nightsStart(ctx: AppContext): Date {
  const calendar = businessCalendarOf(ctx.config);
  const current = calendar.nearestCutoff(ctx.clock.now()).businessDate;
  return calendar.windowOf(addDays(current, -1)).opensAt;
}

/** `wallet-recon queue`: what the fleet's job queue holds, and re-queuing a dead-lettered capture. */
export function registerQueueCommand(program: Command, runtime: CliRuntime): void {
  const queue = program
    .command('queue')
    .description(summaryOf('queue'))
    .option('--json', 'print JSON: an array of { queue, created, active, retry, completed, failed, dead_letter, oldest_waiting_seconds }')
    .addHelpText(
      'after',
      '\nCounts the jobs of the current and previous night (created since the previous business date\'s capture window opened):\n' +
        'created = waiting for a first attempt, retry = waiting for a later one, dead_letter = captures still failing when their window\n' +
        'closed. oldest_waiting_seconds: how long the longest-due job not yet taken has waited.\n\n' +
        'Examples:\n  wallet-recon queue\n  wallet-recon queue --json\n  wallet-recon queue retry 3f1c…   (an id from the dead-letter queue)',
    )
    .action(async (opts: { json?: boolean }) => {
      await runtime.withContext('wallet-recon queue', {}, async (ctx) => {
        assertServer(ctx);
        const since = nightsStart(ctx);
        const { openJobQueue, closeJobQueue } = await import('../queue/job-queue.js');
        const boss = await openJobQueue(ctx.config, ctx.logger, 'command');
        let counts: QueueCounts[];
        try {
          // The queues and their dead-letter queues through pg-boss's API; the counts per state of
          // a period have no API in pg-boss 10 (getQueueSize counts what waits, of all time).
          const known = new Map((await boss.getQueues()).map((q) => [q.name, q]));
          const queues = NIGHT_QUEUES.map((name) => ({ name, ...(known.get(name)?.deadLetter ? { deadLetter: known.get(name)!.deadLetter! } : {}) }));
          counts = await countQueueJobs(ctx.database.db, ctx.config.queue.schema, queues, since, ctx.clock.now());
        } finally {
          await closeJobQueue(boss, 0);
        }
        if (opts.json) {
          runtime.output.out(JSON.stringify(counts, null, 2));
          return 0;
        }
        runtime.output.out(`Jobs created since ${formatLocalTime(since, ctx.config.timezone)} (the current and previous night), schema "${ctx.config.queue.schema}":`);
        runtime.output.out(formatTable(['queue', 'created', 'active', 'retry', 'completed', 'failed', 'dead letter', 'oldest waiting'], counts.map(rowOf)));
        return 0;
      });
    });

  queue
    .command('retry <id>')
    .description('re-queue a dead-lettered capture job while its business date\'s capture window is still open')
    .action(async (id: string) => {
      await runtime.withContext('wallet-recon queue retry', {}, async (ctx) => {
        assertServer(ctx);
        const { openJobQueue, closeJobQueue, QUEUES } = await import('../queue/job-queue.js');
        const { captureJobOptions, serviceOfJob } = await import('../queue/night-jobs.js');
        const boss = await openJobQueue(ctx.config, ctx.logger, 'command');
        try {
          const unknown = `There is no dead-lettered job ${id} in the queue "${QUEUES.captureDead}". "wallet-recon queue" counts them; their ids are in ${ctx.config.queue.schema}.job (name '${QUEUES.captureDead}').`;
          // pg-boss's ids are UUIDs: anything else is no job (and would be a SQL error in its lookup).
          if (!UUID.test(id)) throw new UsageError(unknown);
          const dead = await boss.getJobById<{ account?: unknown; businessDate?: unknown; slot?: unknown; calendar?: JobCalendar }>(QUEUES.captureDead, id, { includeArchive: true });
          if (dead === null) throw new UsageError(unknown);
          if (dead.state !== 'created') throw new UsageError(`The dead-lettered job ${id} was already re-queued or removed (state ${dead.state}).`);
          const data = dead.data ?? {};
          if (typeof data.account !== 'string' || typeof data.businessDate !== 'string' || typeof data.slot !== 'string') {
            throw new UsageError(`The dead-lettered job ${id} does not name an account, business date and slot: it is not a capture job of this version.`);
          }
          // The window the job was planned with, as its data carries it.
          const { window } = serviceOfJob(ctx, { businessDate: data.businessDate, slot: data.slot, calendar: data.calendar });
          if (ctx.clock.now() >= window.closesAt) {
            throw new UsageError(
              `The capture window of ${data.businessDate} closed at ${formatLocalTime(window.closesAt, ctx.config.timezone)}: a capture now would not be its end-of-day balance, so job ${id} is not re-queued. The date stays missed.`,
            );
          }
          const retry = { account: data.account, businessDate: data.businessDate, slot: data.slot, attempt: 1, ...(data.calendar === undefined ? {} : { calendar: data.calendar }) };
          const newId = await boss.send(QUEUES.capture, { ...retry }, captureJobOptions(ctx, retry, ctx.clock.now()));
          if (newId === null) throw new UsageError(`A capture job of account "${data.account}" for ${data.businessDate} is already waiting or running: nothing was re-queued.`);
          await boss.deleteJob(QUEUES.captureDead, id);
          runtime.output.out(`Re-queued: capture job ${newId} for account "${data.account}", business date ${data.businessDate} (dead-lettered job ${id} removed). A worker takes it now.`);
        } finally {
          await closeJobQueue(boss, 0);
        }
        return 0;
      });
    });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function rowOf(c: QueueCounts): string[] {
  return [c.queue, String(c.created), String(c.active), String(c.retry), String(c.completed), String(c.failed), String(c.dead_letter), c.oldest_waiting_seconds === null ? '' : `${c.oldest_waiting_seconds} s`];
}
