import type { Command } from 'commander';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import { prepareCleanDates } from '../signoff/auto-prepare.js';
import { bankAccountNamed, bankBooksOn } from '../config/index.js';
import { findFirstCapturableDates } from '../db/capture-day.repository.js';
import { numberStyleOf } from '../money/number-style.js';
import { latestClosedDateOf, parseBusinessDate, todayOf } from '../reconciliation/business-dates.js';
import { resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import { summarizeResults } from '../reports/report-data.js';
import { renderTable } from '../reports/render-table.js';
import { renderJson } from '../reports/render-json.js';
import { listResultsOfDate } from '../db/reconciliation-result.repository.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';

/** `wallet-recon reconcile`: compares a business date's snapshot with the books and stores the results. */
export function registerReconcileCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('reconcile')
    .description(summaryOf('reconcile'))
    .option('--date <date>', 'business date YYYY-MM-DD (default: the latest business date whose cut-off has passed, for the bank accounts and the gateway accounts captured on or before it)')
    .option('--account <name>', 'only this account (default: every configured account)')
    .option('--json', 'print the results as report --format json does: { summary, results: [{ ..., difference, items_total, unexplained, formatted }] }')
    .addHelpText(
      'after',
      '\nExample:\n  wallet-recon reconcile --date 2026-11-20 --account eu-main\n\nExit codes: 0 everything matched, 3 a break, a missing side, an endpoint mismatch, a disappeared wallet, a wallet of unknown decimals or no snapshot, 1 error, 2 usage or configuration error (also a date after the current business date, or a signed-off date whose results would change), 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.',
    )
    .action(async (opts: { date?: string; account?: string; json?: boolean }) => {
      // Not a real date: refused before the database is opened; after today: refused on the context's clock.
      const date = opts.date === undefined ? undefined : parseBusinessDate(opts.date, '--date');
      await runtime.withContext('wallet-recon reconcile', { pushJob: 'reconcile' }, async (ctx) => {
        const today = todayOf(ctx);
        const businessDate = date === undefined ? latestClosedDateOf(ctx) : parseBusinessDate(date, '--date', today);
        let accounts: string[] | undefined;
        if (date === undefined) {
          // Without --date, only gateway accounts the tool could have captured on that date: on a
          // first run the latest closed date is the day before the tool existed, which has no
          // missing snapshot. A bank account is never captured: its date is reconciled from its
          // statement, or is awaiting_statement until the statement comes.
          const names = resolveAccountNames(ctx.config, opts.account);
          const gateway = names.filter((a) => bankAccountNamed(ctx.config, a) === undefined);
          const first = await findFirstCapturableDates(ctx.database.db, gateway);
          accounts = names.filter((a) => !gateway.includes(a) || (first.has(a) && first.get(a)! <= businessDate));
          for (const account of names.filter((a) => !accounts!.includes(a))) {
            const since = first.get(account);
            runtime.output.out(
              `Not reconciled: account "${account}" ${since === undefined ? 'has never been captured' : `was first captured for ${since}`}, so ${businessDate} (the latest business date whose cut-off has passed) could not have been captured.${since === undefined ? '' : ` Run "wallet-recon reconcile --date ${since}" once its cut-off has passed.`}`,
            );
          }
          if (accounts.length === 0) return 0;
        }
        const result = await runReconcileJob(ctx, { date: businessDate, account: opts.account, ...(accounts === undefined ? {} : { accounts }) });
        // A settled date that came out clean prepares itself (and is approved by rule with certify: auto).
        await prepareCleanDates(ctx, [businessDate]);
        const range = { from: businessDate, to: businessDate, account: opts.account };
        if (opts.json === true) {
          // Each result with the time it was stored, as the JSON report gives it.
          const stored = await listResultsOfDate(ctx.database.db, businessDate, [...new Set(result.results.map((r) => r.account))]);
          const computedAt = new Map(stored.map((s) => [`${s.account}|${s.currency ?? ''}`, s.computedAt]));
          const timed = result.results.map((r) => ({ ...r, computedAt: computedAt.get(`${r.account}|${r.currency ?? ''}`) ?? ctx.clock.now(), caseId: r.case?.id ?? null }));
          runtime.output.out(renderJson(summarizeResults(range, timed), { tolerance: ctx.config.tolerance }).trimEnd());
        } else {
          // A bank account whose calendar closes the date has no result, and says why (never "no results stored").
          const reconciled = accounts ?? resolveAccountNames(ctx.config, opts.account);
          const closed = reconciled.filter((a) => !result.results.some((r) => r.account === a) && !bankBooksOn(bankAccountNamed(ctx.config, a)?.calendar, businessDate));
          for (const account of closed) runtime.output.out(`${account}: its bank does not book on ${businessDate} (the bank account's calendar), so no statement is due and it has no result for the date.`);
          if (closed.length < reconciled.length || result.results.length > 0) {
            runtime.output.out(renderTable(summarizeResults(range, result.results), { tolerance: ctx.config.tolerance, style: numberStyleOf(ctx.config.locale) }));
          }
        }
        return result.exitCode;
      });
    });
}
