import type { Command } from 'commander';
import { selectAccounts } from '../config/index.js';
import type { MetricsRecorder } from '../metrics/metrics.js';
import { startGatewayCapture, type GatewayCapture } from '../snapshot/gateway-capture.js';
import { formatCapturedBalances, formatSnapshotProblems, formatSnapshotSummary } from './snapshot-output.js';
import { createProgressLine } from './progress-line.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';
import { formatLocalTime } from '../business-date/local-time.js';

/** `wallet-recon snapshot`: captures every wallet balance of each account now. */
export function registerSnapshotCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('snapshot')
    .description(summaryOf('snapshot'))
    .option('--account <name>', 'only this account')
    .option('--json', 'print a machine-readable summary')
    .option('--quiet', 'print only the summary, not the balances captured')
    .addHelpText('after', '\nA capture that starts within RECON_CAPTURE_WINDOW of a cut-off is that business date\'s end-of-day snapshot; at any\nother time it is an intraday capture of the current business date (kept, never the end-of-day balance).\n\nExample:\n  wallet-recon snapshot --account eu-main\n\nPrints the balances captured, in the units of each currency, unless --quiet or --json.\n\nExit codes: 0 all succeeded, 1 an account failed, 2 configuration error, 4 another process holds an account\'s lock, 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.')
    .action(async (opts: { account?: string; json?: boolean; quiet?: boolean }) => {
      const progress = createProgressLine(runtime.output.progress);
      // Where the accounts still running were when the stop came: by the time the job returns,
      // each has finished (as interrupted) and left the progress line.
      let interruptedWhile: string | undefined;
      const noteInterruption = () => (interruptedWhile = progress.describe());
      runtime.signal.addEventListener('abort', noteInterruption, { once: true });
      // The gateway is the slow side: the accounts that start at once begin signing in, listing
      // and reading while the database opens (its driver loads, the schema is checked, the lock
      // taken); a run that then does not go ahead aborts its reads and writes nothing.
      const config = runtime.config();
      const gatewayMetrics = deferredGatewayMetrics();
      const started = new Map<string, GatewayCapture>();
      for (const account of selectAccounts(config, opts.account).slice(0, config.accountConcurrency)) {
        const logger = runtime.logger().child({ account: account.name });
        started.set(account.name, startGatewayCapture(config, account, { clock: runtime.clock, logger, signal: runtime.signal, onProgress: (p) => progress.update(p), metrics: gatewayMetrics }));
      }
      try {
        await runtime.withContext('wallet-recon snapshot', { pushJob: 'snapshot', exclusive: true }, async (ctx) => {
          gatewayMetrics.attach(ctx.metrics);
          const { runSnapshotJob } = await import('../../jobs/snapshot-job.js');
          const result = await runSnapshotJob(ctx, { trigger: 'manual', account: opts.account, signal: runtime.signal, onProgress: (p) => progress.update(p), reconcileChanged: true, started });
          progress.done();
          if (runtime.signal.aborted && interruptedWhile !== undefined) {
            // The gateway reads start while the database opens: a stop then comes before any run exists.
            const recorded = result.accounts.some((r) => r.runId !== undefined);
            if (interruptedWhile !== '') {
              runtime.output.err(`Interrupted while ${interruptedWhile}; ${recorded ? 'the run is recorded as interrupted' : 'no run had been recorded yet, nothing was written'}.`);
            } else if (recorded) {
              runtime.output.err('Interrupted once every capture had finished; each run is recorded as it ended.');
            }
          }
          const reconciled =
            (result.reReconciledDates > 0 ? `\n\nRe-reconciled ${result.reReconciledDates} date${result.reReconciledDates === 1 ? '' : 's'}: the new snapshot became their end-of-day balance.` : '') +
            [...new Map(result.awaitingCutoff.map((a) => [a.businessDate, a])).values()]
              .map((a) => `\n\n${a.businessDate} is reconciled once its cut-off passes (${formatLocalTime(a.cutoffAt, ctx.config.timezone)}): the worker, or the next command run after it, does it.`)
              .join('');
          runtime.output.out(
            opts.json
              ? JSON.stringify({ exitCode: result.exitCode, accounts: result.accounts, reReconciledDates: result.reReconciledDates, awaitingCutoff: result.awaitingCutoff }, null, 2)
              : formatSnapshotSummary(result.accounts, { withProblems: false }) + reconciled,
          );
          if (!opts.json && !opts.quiet) {
            for (const run of result.accounts) {
              const balances = await formatCapturedBalances(ctx, run);
              if (balances !== undefined) runtime.output.out(`\n${balances}`);
            }
          }
          // Last, so a failure is the last thing on the screen, not above a long balance table.
          const problems = opts.json ? '' : formatSnapshotProblems(result.accounts);
          if (problems !== '') runtime.output.out(`\n${problems}`);
          return result.exitCode;
        });
      } finally {
        runtime.signal.removeEventListener('abort', noteInterruption);
        // Unclaimed captures (the database did not open, say) stop before the line is cleared.
        for (const capture of started.values()) {
          capture.abort(new Error('the snapshot run did not go ahead'));
          capture.close();
        }
        progress.done();
      }
    });
}

/** Gateway requests counted before the metrics exist (they need the database): kept, then handed over. */
function deferredGatewayMetrics(): Pick<MetricsRecorder, 'recordGatewayRequest'> & { attach(metrics: MetricsRecorder | undefined): void } {
  let early: Array<[string, number | undefined]> | undefined = [];
  let target: MetricsRecorder | undefined;
  return {
    recordGatewayRequest(path, status) {
      if (target) target.recordGatewayRequest(path, status);
      else early?.push([path, status]);
    },
    attach(metrics) {
      target = metrics;
      for (const [path, status] of early ?? []) metrics?.recordGatewayRequest(path, status);
      early = undefined;
    },
  };
}
