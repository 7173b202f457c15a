import type { Command } from 'commander';
import { runNight, settleClosedDates } from '../../jobs/nightly-job.js';
import { BooksPuller } from '../../jobs/books-pull-job.js';
import { reconcileAfterSnapshot, settleOwedReconciliations } from '../../jobs/reconcile-job.js';
import { prepareCleanRecentDates } from '../signoff/auto-prepare.js';
import { todayOf } from '../reconciliation/business-dates.js';
import { detectSignoffChanges } from '../signoff/signoff-service.js';
import type { AppContext } from '../app-context.js';
import { assertScheduleFitsWindows, businessCalendarOf, selectAccounts } from '../config/index.js';
import { startMetricsServer, checkHealth, type MetricsServer } from '../metrics/metrics-server.js';
import { Metrics } from '../metrics/metrics.js';
import { Deliverer } from '../notifications/deliverer.js';
import { createChannels } from '../notifications/create-channels.js';
import { createScheduler } from '../scheduler/scheduler.js';
import { SlotSchedule } from '../scheduler/slot-schedule.js';
import { openQueueWorker, type RunningQueueWorker } from '../queue/open-queue-worker.js';
import { queueNight } from '../queue/night-jobs.js';
import { assertWorkerFollowsCalendar } from '../business-date/stored-calendar.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';

/** `wallet-recon schedule`: the long-running nightly worker. */
export function registerScheduleCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('schedule')
    .description(summaryOf('schedule'))
    .addHelpText(
      'after',
      '\nEach slot serves the business date whose cut-off (RECON_CUTOFF) is nearest; accounts not captured are tried again\n' +
        '(RECON_RETRY_DELAYS) until the capture window (RECON_CAPTURE_WINDOW) closes, then the date is recorded as missed.\n' +
        'Settled nights and missed dates are sent to the configured channels (RECON_WEBHOOK_URL, RECON_SLACK_WEBHOOK_URL,\n' +
        'RECON_SMTP_URL) through the notifications outbox; RECON_METRICS_PORT serves /metrics and /healthz.\n' +
        'On a PostgreSQL server the night is jobs in the queue "wallet-recon migrate" creates (RECON_QUEUE_SCHEMA): start this\n' +
        'command on any number of machines and they share them, RECON_ACCOUNT_CONCURRENCY each ("wallet-recon queue" shows them).\n' +
        'Logs JSON lines on stdout. SIGTERM stops it gracefully (RECON_SHUTDOWN_GRACE_MS).\n\n' +
        'Example:\n  RECON_SCHEDULE="55 23 * * *" RECON_CUTOFF=00:00 RECON_TIMEZONE=Europe/Berlin wallet-recon schedule',
    )
    .action(async () => {
      runtime.logFd = 1;
      runtime.exitOnSignal = false;
      runtime.defaultLogLevel = 'info';
      runtime.shutdown.forceExitAfterMs = runtime.config().shutdownGraceMs + 9_500;
      // Refused before the database is opened: nothing is touched.
      assertScheduleFitsWindows(runtime.config());
      await runtime.withContext('wallet-recon schedule', { exclusive: true, serve: true, ownCalendarCheck: true }, async (withConfig) => {
        // A worker that reads the night otherwise than the database's calendar does not start; the
        // first to start records its own settings as the calendar.
        const opened: AppContext = { ...withConfig, config: await assertWorkerFollowsCalendar(withConfig.database.db, runtime.config(), withConfig.clock.now()) };
        // Credentials are checked now, not at 23:55.
        const names = selectAccounts(opened.config).map((a) => a.name);
        const { db } = opened.database;
        const metrics = new Metrics({ perAccount: opened.config.metrics.perAccount, accounts: names, bankAccounts: opened.config.bankAccounts.map((b) => b.name), processDefaults: true, db, ...(opened.database.kind === 'postgres' ? { queueSchema: opened.config.queue.schema } : {}) });
        const ctx: AppContext = { ...opened, metrics };
        const channels = createChannels(ctx.config, db, () => ctx.clock.now());
        const deliverer = new Deliverer({ db, clock: ctx.clock, logger: ctx.logger.child({ component: 'notifications' }), channels, maxAttempts: ctx.config.notifications.maxAttempts, leaseMs: ctx.config.notifications.leaseMs, metrics });
        const schedule = new SlotSchedule(ctx.config.schedule, ctx.config.timezone);
        const booksPuller = new BooksPuller();
        // Every minute: dates left unsettled by another process, books due from the ledger
        // database, whatever anyone left owed, and sign-offs whose inputs changed since.
        const maintain = async (signal: AbortSignal) => {
          await settleClosedDates(ctx, schedule, reconcileAfterSnapshot, signal);
          await booksPuller.pullDue(ctx, signal);
          await settleOwedReconciliations(ctx, { signal });
          await detectSignoffChanges(ctx);
          await prepareCleanRecentDates(ctx, todayOf(ctx).date);
          deliverer.wake();
        };
        // On a PostgreSQL server the night is jobs any number of workers share; the embedded
        // database (one process) runs it in process. Both plan a slot the same way (planNight).
        let queue: RunningQueueWorker | undefined;
        const scheduler = createScheduler({
          schedule,
          calendar: businessCalendarOf(ctx.config),
          clock: ctx.clock,
          logger: ctx.logger,
          resume: ctx.config.catchUp,
          settleClosed: async () => {
            await settleClosedDates(ctx, schedule, reconcileAfterSnapshot);
            deliverer.wake();
          },
          runNight: async (serve, signal) => {
            if (queue) {
              await queueNight(ctx, queue.boss, serve);
              return;
            }
            await runNight(ctx, { serve, signal, reconcile: reconcileAfterSnapshot });
            // The night's notifications are in the outbox: send them now, not at the next poll.
            deliverer.wake();
          },
          // The queue's cron job does the minute's round once for the fleet; in process, the loop does.
          ...(ctx.database.kind === 'postgres' ? {} : { maintain }),
        });
        // A stop signal during start-up (opening the database takes seconds) means: never start.
        if (runtime.signal.aborted) return 0;
        let server: MetricsServer | undefined;
        const { port, host } = ctx.config.metrics;
        let schedulerAlive = false;
        if (port !== undefined) {
          server = await startMetricsServer({ host, port, metrics, logger: ctx.logger, health: () => checkHealth(db, () => schedulerAlive) });
          ctx.logger.info({ url: server.url }, `metrics on ${server.url}/metrics, health on ${server.url}/healthz`);
        }
        if (channels.size > 0) ctx.logger.info({ channels: [...channels.values()].map((c) => c.target) }, `notifications go to: ${[...channels.values()].map((c) => c.target).join('; ')}`);
        const stopDelivering = new AbortController();
        const delivering = deliverer.run(stopDelivering.signal);
        try {
          // After the metrics port is had: a worker refused at start leaves no job half taken.
          if (ctx.database.kind === 'postgres') queue = await openQueueWorker(ctx, { reconcile: reconcileAfterSnapshot, maintain, afterJob: () => deliverer.wake() });
          await scheduler.start();
          schedulerAlive = true;
          void scheduler.stopped.then(() => (schedulerAlive = false));
          await new Promise<void>((resolve) => {
            if (runtime.signal.aborted) resolve();
            runtime.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          ctx.logger.info('shutting down');
          await scheduler.stop(ctx.config.shutdownGraceMs);
          if (queue) await queue.stop(ctx.config.shutdownGraceMs);
          ctx.logger.info('scheduler stopped');
        } finally {
          // A worker that failed to start (or whose scheduler threw) closes its queue too; a second stop is a no-op.
          await queue?.stop(0);
          // A send under way finishes (or times out) first: its row is then recorded, not left leased.
          stopDelivering.abort();
          await delivering;
          for (const channel of channels.values()) channel.close?.();
          await server?.close();
        }
        return 0;
      });
    });
}
