import { Option, type Command } from 'commander';
import { DATE_FORMATS, importBooksFile, parseColumnMap, parseDateFormat, type BooksImportResult, type ColumnMap, type DateFormat } from '../books/index.js';
import { UsageError } from '../errors.js';
import { formatAmount } from '../money/format-amount.js';
import { detectSignoffChanges } from '../signoff/signoff-service.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-catalog.js';

interface LedgerImportOptions {
  account?: string;
  amounts?: 'major' | 'minor';
  decimalComma?: boolean;
  dateFormat?: string;
  map?: string;
  dryRun?: boolean;
}

/** `wallet-recon ledger import FILE`: loads the merchant's expected balances (the books). */
export function registerLedgerCommand(program: Command, runtime: CliRuntime): void {
  const ledger = program.command('ledger').description(summaryOf('ledger'));
  ledger
    .command('import')
    .description('import expected balances from CSV (comma, semicolon or tab), an .xlsx spreadsheet or JSON lines; all rows or none')
    .argument('<file>', 'a .csv file with a header line, an .xlsx workbook (first sheet, header in its first row), or .jsonl with one object per line')
    .option('--account <name>', 'the account of rows without an account column (default: the only configured account); its saved books settings apply')
    .addOption(new Option('--amounts <unit>', 'major: 1234.56 with the currency\'s decimals (default); minor: the integer 123456').choices(['major', 'minor']))
    .option('--decimal-comma', 'amounts written 1.234,56 (a comma before the decimals)')
    .option('--date-format <format>', `how dates are written: ${DATE_FORMATS.join(', ')} (default YYYY-MM-DD)`)
    .option('--map <columns>', 'headers of other names: business_date="Value date",currency=Curr,balance="Closing balance"[,account=Entity]')
    .option('--dry-run', 'print what would change and write nothing')
    .addHelpText(
      'after',
      "\nEach (account, business date) in the file is taken as that day's complete books: its keys (account,\nbusiness date, currency) are inserted or replaced, recording the file name as their source, and the\nday's stored currencies the file lacks are removed. Days the file does not mention are left alone.\nDates that were already reconciled are reconciled again with the new books, in the same command.\nA signed-off (approved) date is locked: a file that would change it is refused whole; its identical rows\nare left as they are (counted unchanged).\n\nAmounts are in major units by default: 1234.56, -1234.56, 1,234.56 and (1,234.56) for a negative. More\ndecimals than the currency has (1234.565 for EUR) are refused, never rounded. Currency codes may be in\nany case. A column map, date format, decimal comma and unit can be saved per account in the accounts\nfile (its \"books\" section); options given here win. See docs/books.md.\n\nExamples:\n  wallet-recon ledger import books-2026-11.csv --account eu-main\n  wallet-recon ledger import export.csv --decimal-comma --date-format DD/MM/YYYY \\\n    --map business_date=Date,currency=Currency,balance=\"Closing balance\"\n  wallet-recon ledger import books.xlsx --dry-run\n\nPrints how many keys are new, changed, unchanged and removed. Dates after today (RECON_TIMEZONE) and amounts\nwith spaces around them are refused.\n\nExit codes: 0 imported (or, with --dry-run, checked), 1 the file has bad rows (each listed with its line; nothing imported), 2 usage or configuration error, or a change to a signed-off date (nothing imported), 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.",
    )
    .action(async (file: string, opts: LedgerImportOptions) => {
      // Bad options are refused before the database is opened.
      const dateFormat = opts.dateFormat === undefined ? undefined : checkDateFormat(opts.dateFormat);
      const map: ColumnMap | undefined = opts.map === undefined ? undefined : parseColumnMap(opts.map);
      await runtime.withContext('wallet-recon ledger import', {}, async (ctx) => {
        const result = await importBooksFile(ctx, file, { account: opts.account, amounts: opts.amounts, decimalComma: opts.decimalComma, dateFormat, map, dryRun: opts.dryRun === true });
        runtime.output.out(describeImport(result));
        // New books of a signed date void its sign-off: said now, not at the worker's next check.
        if (opts.dryRun !== true) {
          for (const { signoff } of await detectSignoffChanges(ctx)) {
            runtime.output.err(`${signoff.businessDate} was signed off (#${signoff.id}) and changed after sign-off: it must be signed again.`);
          }
        }
        return 0;
      });
    });
}

function checkDateFormat(text: string): DateFormat {
  const format = parseDateFormat(text);
  if (format === undefined) throw new UsageError(`--date-format "${text}" is not one of: ${DATE_FORMATS.join(', ')}.`);
  return format;
}

/** The command's summary: counts, and with --dry-run each change it would make. */
export function describeImport(result: BooksImportResult): string {
  const period = result.firstDate === result.lastDate ? result.firstDate : `${result.firstDate} to ${result.lastDate}`;
  const counts = `${result.inserted} new, ${result.changed} changed, ${result.unchanged} unchanged, ${result.removed} removed`;
  const plural = result.rows === 1 ? '' : 's';
  if (!result.dryRun) {
    return (
      `Imported ${result.rows} expected balance${plural} from ${result.source} for ${result.accounts.join(', ')}, ${period}: ${counts}.` +
      (result.reReconciledDates > 0 ? ` Re-reconciled ${result.reReconciledDates} date${result.reReconciledDates === 1 ? '' : 's'} whose books changed.` : '')
    );
  }
  const lines = result.changes.map((c) => {
    const where = `${c.account} ${c.businessDate} ${c.currency}`;
    if (c.kind === 'new') return `  new       ${where}: ${formatAmount(c.after!, c.currency)}`;
    if (c.kind === 'removed') return `  removed   ${where}: ${formatAmount(c.before!, c.currency)}`;
    return `  changed   ${where}: ${formatAmount(c.before!, c.currency)} -> ${formatAmount(c.after!, c.currency)}`;
  });
  return [`Dry run, nothing written: ${result.rows} expected balance${plural} from ${result.source} for ${result.accounts.join(', ')}, ${period} would give ${counts}.`, ...lines].join('\n');
}
