import type { Command } from 'commander';
import { runBackfillJob, type BackfillAccountDay, type BackfillDate, type BackfillJobResult } from '../../jobs/backfill-job.js';
import { createProgressBar } from './progress-line.js';
import { prepareCleanDates } from '../signoff/auto-prepare.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';
import { formatLocalTime } from '../business-date/local-time.js';

function describeDay(day: BackfillAccountDay, result: Pick<BackfillJobResult, 'dryRun' | 'source'>): string {
  const run = day.runId === undefined ? '' : ` (run ${day.runId})`;
  switch (day.action) {
    case 'existing':
      return `already captured${run}`;
    case 'capture':
      if (result.dryRun) return 'would capture now (its capture window is open)';
      return day.error === undefined ? `captured now${run}` : `capture failed: ${day.error}`;
    case 'import':
      return result.dryRun ? `would import from ${result.source}` : `imported from ${result.source}${run}`;
    case 'pending':
      return `pending: its cut-off is still ahead${day.runId === undefined ? '' : ` (intraday run ${day.runId} so far)`}`;
    case 'gap':
      return result.source === undefined ? 'GAP (past date: the gateway cannot report it; use --import)' : `GAP (not in ${result.source})`;
    case 'statement':
      return 'a bank account: its balances come from its bank statements ("wallet-recon statements import")';
    case 'untracked':
      return `GAP, not tracked yet (before the account's first capture or books, ${day.firstTrackedDate}; not reconciled, no case)`;
  }
}

/** One line per business date: where its snapshot comes from, then matched, not matched (of which breaks) and gaps. */
export function formatBackfillLine(date: BackfillDate, result: Pick<BackfillJobResult, 'dryRun' | 'source'>): string {
  const sources =
    date.accounts.length === 1 ? describeDay(date.accounts[0]!, result) : date.accounts.map((d) => `${d.account}: ${describeDay(d, result)}`).join('; ');
  const counts = date.pending
    ? 'not reconciled yet'
    : date.accounts.every((d) => d.action === 'untracked')
      ? `not reconciled (no account tracked yet)  gaps ${date.gaps}`
      : date.summary === undefined
        ? !result.dryRun && date.accounts.some((a) => a.action === 'capture' && a.error === undefined)
          ? `reconciled once its cut-off passes  gaps ${date.gaps}`
          : `gaps ${date.gaps}`
        : `matched ${date.summary.matched}  not matched ${date.unmatched} (breaks ${date.summary.break})  gaps ${date.gaps}`;
  return `${date.businessDate}  ${sources}  ${counts}`;
}

/** `wallet-recon backfill`: fills what can be filled over a range, reports the gaps, reconciles every date. */
export function registerBackfillCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('backfill')
    .description(summaryOf('backfill'))
    .requiredOption('--from <date>', 'first business date YYYY-MM-DD')
    .requiredOption('--to <date>', 'last business date YYYY-MM-DD (the current business date at the latest)')
    .option('--account <name>', 'only this account')
    .option('--import <file>', "the gateway's statements for past dates: its own integer balances, read in the gateway's unit (see below)")
    .option('--dry-run', 'print the plan and write nothing')
    .addHelpText(
      'after',
      "\nThe gateway reports only current balances: a day can be captured only while its capture window is open.\nClosed dates without an end-of-day snapshot are filled from --import, or reported as gaps (dates before an\naccount's first capture too: not reconciled, no case, but a gap); dates whose\ncut-off is still ahead are pending (not a gap, not reconciled). Each date prints matched, not matched\n(of which breaks) and gaps.\n\nThe statements file is a CSV, .xlsx or JSON lines file with business_date, currency, balance (and account\nwhen it holds several accounts), like a books file, but each balance is the gateway's own integer, read as a\ncapture reads it: in GATEWAY_AMOUNT_UNIT (minor: GBP 45000 is 450.00; major: GBP 45000 is 45,000) and\nGATEWAY_AMOUNT_DECIMALS_<CUR>, or the account's amountUnit and amountDecimals in the accounts file. A code\nwithout ISO 4217 decimals needs GATEWAY_AMOUNT_DECIMALS_<CUR>. It is not the books' major units.\n\nExample:\n  wallet-recon backfill --from 2026-11-18 --to 2026-11-20 --import statements.csv\n\nExit codes: 0 every closed date has a snapshot and reconciles clean, 3 gaps or results that did not match remain, 1 error, 2 usage or configuration error or a capture for a signed-off date (nothing written), 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.",
    )
    .action(async (opts: { from: string; to: string; account?: string; import?: string; dryRun?: boolean }) => {
      await runtime.withContext('wallet-recon backfill', { pushJob: 'backfill', exclusive: true }, async (ctx) => {
        const progress = createProgressBar(runtime.output.progress);
        const result = await runBackfillJob(ctx, {
          from: opts.from,
          to: opts.to,
          account: opts.account,
          importFile: opts.import,
          dryRun: opts.dryRun,
          signal: runtime.signal,
          onProgress: (done, total) => progress.update(done, total),
        });
        progress.done();
        // Every settled date the backfill brought in clean prepares itself for sign-off.
        if (!result.dryRun) await prepareCleanDates(ctx, result.dates.filter((d) => d.summary !== undefined).map((d) => d.businessDate));
        const out = runtime.output;
        if (result.dryRun) out.out('Dry run: nothing will be written. The plan:');
        for (const date of result.dates) out.out(formatBackfillLine(date, result));
        if (result.unusedStatementRows > 0) out.out(`${result.unusedStatementRows} row(s) of ${result.source} were not used: their dates are outside the range's past gaps.`);
        // Advice by case: statements fill only closed dates; a date whose window is still open
        // lacks its snapshot because the capture failed, and the fix is the failure's cause.
        const gaps = result.dates.filter((d) => d.accounts.some((a) => a.action === 'gap' || a.action === 'untracked')).map((d) => d.businessDate);
        const failedCaptures = result.dates.filter((d) => d.accounts.some((a) => a.action === 'capture' && a.error !== undefined));
        const unmatched = result.dates.filter((d) => d.unmatched > 0).map((d) => d.businessDate);
        if (gaps.length > 0) out.out(`${result.dryRun ? 'Would leave gaps' : 'Gaps remain'} on ${gaps.join(', ')}: import the gateway's statements for them with --import FILE.`);
        for (const date of failedCaptures) {
          out.out(
            `The capture of ${date.businessDate} failed while its capture window is still open (until ${formatLocalTime(date.windowClosesAt, ctx.config.timezone)}): the gateway can still report that day, so no statements are needed. Fix what the failure above says (for a refused API key or secret, the account's credentials) and run backfill again before the window closes, or let the worker capture it.`,
          );
        }
        if (unmatched.length > 0) out.out(`Results that did not match on ${unmatched.join(', ')}: see "wallet-recon report --from ${opts.from} --to ${opts.to}".`);
        if (!result.dryRun && result.exitCode === 0) out.out('Every date has a snapshot and reconciles clean.');
        return result.exitCode;
      });
    });
}
