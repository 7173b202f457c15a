import path from 'node:path';
import { runMatching, undoMatchesOfStatement } from '../matching/index.js';
import { lockAccountDates } from '../db/date-lock.repository.js';
import { findLocks, lockedDateError } from '../signoff/date-lock.js';
import type { AppContext } from '../app-context.js';
import { attachPages, bookedKeysOfPages, copyPageEntries, deletePage, insertPage, insertPageEntries, listPagesOf, type StoredPage } from '../db/bank-statement-page.repository.js';
import {
  deleteStatement,
  findSameStatement,
  insertStatementEntries,
  insertStatementHead,
  insertStatementImport,
  linkNotificationEntries,
  STATEMENT_ENTRY_BATCH,
  listStatementChain,
  recordStatementReplacement,
  updateStatementImport,
  updateStatementProof,
  type StatementChainRow,
} from '../db/bank-statement.repository.js';
import type { Database } from '../db/database.types.js';
import { storeFileFromPath } from '../db/stored-file.repository.js';
import { InputFileError } from '../errors.js';
import { currencyDecimals, toMajorUnits } from '../money/format-amount.js';
import { reconcileOwedDates } from '../reconciliation/reconciliation-service.js';
import { foldWhenSeveralDates } from '../notifications/fold-work.js';
import type { Transaction } from 'kysely';
import { bankAccountOf, describeStatementAccount } from './bank-account-match.js';
import { scanStatementFile, type ScannedStatementFile, type StatementToImport } from './read-statement-file.js';
import type { TextEncodingName } from '../text-encoding.js';
import { calendarDate } from './statement-dates.js';
import { shownFileName, StatementFileError } from './statement-file-error.js';
import { closingBooked, openingBooked, type ParsedStatement, type StatementBalance } from './statement.js';
import { fingerprintOfKeys } from './statement-fingerprint.js';
import { createHash } from 'node:crypto';
import { describeMissing, proveStatement, provableOf, type PreviousStatement, type SequenceRules, type StatementProof } from './statement-proof.js';

export interface StatementImportOptions {
  dryRun?: boolean;
  /** Replace a stored statement whose content differs, instead of refusing the import. */
  replace?: boolean;
  /** `--encoding`: the text encoding of files without a byte order mark (MT940 files are often Latin-1). */
  encoding?: TextEncodingName;
}

/** What happened to one statement of the files. */
export interface StatementOutcome {
  account: string;
  statementId: string;
  businessDate: string;
  format: ParsedStatement['format'];
  /** `incomplete`: pages of a statement sent in several, kept until the rest of its pages arrive. */
  outcome: 'new' | 'unchanged' | 'replaced' | 'incomplete';
  where: string;
  /** A statement sent in pages: the page numbers held (incomplete), or how many it was assembled from. */
  pages?: string;
}

export interface StatementImportResult {
  dryRun: boolean;
  files: string[];
  outcomes: StatementOutcome[];
  /** Stored statements (of these accounts) whose proof changed, the new ones included. */
  proofs: Array<{ account: string; statementId: string; businessDate: string; proof: StatementProof['proof']; detail: string | null; /** In words: what did not add up. */ reason?: string | null }>;
  /** Account-dates reconciled after the import (none for a dry run). */
  reconciled: Array<{ account: string; businessDate: string }>;
  /** Matches the rules made between the new statement entries and the books entries. */
  matches: number;
}

class DryRun extends Error {
  constructor(readonly result: StatementImportResult) {
    super('dry run');
  }
}

/**
 * `statements import`: reads every file first (a file that cannot be read, or a statement of an
 * account no bank account names, refuses the whole command), then stores them in one
 * transaction — all or nothing. The same statement again is unchanged, whichever format it came
 * in; other content for a stored statement is refused unless `replace`. Then every statement
 * of the accounts touched is proved again (a statement arriving late changes the proof of the
 * next), and the dates owed are reconciled.
 */
export async function importStatementFiles(ctx: AppContext, files: readonly string[], options: StatementImportOptions = {}): Promise<StatementImportResult> {
  // Each file read through first (a camt file as a stream, keeping no entry): every refusal comes
  // before any database work; the entries are read again as they are stored.
  const readFiles: Array<{ file: string } & ScannedStatementFile> = [];
  for (const file of files) readFiles.push({ file, ...(await scanStatementFile(file, { encoding: options.encoding, maxBytes: ctx.config.statementMaxBytes })) });
  const read = readFiles.flatMap(({ file, statements }) => statements.map((item) => ({ file, statement: item.statement, item })));
  const bankAccounts = ctx.config.bankAccounts;
  const problems: string[] = [];
  const placed = read.map(({ file, statement, item }) => {
    const account = bankAccountOf(statement, bankAccounts);
    if (account === undefined) {
      problems.push(`${statement.where}: ${describeStatementAccount(statement)} is not a configured bank account`);
    } else if (account.currency !== statement.currency) {
      problems.push(`${statement.where}: the statement is in ${statement.currency}, bank account "${account.name}" in ${account.currency}`);
    }
    return { file, statement, item, account: account?.name ?? '' };
  });
  if (problems.length > 0) {
    const known = bankAccounts.length === 0 ? 'no bankAccounts are configured (RECON_ACCOUNTS_FILE)' : `configured: ${bankAccounts.map((b) => `${b.name} (${b.iban ?? b.accountId})`).join(', ')}`;
    throw new StatementFileError(`Nothing imported: ${problems.join('; ')} (${known}).`, problems);
  }

  const now = ctx.clock.now();
  const run = async (trx: Transaction<Database>): Promise<StatementImportResult> => {
    // The inputs lock of every date the statements are for (see lockAccountDates), before anything
    // is read: an approval either committed before (and refuses below) or waits for this commit.
    await lockAccountDates(trx, placed.map(({ statement, account }) => ({ account, businessDate: statement.businessDate })));
    const importId = await insertStatementImport(trx, { importedAt: now, files: files.map((f) => path.basename(f)).join(', '), statements: 0, replaced: 0 });
    const outcomes: StatementOutcome[] = [];
    const conflicts: string[] = [];
    // Each file's original bytes, stored (once per content) with the first of its statements
    // stored, in this transaction: a statement's file is there exactly when the statement is.
    const fileDigests = new Map<string, string>();
    const storeOriginal = async (file: string): Promise<string> => {
      const known = fileDigests.get(file);
      if (known !== undefined) return known;
      const digest = readFiles.find((f) => f.file === file)!;
      const { sha256 } = await storeFileFromPath(trx, file, { kind: 'bank_statement', storedAt: now }, { sha256: digest.sha256, size: digest.size });
      fileDigests.set(file, sha256);
      return sha256;
    };
    // One statement whole: new, the same again (unchanged), other content (refused unless replace).
    const storeWhole = async (whole: WholeStatement): Promise<StatementOutcome | undefined> => {
      const { statement, account, fingerprint } = whole;
      const base = { account, statementId: statement.statementId, businessDate: statement.businessDate, format: statement.format, where: statement.where, ...(whole.pages === undefined ? {} : { pages: whole.pages }) };
      const same = await findSameStatement(trx, { account, statementId: statement.statementId, businessDate: statement.businessDate, sequence: statement.sequence, intraday: statement.intraday });
      if (same !== undefined && same.fingerprint === fingerprint) return { ...base, outcome: 'unchanged', storedAs: same.id } as StatementOutcome & { storedAs: number };
      // A statement is a sealed input of its date: a closed date takes no new or replacing one.
      const [lock] = await findLocks(trx, [{ account, businessDate: statement.businessDate }]);
      if (lock !== undefined) {
        throw lockedDateError(lock, `${statement.where}: statement ${statement.statementId} would ${same === undefined ? 'be stored as a new statement of it' : 'replace its stored statement'}`, ctx.config.timezone);
      }
      if (same !== undefined && options.replace !== true) {
        conflicts.push(`${statement.where}: statement ${statement.statementId} of ${account} (${statement.businessDate}) is already stored${same.statementId === statement.statementId ? '' : ` as ${same.statementId} (${same.format})`} with other content`);
        return undefined;
      }
      if (same !== undefined) {
        // The matches of its entries are undone first: they stay on record, the entries go.
        await undoMatchesOfStatement(trx, same.id, now);
        await deleteStatement(trx, same.id);
        await recordStatementReplacement(trx, { account, statementId: same.statementId, importId, replacedAt: now, oldFingerprint: same.fingerprint, newFingerprint: fingerprint });
      }
      const id = await storeStatement(trx, whole, importId);
      return { ...base, outcome: same === undefined ? 'new' : 'replaced', storedAs: id } as StatementOutcome & { storedAs: number };
    };
    // Pages of statements sent in several: kept until their statement is whole.
    const touchedPages = new Map<string, { account: string; pageKey: string; where: string }>();
    for (const { file, statement, item, account } of placed) {
      if (statement.page !== undefined && statement.page !== null) {
        const pageKey = statement.sequence !== null ? `sequence ${statement.sequence}` : `id ${statement.statementId}`;
        const conflict = await storePage(trx, { account, pageKey, item, file, importId, replace: options.replace === true, storeOriginal: options.dryRun === true ? async () => null : storeOriginal });
        if (conflict !== undefined) conflicts.push(conflict);
        touchedPages.set(`${account}\u0000${pageKey}`, { account, pageKey, where: statement.where });
        continue;
      }
      // A dry run stores no file's bytes: it is rolled back whole, and need not carry them.
      const fileSha256 = options.dryRun === true ? null : await storeOriginal(file);
      const outcome = await storeWhole({ statement, account, fingerprint: item.fingerprint, entryCount: item.entryCount, booked: item.booked, sourceFile: path.basename(file), fileSha256, writeEntries: (id) => writeSlices(trx, id, item) });
      if (outcome !== undefined) outcomes.push(withoutStoredAs(outcome));
    }
    for (const { account, pageKey, where } of touchedPages.values()) {
      const outcome = await assemblePages(trx, account, pageKey, where, storeWhole);
      if (outcome !== undefined) outcomes.push(outcome);
    }
    if (conflicts.length > 0) {
      throw new InputFileError(`Nothing imported: ${conflicts.join('; ')}. Give --replace to replace it (the replacement is recorded).`, conflicts);
    }
    const stored = outcomes.filter((o) => o.outcome !== 'unchanged' && o.outcome !== 'incomplete');
    // A notification's entries name the end-of-day statement that books them, whichever came first.
    await linkNotificationEntries(trx, [...new Set(stored.map((o) => o.account))]);
    await updateStatementImport(trx, importId, { statements: stored.length, replaced: stored.filter((o) => o.outcome === 'replaced').length });
    // The proofs of the statements stored now, and of stored ones whose proof they changed.
    const storedIds = new Set(stored.map((o) => `${o.account}\u0000${o.statementId}`));
    const proofs = [];
    for (const account of [...new Set(stored.map((o) => o.account))].sort()) {
      proofs.push(...(await proveAccountStatements(trx, account, bankAccounts.find((b) => b.name === account))).filter((p) => p.changed || storedIds.has(`${account}\u0000${p.statementId}`)).map(({ changed: _changed, ...p }) => p));
    }
    // The new entries are matched with the books in this transaction: results follow both.
    const matches = await runMatching(trx, ctx.config, [...new Set(stored.map((o) => o.account))], { now });
    return { dryRun: options.dryRun === true, files: files.map(shownFileName), outcomes, proofs, reconciled: [], matches: matches.length };
  };

  let result: StatementImportResult;
  try {
    result = await ctx.database.db.transaction().execute(async (trx) => {
      const done = await run(trx);
      // A dry run does everything, proofs included, then takes it back.
      if (options.dryRun === true) throw new DryRun(done);
      return done;
    });
  } catch (error) {
    if (error instanceof DryRun) return error.result;
    throw error;
  }
  const changed = result.outcomes.filter((o) => o.outcome !== 'unchanged' && o.outcome !== 'incomplete');
  const accounts = [...new Set(changed.map((o) => o.account))];
  // Statements of several past dates at once (onboarding) are announced in one summary, like a backfill.
  const dates = changed.map((o) => o.businessDate);
  if (accounts.length > 0) result.reconciled = (await foldWhenSeveralDates(ctx, 'bank statements import', dates, () => reconcileOwedDates(ctx, accounts))).reconciled;
  return result;
}

/** A whole statement ready to be stored: read from one file, or assembled from its pages. */
interface WholeStatement {
  statement: ParsedStatement;
  account: string;
  fingerprint: string;
  entryCount: number;
  booked: bigint;
  sourceFile: string;
  fileSha256: string | null;
  /** Assembled from pages: how many. */
  pages?: string;
  writeEntries(statementPk: number): Promise<void>;
}

function withoutStoredAs(outcome: StatementOutcome & { storedAs?: number }): StatementOutcome {
  const { storedAs: _storedAs, ...rest } = outcome;
  return rest;
}

/** Writes a read statement's entries a slice at a time: a file of a million entries is never held whole. */
async function writeSlices(trx: Transaction<Database>, statementPk: number, item: StatementToImport, into: 'statement' | 'page' = 'statement'): Promise<void> {
  let position = 1;
  for await (const slice of item.entrySlices(STATEMENT_ENTRY_BATCH)) {
    if (into === 'statement') await insertStatementEntries(trx, statementPk, position, slice);
    else await insertPageEntries(trx, statementPk, position, slice);
    position += slice.length;
  }
}

async function storeStatement(trx: Transaction<Database>, whole: WholeStatement, importId: number): Promise<number> {
  const s = whole.statement;
  const own = proveStatement({ ...provableOf({ ...s, entries: [] }), booked: whole.booked }, null);
  const id = await insertStatementHead(
    trx,
    {
      account: whole.account,
      statement_id: s.statementId,
      format: s.format,
      intraday: s.intraday,
      sequence: s.sequence === null ? null : s.sequence.toString(),
      business_date: s.businessDate,
      from_date: s.fromDate,
      to_date: s.toDate,
      currency: s.currency,
      scale: currencyDecimals(s.currency)!,
      opening: openingBooked(s)?.toString() ?? null,
      closing: closingBooked(s)?.toString() ?? null,
      entries: whole.entryCount,
      fingerprint: whole.fingerprint,
      // Proved again with its neighbours once every statement of the command is stored.
      ...proofColumns(own),
      import_id: importId,
      source_file: whole.sourceFile,
      file_sha256: whole.fileSha256,
      created_at: validTimestamp(s.createdAt),
    },
    s.balances,
  );
  await whole.writeEntries(id);
  return id;
}

/** What one page is, apart from the statement it belongs to: its number, whether last, its content. */
function pageFingerprint(item: StatementToImport): string {
  const page = item.statement.page!;
  return createHash('sha256').update(`${page.number}/${page.last}/${item.fingerprint}`).digest('hex');
}

/**
 * Stores one page of a statement sent in several, until the rest arrive. The same page again is
 * nothing new; a page with other content replaces a waiting one only with `replace`, and never
 * one already part of a stored statement. Returns the refusal, if any.
 */
async function storePage(
  trx: Transaction<Database>,
  at: { account: string; pageKey: string; item: StatementToImport; file: string; importId: number; replace: boolean; storeOriginal: (file: string) => Promise<string | null> },
): Promise<string | undefined> {
  const { item, account, pageKey } = at;
  const s = item.statement;
  const page = s.page!;
  const fingerprint = pageFingerprint(item);
  const stored = (await listPagesOf(trx, account, pageKey)).find((p) => p.pageNumber === page.number);
  if (stored !== undefined && stored.fingerprint === fingerprint) return undefined;
  if (stored !== undefined) {
    const what = `${s.where}: page ${page.number} of statement ${s.statementId} of ${account} is already stored with other content`;
    if (stored.statementPk !== null) return `${what}, as part of the whole statement: a stored statement's pages are not replaced one by one`;
    if (!at.replace) return what;
    await deletePage(trx, stored.id);
  }
  const id = await insertPage(trx, {
    account,
    pageKey,
    statementId: s.statementId,
    sequence: s.sequence,
    pageNumber: page.number,
    lastPage: page.last,
    format: s.format,
    currency: s.currency,
    scale: currencyDecimals(s.currency)!,
    businessDate: s.businessDate,
    fromDate: s.fromDate,
    toDate: s.toDate,
    createdAt: validTimestamp(s.createdAt),
    balances: s.balances,
    entries: item.entryCount,
    fingerprint,
    importId: at.importId,
    sourceFile: path.basename(at.file),
    fileSha256: await at.storeOriginal(at.file),
  });
  await writeSlices(trx, id, item, 'page');
  return undefined;
}

/** Whether stored pages are a whole statement: pages 1 to N, each once, N the only last page. */
function isComplete(pages: readonly StoredPage[]): boolean {
  if (pages.length === 0) return false;
  return pages.every((p, i) => p.pageNumber === i + 1 && p.lastPage === (i === pages.length - 1));
}

/**
 * Once every page of a statement is stored, the statement made of them: opening balance from the
 * first page, closing from the last, the interim balances between, the entries in page order. It is
 * then stored like a statement read whole (new, unchanged or other content). Until then, the
 * statement is incomplete.
 */
async function assemblePages(
  trx: Transaction<Database>,
  account: string,
  pageKey: string,
  where: string,
  storeWhole: (whole: WholeStatement) => Promise<(StatementOutcome & { storedAs?: number }) | undefined>,
): Promise<StatementOutcome | undefined> {
  const all = await listPagesOf(trx, account, pageKey);
  const waiting = all.filter((p) => p.statementPk === null);
  if (waiting.length === 0) return { account, statementId: all[0]!.statementId, businessDate: all.at(-1)!.businessDate, format: all[0]!.format, where, outcome: 'unchanged', pages: `${all.length} pages` };
  const first = waiting[0]!;
  if (!isComplete(waiting)) {
    return { account, statementId: first.statementId, businessDate: waiting.reduce((d, p) => (p.businessDate > d ? p.businessDate : d), first.businessDate), format: first.format, where, outcome: 'incomplete', pages: `page${waiting.length === 1 ? '' : 's'} ${waiting.map((p) => p.pageNumber).join(', ')} held` };
  }
  const last = waiting.at(-1)!;
  const opening = (b: { code: string }) => b.code === 'OPBD' || b.code === 'PRCD';
  const balances: StatementBalance[] = waiting.flatMap((p) => p.balances.filter((b) => (p === first || !opening(b)) && (p === last || b.code !== 'CLBD')));
  const ids = waiting.map((p) => p.id);
  const { keys, booked } = await bookedKeysOfPages(trx, ids);
  const statement: ParsedStatement = {
    format: first.format,
    where: `${where.replace(/ \([^)]*\)$/, '')} (statement ${first.statementId}, pages 1 to ${waiting.length})`,
    iban: null,
    accountId: null,
    statementId: first.statementId,
    sequence: first.sequence,
    currency: first.currency,
    intraday: false,
    businessDate: last.businessDate,
    fromDate: first.fromDate,
    toDate: last.toDate,
    balances,
    entries: [],
    createdAt: (last.createdAt ?? first.createdAt)?.toISOString() ?? null,
  };
  const outcome = await storeWhole({
    statement,
    account,
    fingerprint: fingerprintOfKeys(statement, keys),
    entryCount: waiting.reduce((n, p) => n + p.entries, 0),
    booked,
    sourceFile: first.sourceFile,
    fileSha256: first.fileSha256,
    pages: `${waiting.length} pages`,
    writeEntries: (statementPk) => copyPageEntries(trx, statementPk, ids),
  });
  if (outcome === undefined) return undefined;
  await attachPages(trx, ids, outcome.storedAs!);
  return withoutStoredAs(outcome);
}

function proofColumns(proof: StatementProof) {
  return {
    proof: proof.proof,
    proof_residual: proof.residual === null ? null : proof.residual.toString(),
    proof_missing: proof.missing === null ? null : describeMissing(proof.missing),
    proof_reason: proof.reason,
  };
}

/**
 * Proves every statement of an account in order, each against the end-of-day statement before
 * it, and writes the proofs that changed. Returns every proof, saying which changed.
 */
export async function proveAccountStatements(trx: Transaction<Database>, account: string, rules: SequenceRules = {}): Promise<Array<StatementImportResult['proofs'][number] & { changed: boolean }>> {
  const all: Array<StatementImportResult['proofs'][number] & { changed: boolean }> = [];
  let previous: PreviousStatement | null = null;
  for (const row of await listStatementChain(trx, account)) {
    const proof = proveStatement(provableOfRow(row), previous, { sequenceRestarts: rules.sequenceRestarts });
    const columns = proofColumns(proof);
    const changed = columns.proof !== row.proof || columns.proof_residual !== row.proof_residual || columns.proof_missing !== row.proof_missing || columns.proof_reason !== row.proof_reason;
    if (changed) await updateStatementProof(trx, row.id, { proof: proof.proof, residual: proof.residual, missing: columns.proof_missing, reason: proof.reason });
    all.push({ account, statementId: row.statement_id, businessDate: row.business_date, proof: proof.proof, detail: columns.proof_missing ?? (proof.residual === null ? null : toMajorUnits(proof.residual, row.scale)), reason: proof.reason, changed });
    if (!row.intraday) previous = { closing: BigInt(row.closing!), sequence: row.sequence === null ? null : BigInt(row.sequence), businessDate: row.business_date };
  }
  return all;
}

function provableOfRow(row: StatementChainRow) {
  const big = (v: string | null) => (v === null ? null : BigInt(v));
  return {
    opbd: big(row.opbd),
    prcd: big(row.prcd),
    closing: row.intraday ? big(row.itbd) : big(row.closing),
    booked: BigInt(row.booked),
    sequence: big(row.sequence),
    intraday: row.intraday,
    businessDate: row.business_date,
  };
}

/** A creation time as the file wrote it, when it is one PostgreSQL reads as a point in time (with its offset); else none. */
function validTimestamp(text: string | null | undefined): string | null {
  if (text === undefined || text === null) return null;
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})?$/.exec(text);
  if (match === null || calendarDate(match[1]!) === undefined || Number(match[2]) > 23 || Number(match[3]) > 59 || Number(match[4]) > 59) return null;
  // Without an offset, the time is the bank's: read as UTC, it still orders one bank's statements.
  return match[6] === undefined ? `${text}Z` : text;
}
