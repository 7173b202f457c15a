import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import { listSnapshotRows } from '../db/balance-snapshot.repository.js';
import { migrateToLatest } from '../db/migrate.js';
import { MAX_WALLETS, startSandbox } from '../sandbox/index.js';
import { UsageError } from '../errors.js';
import { formatTable } from './output.js';
import type { CliRuntime } from './runtime.js';
import { formatSnapshotSummary } from './snapshot-command.js';

/** Groups digits in threes for reading, exactly (no float): 9007199254740993 → 9,007,199,254,740,993. */
export function groupDigits(value: bigint): string {
  const digits = (value < 0n ? -value : value).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return value < 0n ? `-${digits}` : digits;
}

/** `wallet-recon demo`: the whole job against a local emulator, nothing to install or configure. */
export function registerDemoCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('demo')
    .description('start the bundled gateway emulator, capture a snapshot into the database and print the balances')
    .option('--wallets <n>', 'how many wallets the emulator holds', '12')
    .addHelpText('after', '\nUses the embedded database in .data/ unless DATABASE_URL is set.\n\nExample:\n  npx wallet-recon demo')
    .action(async (opts: { wallets: string }) => {
      // The demo prints what matters itself; run-by-run log lines would drown it.
      runtime.defaultLogLevel = 'warn';
      const wallets = Number(opts.wallets);
      if (!Number.isInteger(wallets) || wallets < 1 || wallets > MAX_WALLETS) {
        throw new UsageError(`--wallets must be a whole number from 1 to ${MAX_WALLETS} (got "${opts.wallets}").`);
      }
      // A fresh random secret: the emulator is only reachable on loopback for this one run.
      const apiSecret = randomBytes(16).toString('hex');
      const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, apiKey: 'demo-key', apiSecret, wallets });
      try {
        runtime.output.out(`Gateway emulator listening on ${sandbox.url} with ${sandbox.wallets.length} wallets.`);
        const overrides = {
          GATEWAY_ENV: 'sandbox',
          GATEWAY_SANDBOX_URL: sandbox.url,
          GATEWAY_API_KEY: 'demo-key',
          GATEWAY_API_SECRET: apiSecret,
          RECON_ACCOUNTS_FILE: undefined,
        };
        await runtime.withContext('wallet-recon demo', { migrate: 'never', configOverrides: overrides }, async (ctx) => {
          const migrated = await migrateToLatest(ctx.database.db);
          runtime.output.out(`Database: ${ctx.database.description} (${migrated.applied.length} migration(s) applied).`);
          const result = await runSnapshotJob(ctx, { trigger: 'manual', signal: runtime.signal });
          runtime.output.out(`\n${formatSnapshotSummary(result.accounts)}`);
          const run = result.accounts[0];
          if (run?.status === 'succeeded' && run.runId !== undefined) {
            const rows = await listSnapshotRows(ctx.database.db, run.runId);
            runtime.output.out(
              `\nBalances captured in run ${run.runId} (business date ${run.businessDate}, minor units):\n` +
                formatTable(
                  ['currency', 'balance', 'single-wallet read'],
                  rows.map((r) => [r.currency, groupDigits(r.balance), r.singleBalance === null ? '' : groupDigits(r.singleBalance)]),
                ),
            );
            runtime.output.out('\nNext: "wallet-recon runs" lists the run ledger; see README.md to point wallet-recon at your gateway.');
          }
          return result.exitCode;
        });
      } finally {
        await sandbox.close();
      }
    });
}
