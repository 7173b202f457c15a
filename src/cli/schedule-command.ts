import type { Command } from 'commander';
import { runNight, settleClosedDates } from '../../jobs/nightly-job.js';
import { reconcileAfterSnapshot } from '../../jobs/reconcile-job.js';
import { assertScheduleFitsWindows, businessCalendarOf, selectAccounts } from '../config.js';
import { createScheduler } from '../scheduler/scheduler.js';
import { SlotSchedule } from '../scheduler/slot-schedule.js';
import type { CliRuntime } from './runtime.js';

/** `wallet-recon schedule`: the long-running nightly worker. */
export function registerScheduleCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('schedule')
    .description('run as the nightly worker: capture every account on RECON_SCHEDULE within its capture window, retry, then reconcile')
    .addHelpText(
      'after',
      '\nEach slot serves the business date whose cut-off (RECON_CUTOFF) is nearest; accounts not captured are tried again\n' +
        '(RECON_RETRY_DELAYS) until the capture window (RECON_CAPTURE_WINDOW) closes, then the date is recorded as missed.\n' +
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
      await runtime.withContext('wallet-recon schedule', { exclusive: true, serve: true }, async (ctx) => {
        // Credentials are checked now, not at 23:55.
        selectAccounts(ctx.config);
        const schedule = new SlotSchedule(ctx.config.schedule, ctx.config.timezone);
        const scheduler = createScheduler({
          schedule,
          calendar: businessCalendarOf(ctx.config),
          clock: ctx.clock,
          logger: ctx.logger,
          resume: ctx.config.catchUp,
          settleClosed: async () => void (await settleClosedDates(ctx, schedule, reconcileAfterSnapshot)),
          runNight: async (serve, signal) => void (await runNight(ctx, { serve, signal, reconcile: reconcileAfterSnapshot })),
        });
        // A stop signal during start-up (opening the database takes seconds) means: never start.
        if (runtime.signal.aborted) return 0;
        await scheduler.start();
        await new Promise<void>((resolve) => {
          if (runtime.signal.aborted) resolve();
          runtime.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        ctx.logger.info('shutting down');
        await scheduler.stop(ctx.config.shutdownGraceMs);
        ctx.logger.info('scheduler stopped');
        return 0;
      });
    });
}
