import type { Command } from 'commander';
import { runNightlyJob, slotNeedsCatchUp } from '../../jobs/nightly-job.js';
import { reconcileAfterSnapshot } from '../../jobs/reconcile-job.js';
import { selectAccounts } from '../config.js';
import { nodeCronDriver } from '../scheduler/cron-driver.js';
import { createScheduler } from '../scheduler/scheduler.js';
import type { CliRuntime } from './runtime.js';

/** `wallet-recon schedule`: the long-running nightly worker. */
export function registerScheduleCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('schedule')
    .description('run as the nightly worker: snapshot every account on RECON_SCHEDULE, then reconcile it')
    .addHelpText('after', '\nLogs JSON lines on stdout. SIGTERM stops it gracefully (RECON_SHUTDOWN_GRACE_MS).\n\nExample:\n  RECON_SCHEDULE="55 23 * * *" RECON_TIMEZONE=Europe/Berlin wallet-recon schedule')
    .action(async () => {
      runtime.logFd = 1;
      runtime.defaultLogLevel = 'info';
      runtime.shutdown.forceExitAfterMs = runtime.config().shutdownGraceMs + 9_500;
      await runtime.withContext('wallet-recon schedule', {}, async (ctx) => {
        // Credentials are checked now, not at 23:55.
        selectAccounts(ctx.config);
        const scheduler = createScheduler({
          expression: ctx.config.schedule,
          timezone: ctx.config.timezone,
          clock: ctx.clock,
          logger: ctx.logger,
          driver: nodeCronDriver,
          catchUp: ctx.config.catchUp,
          needsCatchUp: (slot) => slotNeedsCatchUp(ctx, slot),
          runTick: async (slot, signal) => {
            await runNightlyJob(ctx, { slot, signal, reconcile: reconcileAfterSnapshot });
          },
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
