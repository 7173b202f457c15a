import type { Command } from 'commander';
import type { AppContext } from '../app-context.js';
import { booksSqlSourceOf, entriesSqlSourceOf, pullBooks, pullEntries } from '../books/index.js';
import { ConfigError } from '../errors.js';
import { numberStyleOf } from '../money/number-style.js';
import { parseBusinessDate, todayOf } from '../reconciliation/business-dates.js';
import { resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';
import { describeEntriesImport, describeImport, reconcileFailureAdvice } from './ledger-command.js';

/** `wallet-recon books pull`: reads the books of a date from the merchant's ledger database by hand. */
export function registerBooksCommand(program: Command, runtime: CliRuntime): void {
  const books = program.command('books').description(summaryOf('books'));
  books
    .command('pull')
    .description("run each account's books query (and entries query) against the ledger database (RECON_BOOKS_DATABASE_URL) for a business date and import what they return")
    .requiredOption('--date <date>', 'business date YYYY-MM-DD, given to the query as $1')
    .option('--account <name>', 'only this account, given to the query as $2 (default: every account with a books query)')
    .option('--dry-run', 'print what would change and write nothing')
    .addHelpText(
      'after',
      "\nThe query (RECON_BOOKS_SQL_FILE, or an account's books.sqlFile in the accounts file) runs in a read-only\ntransaction with RECON_BOOKS_STATEMENT_TIMEOUT, gets $1 the business date (text YYYY-MM-DD; write $1::date)\nand $2 the account name, and returns the columns currency and balance (numeric, major units). Its rows are\nchecked like a books file's and imported with source sql:<query file name>; books equal to those stored are\nnot imported again.\n\nThe entries query (RECON_BOOKS_ENTRIES_SQL_FILE, or books.entriesSqlFile), when configured, runs the same\nway and returns the columns of ledger import --entries (booking_date, currency, amount; optionally account,\nvalue_date, reference, description, entry_id); its rows are imported as that import does, lines already stored\nare not imported again. See docs/books.md.\n\nExample:\n  wallet-recon books pull --date 2026-11-20 --account eu-main\n\nExit codes: 0 imported (or already up to date), 1 the query failed, returned no rows or bad rows, 2 usage or configuration error (also: no books query configured).",
    )
    .action(async (opts: { date: string; account?: string; dryRun?: boolean }) => {
      const date = parseBusinessDate(opts.date, '--date');
      await runtime.withContext('wallet-recon books pull', {}, async (ctx) => {
        const businessDate = parseBusinessDate(date, '--date', todayOf(ctx));
        const named = resolveAccountNames(ctx.config, opts.account);
        const accounts = named.filter((a) => booksSqlSourceOf(ctx.config, a) !== undefined || entriesSqlSourceOf(ctx.config, a) !== undefined);
        if (accounts.length === 0) {
          throw new ConfigError(
            `${opts.account === undefined ? 'No account has' : `Account "${opts.account}" has`} a books query: set RECON_BOOKS_SQL_FILE or RECON_BOOKS_ENTRIES_SQL_FILE (and RECON_BOOKS_DATABASE_URL), or books.sqlFile or books.entriesSqlFile in the accounts file.`,
            ['no books query configured'],
          );
        }
        let exitCode = 0;
        for (const account of accounts) {
          const { outcome, result } = await pullBooks(ctx, { account, businessDate, dryRun: opts.dryRun === true, reconcile: true });
          if (outcome === 'not-configured') {
            // An account with an entries query only: its balances come from files or not at all.
          } else if (outcome === 'no-rows') {
            runtime.output.err(`The books query of account "${account}" returned no rows for ${businessDate}; nothing was imported.`);
            exitCode = 1;
          } else if (outcome === 'unchanged') {
            runtime.output.out(`Books of account "${account}" for ${businessDate} from ${result!.source} are already up to date (${result!.rows} expected balance${result!.rows === 1 ? '' : 's'}); nothing was imported.`);
          } else if (result !== undefined) {
            runtime.output.out(describeImport(result, numberStyleOf(ctx.config.locale)));
            if (result.reconcileFailure !== undefined) {
              runtime.output.err(reconcileFailureAdvice(result));
              exitCode = 1;
            }
          }
          exitCode = Math.max(exitCode, await pullEntriesOf(runtime, ctx, account, businessDate, opts.dryRun === true));
        }
        return exitCode;
      });
    });
}

/** Runs an account's entries query, when it has one, and says what it imported; returns the exit code it calls for. */
async function pullEntriesOf(runtime: CliRuntime, ctx: AppContext, account: string, businessDate: string, dryRun: boolean): Promise<number> {
  const { outcome, result } = await pullEntries(ctx, { account, businessDate, dryRun });
  if (outcome === 'not-configured') return 0;
  // A day may have no ledger lines at all: that is no failure, unlike a day without a closing balance.
  if (outcome === 'no-rows') runtime.output.out(`The books entries query of account "${account}" returned no rows for ${businessDate}; no entries were imported.`);
  else if (outcome === 'unchanged') runtime.output.out(`Books entries of account "${account}" for ${businessDate} from ${result!.source} are already up to date (${result!.rows} entr${result!.rows === 1 ? 'y' : 'ies'}); nothing was imported.`);
  else if (result !== undefined) {
    runtime.output.out(describeEntriesImport(result));
    if (result.reconcileFailure !== undefined) {
      runtime.output.err(`The entries were imported, but reconciling their dates again failed: ${result.reconcileFailure} Those dates stay owed.`);
      return 1;
    }
  }
  return 0;
}
