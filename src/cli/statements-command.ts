import { mkdirSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { addDays } from '../business-date/zoned-time.js';
import { UsageError } from '../errors.js';
import { parseTextEncoding, TEXT_ENCODINGS } from '../text-encoding.js';
import { latestClosedDateOf, parseBusinessDate } from '../reconciliation/business-dates.js';
import { importStatementFiles, listStatementListings, writeBai2, writeCamt053, writeMt940, type StatementImportResult, type StatementListing } from '../statements/index.js';
import { writeFileAtomically } from '../reports/write-file-atomically.js';
import { formatTable } from '../text-table.js';
import { readStoredFile } from '../db/stored-file.repository.js';
import { prepareCleanDates } from '../signoff/auto-prepare.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';
import type { Config } from '../config/index.js';

/** `wallet-recon statements import|list|sample`: bank statements, the bank leg's source. */
export function registerStatementsCommand(program: Command, runtime: CliRuntime): void {
  const statements = program.command('statements').description(summaryOf('statements'));
  statements
    .command('import')
    .description('import bank statements (camt.053, camt.052, camt.054, MT940, MT942; detected by content) of the configured bank accounts; all files or none')
    .argument('<files...>', 'statement files: camt.053 / camt.052 / camt.054 XML (versions 001.02 to 001.13) or MT940 (one or more statements, bare or in {1:}{4: blocks)')
    .option('--dry-run', 'print what would change and write nothing')
    .option('--replace', 'replace a stored statement the file gives other content for (the replacement is recorded)')
    .option('--encoding <name>', `the text encoding of files without a byte order mark or XML declaration: ${TEXT_ENCODINGS.join(', ')} (default utf-8; MT940 files are often iso-8859-1)`)
    .addHelpText(
      'after',
      '\nEach statement must belong to a bank account of the accounts file (bankAccounts: name, iban or accountId,\ncurrency). A statement is identified by its account and statement id (camt Stmt/Id; MT940 the :28C:\nstatement number and the closing date); the same statement again, in either format, is "unchanged".\nThe pages of one MT940 statement (:28C:101/1, 101/2) are one statement; so are the pages of a camt.053\nstatement (StmtPgntn, same account and ElctrncSeqNb or Id), in one file or several, in any order: until\nthe last arrives it is held as incomplete. A file larger than RECON_STATEMENT_MAX_BYTES is refused.\n\nEvery statement is proved: opening booked + booked entries = closing booked, PRCD = OPBD, the previous\nstatement\'s closing = this opening, sequence numbers without a gap. One that fails is still imported,\nwith its proof; its date\'s bank result is roll_forward_break or sequence_gap. The dates whose statements\nchanged are reconciled before the command ends. See docs/bank-statements.md.\n\nExamples:\n  wallet-recon statements import statement-2026-11-26.xml\n  wallet-recon statements import november.sta --dry-run\n\nExit codes: 0 imported (or, with --dry-run, checked; also when a proof fails), 1 a file holds other\ncontent for a stored statement (nothing imported), 2 usage or configuration error, or a file that cannot\nbe read or names an unknown account (nothing imported; the message names the file and the line or\nXML path).',
    )
    .action(async (files: string[], opts: { dryRun?: boolean; replace?: boolean; encoding?: string }) => {
      const encoding = opts.encoding === undefined ? undefined : parseTextEncoding(opts.encoding);
      if (opts.encoding !== undefined && encoding === undefined) throw new UsageError(`--encoding "${opts.encoding}" is not one of: ${TEXT_ENCODINGS.join(', ')}.`);
      await runtime.withContext('wallet-recon statements import', {}, async (ctx) => {
        const result = await importStatementFiles(ctx, files, { dryRun: opts.dryRun === true, replace: opts.replace === true, encoding });
        // A statement can make a settled date clean: it prepares itself for sign-off.
        await prepareCleanDates(ctx, result.reconciled.map((r) => r.businessDate));
        runtime.output.out(describeStatementImport(result));
        return 0;
      });
    });

  statements
    .command('list')
    .description('list stored bank statements with their balances and proofs')
    .option('--account <name>', 'only this bank account')
    .option('--from <date>', 'closing dates from this one (YYYY-MM-DD)')
    .option('--to <date>', 'closing dates up to this one (YYYY-MM-DD)')
    .option('--json', 'print a JSON array: account, statement_id, sequence, business_date, currency, opening, closing, entries, proof, proof_detail, id, file_sha256, state, pages')
    .addHelpText(
      'after',
      '\nopening and closing are the booked balances in major units without separators (-250.00 for a debit);\nproof is ok, roll_forward_break (proof_detail: the residual) or sequence_gap (proof_detail: the missing\nsequence numbers). An intraday (camt.052) report or a notification (camt.054) has no closing balance.\nstate is complete, or incomplete for a statement sent in pages (camt StmtPgntn) some of which have not\narrived: its pages are kept, it has no closing, proof and id (null) until its last page is imported.\n\nExit codes: 0 listed, 2 usage or configuration error.',
    )
    .action(async (opts: { account?: string; from?: string; to?: string; json?: boolean }) => {
      const from = opts.from === undefined ? undefined : parseBusinessDate(opts.from, '--from');
      const to = opts.to === undefined ? undefined : parseBusinessDate(opts.to, '--to');
      if (from !== undefined && to !== undefined && from > to) throw new UsageError(`--from ${from} is after --to ${to}: give the earlier date first.`);
      const accounts = opts.account === undefined ? undefined : [bankAccountArgument(runtime.config(), opts.account)];
      await runtime.withContext('wallet-recon statements list', {}, async (ctx) => {
        const rows = await listStatementListings(ctx, { accounts, from, to });
        runtime.output.out(opts.json === true ? JSON.stringify(rows, null, 2) : describeListings(rows));
        return 0;
      });
    });

  statements
    .command('show')
    .description('show one stored statement, or with --original write the file it was imported from back, byte for byte')
    .argument('<id>', 'the statement\'s id, as statements list --json gives it')
    .option('--original', 'write the original file\'s bytes (checked against their SHA-256) to --out')
    .option('--out <file>', 'where --original writes the file')
    .addHelpText('after', '\nExample:\n  wallet-recon statements show 12 --original --out audit/statement-12.xml\n\nExit codes: 0 shown or written, 1 the stored bytes no longer match their SHA-256, 2 usage error (no such\nstatement, no stored file, --original without --out).')
    .action(async (idText: string, opts: { original?: boolean; out?: string }) => {
      if (!/^\d{1,9}$/.test(idText)) throw new UsageError(`Statement id ${JSON.stringify(idText)} is not a number: take it from "wallet-recon statements list --json".`);
      if (opts.original === true && opts.out === undefined) throw new UsageError('--original needs --out FILE: the file it writes the original bytes to.');
      if (opts.original !== true && opts.out !== undefined) throw new UsageError('--out is where --original writes the file: give --original too.');
      await runtime.withContext('wallet-recon statements show', {}, async (ctx) => {
        const [row] = await listStatementListings(ctx, { id: Number(idText) });
        if (row === undefined) throw new UsageError(`There is no stored statement ${idText}: "wallet-recon statements list --json" gives their ids.`);
        if (opts.original !== true) {
          runtime.output.out(JSON.stringify(row, null, 2));
          return 0;
        }
        if (row.file_sha256 === null) throw new UsageError(`Statement ${idText} (${row.statement_id}) was imported before original files were kept: there are no bytes to give back.`);
        const written = await writeOriginalFile(ctx.database.db, row.file_sha256, opts.out!);
        runtime.output.out(`Wrote ${opts.out}: ${written} bytes, SHA-256 ${row.file_sha256} (the file statement ${row.statement_id} was imported from).`);
        return 0;
      });
    });

  statements
    .command('sample')
    .description('write sample statement files (camt.053, MT940 and BAI2, the same days) for trying the tool')
    .option('--dir <folder>', 'where to write them', '.')
    .option('--iban <iban>', 'the account they are of', 'DE89370400440532013000')
    .option('--account-id <number>', 'the account number of the BAI2 file (its 03 records)', '1234567890')
    .option('--currency <code>', 'their currency', 'EUR')
    .option('--days <n>', 'how many consecutive statements, ending on the latest closed business date', '2')
    .addHelpText('after', '\nWrites sample-camt053.xml, sample-mt940.sta and sample-bai2.txt. To import them, name the IBAN (camt.053,\nMT940) or the account number (BAI2) in the accounts file:\n  bankAccounts:\n    - { name: eu-bank, iban: DE89370400440532013000, currency: EUR }\n    - { name: us-bank, accountId: "1234567890", currency: EUR }\n\nExit codes: 0 written, 1 a file could not be written, 2 usage or configuration error.')
    .action(async (opts: { dir: string; iban: string; accountId: string; currency: string; days: string }) => {
      const days = Number(opts.days);
      if (!Number.isInteger(days) || days < 1 || days > 366) throw new UsageError(`--days ${JSON.stringify(opts.days)} must be a whole number from 1 to 366.`);
      if (!/^[A-Z]{3}$/.test(opts.currency)) throw new UsageError(`--currency ${JSON.stringify(opts.currency)} must be a three-letter code such as EUR.`);
      const iban = opts.iban.replace(/\s+/g, '').toUpperCase();
      // A BAI2 field ends at a comma or a slash: an account number holds neither.
      if (!/^[A-Za-z0-9-]{1,35}$/.test(opts.accountId)) throw new UsageError(`--account-id ${JSON.stringify(opts.accountId)} must be letters, digits or "-" (up to 35).`);
      const last = latestClosedDateOf({ clock: runtime.clock, config: runtime.config() });
      const sample = sampleStatements(iban, opts.currency, days, last);
      mkdirSync(opts.dir, { recursive: true });
      const camt = path.join(opts.dir, 'sample-camt053.xml');
      const mt940 = path.join(opts.dir, 'sample-mt940.sta');
      const bai2 = path.join(opts.dir, 'sample-bai2.txt');
      await writeFileAtomically(camt, writeCamt053({ ...sample, camtVersion: 8 }));
      await writeFileAtomically(mt940, writeMt940(sample));
      await writeFileAtomically(bai2, writeBai2(sample, opts.accountId));
      runtime.output.out(`Wrote ${camt}, ${mt940} and ${bai2}: ${days} statement${days === 1 ? '' : 's'} of ${iban} (${opts.currency}), ${sample.days[0]!.date} to ${last}, in camt.053 and MT940, and of account ${opts.accountId} in BAI2.`);
    });
}

/** Sample days: a payout in, a fee out each day, sequence numbers from 1. */
export function sampleStatements(iban: string, currency: string, days: number, lastDate: string) {
  return {
    iban,
    currency,
    opening: 1_000_000n,
    days: Array.from({ length: days }, (_, i) => ({ sequence: i + 1, date: addDays(lastDate, i - days + 1), entries: [250_000n + BigInt(i) * 1_000n, -2_550n] })),
  };
}

function bankAccountArgument(config: Config, name: string): string {
  if (config.bankAccounts.some((b) => b.name === name)) return name;
  const known = config.bankAccounts.map((b) => b.name);
  throw new UsageError(`There is no bank account named "${name}". ${known.length === 0 ? 'The accounts file (RECON_ACCOUNTS_FILE) lists no bankAccounts.' : `Configured bank accounts: ${known.join(', ')}.`}`);
}

/** What an import did, one line per statement and a summary. */
export function describeStatementImport(result: StatementImportResult): string {
  const count = (o: string) => result.outcomes.filter((x) => x.outcome === o).length;
  const lines = result.outcomes.map((o) => `  ${o.outcome.padEnd(9)} ${o.account} ${o.businessDate} ${o.statementId} (${o.format}${o.pages === undefined ? '' : `, ${o.pages}`})`);
  const proofs = result.proofs
    .filter((p) => p.proof !== 'ok')
    .map((p) => `  proof     ${p.account} ${p.businessDate} ${p.statementId}: ${p.proof}${proofDetail(p)}`);
  const files = result.files.length === 1 ? result.files[0]! : `${result.files.length} files`;
  const summary = `${result.outcomes.length} statement${result.outcomes.length === 1 ? '' : 's'} from ${files}: ${count('new')} new, ${count('replaced')} replaced, ${count('unchanged')} unchanged${count('incomplete') === 0 ? '' : `, ${count('incomplete')} incomplete (pages held until the rest arrive)`}.`;
  const head = result.dryRun ? `Dry run, nothing written: ${summary}` : `Imported ${summary}`;
  const tail = result.reconciled.length === 0 ? [] : [`Reconciled ${result.reconciled.length} account-date${result.reconciled.length === 1 ? '' : 's'} whose statements changed.`];
  return [head, ...lines, ...proofs, ...tail].join('\n');
}

/** What a failed proof found: the missing numbers, the residual, or (a backward jump) the reason. */
function proofDetail(p: StatementImportResult['proofs'][number]): string {
  if (p.detail !== null) return p.proof === 'sequence_gap' ? ` (missing ${p.detail})` : ` (residual ${p.detail})`;
  return p.proof === 'sequence_gap' && p.reason ? ` (${p.reason})` : '';
}

function describeListings(rows: readonly StatementListing[]): string {
  if (rows.length === 0) return 'No statements stored (for this account and range).';
  return formatTable(
    ['account', 'statement', 'sequence', 'business date', 'currency', 'opening', 'closing', 'entries', 'proof', 'detail'],
    rows.map((r) => [r.account, r.statement_id, r.sequence === null ? '' : String(r.sequence), r.business_date, r.currency, r.opening ?? '', r.closing ?? '', String(r.entries), r.proof ?? `${r.state} (pages ${r.pages} held)`, r.proof_detail ?? '']),
  );
}

/**
 * Writes a stored file's bytes to `out`, a chunk at a time, through a temporary file renamed into
 * place only once every chunk was read and the whole hashed to its SHA-256: a file altered in the
 * database never leaves a partial or wrong copy behind.
 */
async function writeOriginalFile(db: Parameters<typeof readStoredFile>[0], sha256: string, out: string): Promise<number> {
  const target = path.resolve(out);
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.tmp`);
  let size = 0;
  const handle = await open(temp, 'w');
  try {
    for await (const chunk of readStoredFile(db, sha256)) {
      await handle.write(chunk);
      size += chunk.length;
    }
    await handle.sync();
    await handle.close();
    await rename(temp, target);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw error;
  }
  return size;
}
