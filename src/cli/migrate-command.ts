import type { Command } from 'commander';
import { migrateToLatest } from '../db/migrate.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';

/** `wallet-recon migrate`: brings the schema to the latest version. */
export function registerMigrateCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('migrate')
    .description(summaryOf('migrate'))
    .addHelpText('after', '\nExample:\n  DATABASE_URL=postgres://recon@db/recon wallet-recon migrate')
    .action(async () => {
      await runtime.withContext('wallet-recon migrate', { migrate: 'never', exclusive: true }, async (ctx) => {
        const outcome = await migrateToLatest(ctx.database.db);
        const views = outcome.views.length;
        runtime.output.out(
          outcome.applied.length > 0
            ? `Applied ${outcome.applied.length} migration${outcome.applied.length === 1 ? '' : 's'} to the ${ctx.database.description}: ${outcome.applied.join(', ')}.`
            : views > 0
              ? `The migrations of the ${ctx.database.description} were all applied already (${outcome.alreadyApplied}).`
              : `The schema of the ${ctx.database.description} is up to date (${outcome.alreadyApplied} migration${outcome.alreadyApplied === 1 ? '' : 's'}).`,
        );
        if (views > 0) runtime.output.out(`Made ${views} view${views === 1 ? '' : 's'} from ${views === 1 ? 'its definition' : 'their definitions'}: ${outcome.views.join(', ')}.`);
        // On a server, the job queue's schema too: made here once, so workers never race to make it.
        if (ctx.database.kind === 'postgres') {
          const { installJobQueue } = await import('../queue/job-queue.js');
          const version = await installJobQueue(ctx.config, ctx.logger);
          runtime.output.out(`The job queue's schema "${ctx.config.queue.schema}" is ready (pg-boss schema version ${version}).`);
        }
        return 0;
      });
    });
}
