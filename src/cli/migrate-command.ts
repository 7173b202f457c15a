import type { Command } from 'commander';
import { migrateToLatest } from '../db/migrate.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-catalog.js';

/** `wallet-recon migrate`: brings the schema to the latest version. */
export function registerMigrateCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('migrate')
    .description(summaryOf('migrate'))
    .addHelpText('after', '\nExample:\n  DATABASE_URL=postgres://recon@db/recon wallet-recon migrate')
    .action(async () => {
      await runtime.withContext('wallet-recon migrate', { migrate: 'never', exclusive: true }, async (ctx) => {
        const outcome = await migrateToLatest(ctx.database.db);
        runtime.output.out(
          outcome.applied.length === 0
            ? `The schema of the ${ctx.database.description} is up to date (${outcome.alreadyApplied} migration${outcome.alreadyApplied === 1 ? '' : 's'}).`
            : `Applied ${outcome.applied.length} migration${outcome.applied.length === 1 ? '' : 's'} to the ${ctx.database.description}: ${outcome.applied.join(', ')}.`,
        );
        return 0;
      });
    });
}
