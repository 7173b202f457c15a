import type { Command } from 'commander';
import { importBooksFile } from '../reconciliation/books-import-service.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-catalog.js';

/** `wallet-recon ledger import FILE`: loads the merchant's expected balances (the books). */
export function registerLedgerCommand(program: Command, runtime: CliRuntime): void {
  const ledger = program.command('ledger').description(summaryOf('ledger'));
  ledger
    .command('import')
    .description('import expected balances from CSV (business_date,currency,balance[,account]) or JSON lines; all rows or none')
    .argument('<file>', 'a .csv file with a header line, or .jsonl with one object per line')
    .option('--account <name>', 'the account of rows without an account column (default: the only configured account)')
    .addHelpText(
      'after',
      "\nEach (account, business date) in the file is taken as that day's complete books: its keys (account,\nbusiness date, currency) are inserted or replaced, recording the file name as their source, and the\nday's stored currencies the file lacks are removed. Days the file does not mention are left alone.\nDates that were already reconciled are reconciled again with the new books, in the same command.\n\nExample:\n  wallet-recon ledger import books-2026-11.csv --account eu-main\n\nPrints how many keys are new, changed, unchanged and removed. Dates after today (RECON_TIMEZONE) and amounts\nwith spaces around them are refused.\n\nExit codes: 0 imported, 1 the file has bad rows (each listed with its line; nothing imported), 2 usage or configuration error, 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.",
    )
    .action(async (file: string, opts: { account?: string }) => {
      await runtime.withContext('wallet-recon ledger import', {}, async (ctx) => {
        const result = await importBooksFile(ctx, file, { account: opts.account });
        const period = result.firstDate === result.lastDate ? result.firstDate : `${result.firstDate} to ${result.lastDate}`;
        runtime.output.out(
          `Imported ${result.rows} expected balance${result.rows === 1 ? '' : 's'} from ${result.source} for ${result.accounts.join(', ')}, ${period}: ${result.inserted} new, ${result.changed} changed, ${result.unchanged} unchanged, ${result.removed} removed.` +
            (result.reReconciledDates > 0 ? ` Re-reconciled ${result.reReconciledDates} date${result.reReconciledDates === 1 ? '' : 's'} whose books changed.` : ''),
        );
        return 0;
      });
    });
}
