import { Option, type Command } from 'commander';
import { formatTable } from '../text-table.js';
import { DATE_FORMATS, describeProfile, ENTRY_FIELD_SET, importBooksFile, importEntriesFile, type EntriesImportResult, loadImportProfile, loadImportProfiles, loadNamedProfile, loadNamedProfiles, parseColumnMap, parseDateFormat, type BooksImportResult, type ColumnMap, type DateFormat } from '../books/index.js';
import { UsageError } from '../errors.js';
import { parseTextEncoding, TEXT_ENCODINGS, type TextEncodingName } from '../text-encoding.js';
import { formatAmount } from '../money/format-amount.js';
import { DEFAULT_NUMBER_STYLE, numberStyleOf, type NumberStyle } from '../money/number-style.js';
import { resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import { detectSignoffChanges } from '../signoff/signoff-service.js';
import { prepareCleanDates } from '../signoff/auto-prepare.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';

interface LedgerImportOptions {
  account?: string;
  amounts?: 'major' | 'minor';
  decimalComma?: boolean;
  decimalPoint?: boolean;
  dateFormat?: string;
  map?: string;
  dryRun?: boolean;
  skipRows?: string;
  skipFooter?: string;
  replaceDay?: boolean;
  saveProfile?: boolean;
  entries?: boolean;
  encoding?: string;
  profile?: string;
}

/** `wallet-recon ledger import FILE`: loads the merchant's expected balances (the books). */
export function registerLedgerCommand(program: Command, runtime: CliRuntime): void {
  const ledger = program.command('ledger').description(summaryOf('ledger'));
  ledger
    .command('import')
    .description('import expected balances from CSV (comma, semicolon or tab), an .xlsx spreadsheet or JSON lines; all rows or none')
    .argument('<file>', 'a .csv file with a header line, an .xlsx workbook (first sheet, header in its first row), or .jsonl with one object per line')
    .option('--account <name>', 'the account of rows without an account column (default: the only configured account); its saved profile applies')
    .addOption(new Option('--amounts <unit>', 'major: 1234.56 with the currency\'s decimals (default); minor: the integer 123456').choices(['major', 'minor']))
    .addOption(new Option('--decimal-comma', 'amounts written 1.234,56 (a comma before the decimals)').conflicts('decimalPoint'))
    .option('--decimal-point', 'amounts written 1,234.56 (a point before the decimals)')
    .option('--date-format <format>', `how dates are written: ${DATE_FORMATS.join(', ')} (default YYYY-MM-DD)`)
    .option('--map <columns>', 'headers of other names: business_date="Value date",currency=Curr,balance="Closing balance"[,account=Entity]')
    .option('--skip-rows <n>', 'lines (spreadsheet rows) above the header to skip: a title, an export date')
    .option('--skip-footer <n>', 'rows at the end to leave out (total rows such as "Summe" or "Total" are left out anyway)')
    .option('--encoding <name>', `the text encoding of a CSV or JSON lines file without a byte order mark: ${TEXT_ENCODINGS.join(', ')} (default utf-8)`)
    .option('--replace-day', "let the import remove a day's stored currencies the file lacks (each day in the file is its complete books)")
    .option('--profile <name>', "read with the named import profile of an export that names its accounts in a column (any configured account, bank accounts included); with --save-profile, save it")
    .option('--save-profile', "save this import's options as the account's import profile (or, with --profile NAME, as that profile), used by later imports")
    .option('--dry-run', 'print what would change and write nothing')
    .option('--entries', 'the file holds the ledger\'s detail lines (account,booking_date,value_date,currency,amount,reference,description,entry_id), not closing balances')
    .addHelpText(
      'after',
      "\nEach (account, business date) in the file is taken as that day's complete books: its keys (account,\nbusiness date, currency) are inserted or replaced, recording the file name as their source. Days the file\ndoes not mention are left alone. When the file lacks currencies stored for one of its days, the import says\nwhich and is refused unless --replace-day (or the account's saved profile) consents to removing them.\nDates that were already reconciled are reconciled again with the new books, in the same command.\nA signed-off (approved) date is locked: a file that would change it is refused whole; its identical rows\nare left as they are (counted unchanged).\n\nAmounts are in major units by default: 1234.56, -1234.56, 1,234.56 and (1,234.56) for a negative. More\ndecimals than the currency has (1234.565 for EUR) are refused, never rounded. Without --decimal-point or\n--decimal-comma an amount whose separator could group thousands for its currency (JPY 250.000, EUR 1.500,\nKWD 1,234) is refused, not guessed. Currency codes may be in any case.\n\nRows above the header are skipped with --skip-rows N; total rows at the end (\"Summe\", \"Total\", ...) are\nleft out and said so; --skip-footer N leaves out the last N rows.\n\n--save-profile stores this import's options (map, date format, decimal mark, unit, rows to skip, consent to\nreplace days) as the account's import profile, for any account including the default one; later imports of\nthe account use it, options given here win. \"wallet-recon ledger profile show\" prints it. The accounts\nfile's \"books\" section is read after the profile. See docs/books.md.\n\nExamples:\n  wallet-recon ledger import books-2026-11.csv --account eu-main\n  wallet-recon ledger import kontostand.csv --map business_date=Datum,currency=Währung,balance=Schlusssaldo \\\n    --date-format DD/MM/YYYY --decimal-comma --save-profile\n  wallet-recon ledger import kontostand-2026-11-27.csv        (the saved profile applies)\n  wallet-recon ledger import books.xlsx --dry-run\n\nPrints how many keys are new, changed, unchanged and removed, and the rows it skipped. Dates after the current business date\n(RECON_TIMEZONE) and amounts with spaces around them are refused.\n\nExit codes: 0 imported (or, with --dry-run, checked), 1 the file has bad rows or would remove a day's other currencies without consent (each listed; nothing imported), or the books were imported but reconciling their dates again failed (said so; the dates stay owed), 2 usage or configuration error (also a file that does not exist), or a change to a signed-off date (nothing imported), 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.",
    )
    .action(async (file: string, opts: LedgerImportOptions) => {
      // Bad options are refused before the database is opened.
      if (opts.entries === true) return importEntries(runtime, file, opts);
      const dateFormat = opts.dateFormat === undefined ? undefined : checkDateFormat(opts.dateFormat);
      const map: ColumnMap | undefined = opts.map === undefined ? undefined : parseColumnMap(opts.map);
      const skipRows = opts.skipRows === undefined ? undefined : rowCount(opts.skipRows, '--skip-rows');
      const skipFooter = opts.skipFooter === undefined ? undefined : rowCount(opts.skipFooter, '--skip-footer');
      const encoding = opts.encoding === undefined ? undefined : checkEncoding(opts.encoding);
      if (opts.saveProfile === true && opts.dryRun === true) throw new UsageError('--save-profile saves the options of an import that is written; run it without --dry-run.');
      await runtime.withContext('wallet-recon ledger import', {}, async (ctx) => {
        const result = await importBooksFile(ctx, file, {
          account: opts.account,
          amounts: opts.amounts,
          decimalMark: opts.decimalComma === true ? 'comma' : opts.decimalPoint === true ? 'point' : undefined,
          dateFormat,
          map,
          skipRows,
          skipFooter,
          encoding,
          replaceDay: opts.replaceDay === true ? true : undefined,
          saveProfile: opts.saveProfile === true,
          profile: opts.profile,
          dryRun: opts.dryRun === true,
        });
        // Corrected books can make a settled date clean: it prepares itself for sign-off.
        await prepareCleanDates(ctx, result.reconciledDates ?? []);
        runtime.output.out(describeImport(result, numberStyleOf(ctx.config.locale)));
        if (result.reconcileFailure !== undefined) {
          runtime.output.err(reconcileFailureAdvice(result));
          return 1;
        }
        // New books of a signed date void its sign-off: said now, not at the worker's next check.
        if (opts.dryRun !== true) {
          for (const { signoff } of await detectSignoffChanges(ctx)) {
            runtime.output.err(`${signoff.businessDate} was signed off (#${signoff.id}) and changed after sign-off: it must be signed again.`);
          }
        }
        return 0;
      });
    });
  registerProfileCommand(ledger, runtime);
}

/** `ledger import FILE --entries`: the ledger's detail lines, matched with the bank's entries. */
async function importEntries(runtime: CliRuntime, file: string, opts: LedgerImportOptions): Promise<void> {
  if (opts.replaceDay === true) throw new UsageError('--replace-day is for closing balances; books entries are added line by line (a line already imported is left as it is).');
  if (opts.saveProfile === true) throw new UsageError('--save-profile saves the options of a balances import; give the options of an entries import each time (or set them in the accounts file\'s books section).');
  const dateFormat = opts.dateFormat === undefined ? undefined : checkDateFormat(opts.dateFormat);
  const map: ColumnMap | undefined = opts.map === undefined ? undefined : parseColumnMap(opts.map, ENTRY_FIELD_SET);
  const skipRows = opts.skipRows === undefined ? undefined : rowCount(opts.skipRows, '--skip-rows');
  const skipFooter = opts.skipFooter === undefined ? undefined : rowCount(opts.skipFooter, '--skip-footer');
  await runtime.withContext('wallet-recon ledger import', {}, async (ctx) => {
    const result = await importEntriesFile(ctx, file, {
      account: opts.account,
      amounts: opts.amounts,
      decimalMark: opts.decimalComma === true ? 'comma' : opts.decimalPoint === true ? 'point' : undefined,
      dateFormat,
      map,
      skipRows,
      skipFooter,
      encoding: opts.encoding === undefined ? undefined : checkEncoding(opts.encoding),
      dryRun: opts.dryRun === true,
    });
    runtime.output.out(describeEntriesImport(result, numberStyleOf(ctx.config.locale)));
    if (result.reconcileFailure !== undefined) {
      runtime.output.err(`The entries were imported, but reconciling their dates again failed: ${result.reconcileFailure} Those dates stay owed.`);
      return 1;
    }
    return 0;
  });
}

/** The summary of an entries import: counts, the matches made, and the books' roll-forward. */
export function describeEntriesImport(result: EntriesImportResult, style: NumberStyle = DEFAULT_NUMBER_STYLE): string {
  const period = result.firstDate === result.lastDate ? result.firstDate : `${result.firstDate} to ${result.lastDate}`;
  const counts = `${result.inserted} new, ${result.changed} changed, ${result.unchanged} unchanged`;
  const plural = result.rows === 1 ? 'y' : 'ies';
  const head = result.dryRun
    ? `Dry run, nothing written: ${result.rows} books entr${plural} from ${result.source} for ${result.accounts.join(', ')}, ${period} would give ${counts}; matching would make ${result.matches.length} match${result.matches.length === 1 ? '' : 'es'}.`
    : `Imported ${result.rows} books entr${plural} from ${result.source} for ${result.accounts.join(', ')}, ${period}: ${counts}; matching made ${result.matches.length} match${result.matches.length === 1 ? '' : 'es'}.`;
  const lines = [head];
  for (const r of result.rollForward) {
    const ok = r.residual === 0n;
    lines.push(
      `Roll-forward ${r.account} ${r.currency} ${r.businessDate}: closing ${formatAmount(r.previousClosing, r.currency, undefined, style)} (${r.previousDate}) + entries ${formatAmount(r.entries, r.currency, undefined, style)} ${ok ? '=' : '≠'} closing ${formatAmount(r.closing, r.currency, undefined, style)}${ok ? '' : `: a break, residual ${formatAmount(r.residual, r.currency, undefined, style)}`}.`,
    );
  }
  for (const s of result.skipped) lines.push(`Skipped ${s.unit} ${s.line}: ${s.why}.`);
  if (result.reconciledDates > 0) lines.push(`Re-reconciled ${result.reconciledDates} date${result.reconciledDates === 1 ? '' : 's'}.`);
  return lines.join('\n');
}

/** `wallet-recon ledger profile list|show [NAME] [--account NAME]`: the saved import profiles. */
function registerProfileCommand(ledger: Command, runtime: CliRuntime): void {
  const profile = ledger.command('profile').description('the saved import profiles: named ones of exports (--profile NAME) and accounts\' own (ledger import --save-profile)');
  profile
    .command('list')
    .description('list the saved import profiles: named ones, then accounts\' own')
    .addHelpText('after', '\nExit codes: 0 listed (also when there is none; it says so), 2 usage or configuration error.')
    .action(async () => {
      await runtime.withContext('wallet-recon ledger profile list', {}, async (ctx) => {
        const named = await loadNamedProfiles(ctx);
        const accounts = await loadImportProfiles(ctx);
        if (named.length === 0 && accounts.length === 0) {
          runtime.output.out('No import profile is saved. Save one with: wallet-recon ledger import FILE [options] --profile NAME --save-profile (or --account NAME --save-profile)');
          return 0;
        }
        const rows = [
          ...named.map((p) => [p.name, 'named (accounts from the file)', p.savedAt.toISOString()]),
          ...accounts.map((p) => [`account ${p.account}`, "the account's own", p.savedAt.toISOString()]),
        ];
        runtime.output.out(formatTable(['profile', 'kind', 'saved'], rows));
        return 0;
      });
    });
  profile
    .command('show')
    .description('print a named import profile, or the saved import profile of an account (default: every account that has one)')
    .argument('[name]', 'the named profile (ledger import --profile NAME)')
    .option('--account <name>', 'only this account')
    .addHelpText('after', '\nExit codes: 0 printed (also when an account has no profile; it says so), 2 usage or configuration error (an account that is not configured, a profile name that is not saved).')
    .action(async (name: string | undefined, opts: { account?: string }) => {
      await runtime.withContext('wallet-recon ledger profile show', {}, async (ctx) => {
        if (name !== undefined) {
          const named = await loadNamedProfile(ctx, name);
          if (named === undefined) {
            const names = (await loadNamedProfiles(ctx)).map((p) => p.name);
            throw new UsageError(`There is no import profile "${name}" (${names.length === 0 ? 'none is saved' : `saved: ${names.join(', ')}`}).`);
          }
          runtime.output.out([...describeProfile(named), 'Options given to "wallet-recon ledger import" win over a profile.'].join('\n'));
          return 0;
        }
        if (opts.account !== undefined) resolveAccountNames(ctx.config, opts.account);
        const profiles = opts.account === undefined ? await loadImportProfiles(ctx) : [await loadImportProfile(ctx, opts.account)].filter((p) => p !== undefined);
        if (profiles.length === 0) {
          const whose = opts.account === undefined ? 'No account has' : `Account "${opts.account}" has`;
          runtime.output.out(`${whose} a saved import profile. Save one with: wallet-recon ledger import FILE [options] --save-profile${opts.account === undefined ? '' : ` --account ${opts.account}`}`);
          return 0;
        }
        runtime.output.out([...profiles.flatMap((p) => describeProfile(p)), 'Options given to "wallet-recon ledger import" win over a profile.'].join('\n'));
        return 0;
      });
    });
}

function rowCount(text: string, option: string): number {
  if (!/^\d{1,6}$/.test(text)) throw new UsageError(`${option} "${text}" must be a number of rows, such as ${option} 1.`);
  return Number(text);
}

function checkEncoding(text: string): TextEncodingName {
  const encoding = parseTextEncoding(text);
  if (encoding === undefined) throw new UsageError(`--encoding "${text}" is not one of: ${TEXT_ENCODINGS.join(', ')}.`);
  return encoding;
}

function checkDateFormat(text: string): DateFormat {
  const format = parseDateFormat(text);
  if (format === undefined) throw new UsageError(`--date-format "${text}" is not one of: ${DATE_FORMATS.join(', ')}.`);
  return format;
}

/** What to do when the books were stored but their dates could not be reconciled again. */
export function reconcileFailureAdvice(result: BooksImportResult): string {
  const rerun = result.firstDate === result.lastDate ? `"wallet-recon reconcile --date ${result.firstDate}"` : `"wallet-recon reconcile --date DATE" for each date from ${result.firstDate} to ${result.lastDate}`;
  return `The books were imported, but reconciling their dates again failed: ${result.reconcileFailure} Those dates stay owed: fix that, then run ${rerun} (or let the worker reconcile them).`;
}

/** The command's summary: counts, and with --dry-run each change it would make. */
export function describeImport(result: BooksImportResult, style: NumberStyle = DEFAULT_NUMBER_STYLE): string {
  const notes = [...profileNotes(result), ...skippedNotes(result)];
  const summary = describeCounts(result, style);
  return notes.length === 0 ? summary : [summary, ...notes].join('\n');
}

function profileNotes(result: BooksImportResult): string[] {
  if (result.profile === undefined) return [];
  const { account, name, used, saved } = result.profile;
  if (name !== undefined) {
    if (saved) return [`Saved these options as import profile "${name}" ("wallet-recon ledger profile show ${name}" prints it; "wallet-recon ledger import FILE --profile ${name}" uses it).`];
    return used ? [`Read with import profile "${name}".`] : [];
  }
  if (saved) return [`Saved these options as the import profile of account "${account}" ("wallet-recon ledger profile show" prints it).`];
  return used ? [`Read with the import profile of account "${account}".`] : [];
}

function skippedNotes(result: BooksImportResult): string[] {
  return result.skipped.map((s) => `Skipped ${s.unit} ${s.line}: ${s.why}.`);
}

function describeCounts(result: BooksImportResult, style: NumberStyle): string {
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
    if (c.kind === 'new') return `  new       ${where}: ${formatAmount(c.after!, c.currency, undefined, style)}`;
    if (c.kind === 'removed') return `  removed   ${where}: ${formatAmount(c.before!, c.currency, undefined, style)}`;
    return `  changed   ${where}: ${formatAmount(c.before!, c.currency, undefined, style)} -> ${formatAmount(c.after!, c.currency, undefined, style)}`;
  });
  if (result.changesNotListed > 0) lines.push(`  … and ${result.changesNotListed} more change${result.changesNotListed === 1 ? '' : 's'}`);
  const consent = result.removalsNeedConsent ? ["The import would be refused: it removes a day's stored currencies the file lacks; pass --replace-day to allow that, or add their rows."] : [];
  return [`Dry run, nothing written: ${result.rows} expected balance${plural} from ${result.source} for ${result.accounts.join(', ')}, ${period} would give ${counts}.`, ...lines, ...consent].join('\n');
}
