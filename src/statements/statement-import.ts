import path from 'node:path';
import { runMatching, undoMatchesOfStatement } from '../matching/index.js';
import { lockAccountDates } from '../db/date-lock.repository.js';
import { findLocks, lockedDateError } from '../signoff/date-lock.js';
import type { AppContext } from '../app-context.js';
import {
  deleteStatement,
  findSameStatement,
  insertStatement,
  insertStatementImport,
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
import type { Transaction } from 'kysely';
import { bankAccountOf, describeStatementAccount } from './bank-account-match.js';
import { readStatementFile } from './read-statement-file.js';
import type { TextEncodingName } from '../text-encoding.js';
import { calendarDate } from './statement-dates.js';
import { shownFileName, StatementFileError } from './statement-file-error.js';
import { closingBooked, openingBooked, type ParsedStatement } from './statement.js';
import { statementFingerprint } from './statement-fingerprint.js';
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
  outcome: 'new' | 'unchanged' | 'replaced';
  where: string;
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
  const readFiles = files.map((file) => ({ file, ...readStatementFile(file, options.encoding) }));
  const read = readFiles.flatMap(({ file, statements }) => statements.map((statement) => ({ file, statement })));
  const bankAccounts = ctx.config.bankAccounts;
  const problems: string[] = [];
  const placed = read.map(({ file, statement }) => {
    const account = bankAccountOf(statement, bankAccounts);
    if (account === undefined) {
      problems.push(`${statement.where}: ${describeStatementAccount(statement)} is not a configured bank account`);
    } else if (account.currency !== statement.currency) {
      problems.push(`${statement.where}: the statement is in ${statement.currency}, bank account "${account.name}" in ${account.currency}`);
    }
    return { file, statement, account: account?.name ?? '' };
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
    for (const { file, statement, account } of placed) {
      const fingerprint = statementFingerprint(statement);
      const base = { account, statementId: statement.statementId, businessDate: statement.businessDate, format: statement.format, where: statement.where };
      const same = await findSameStatement(trx, { account, statementId: statement.statementId, businessDate: statement.businessDate, sequence: statement.sequence, intraday: statement.intraday });
      if (same !== undefined && same.fingerprint === fingerprint) {
        outcomes.push({ ...base, outcome: 'unchanged' });
        continue;
      }
      // A statement is a sealed input of its date: a closed date takes no new or replacing one.
      const [lock] = await findLocks(trx, [{ account, businessDate: statement.businessDate }]);
      if (lock !== undefined) {
        throw lockedDateError(lock, `${statement.where}: statement ${statement.statementId} would ${same === undefined ? 'be stored as a new statement of it' : 'replace its stored statement'}`, ctx.config.timezone);
      }
      if (same !== undefined && options.replace !== true) {
        conflicts.push(`${statement.where}: statement ${statement.statementId} of ${account} (${statement.businessDate}) is already stored${same.statementId === statement.statementId ? '' : ` as ${same.statementId} (${same.format})`} with other content`);
        continue;
      }
      if (same !== undefined) {
        // The matches of its entries are undone first: they stay on record, the entries go.
        await undoMatchesOfStatement(trx, same.id, now);
        await deleteStatement(trx, same.id);
        await recordStatementReplacement(trx, { account, statementId: same.statementId, importId, replacedAt: now, oldFingerprint: same.fingerprint, newFingerprint: fingerprint });
      }
      // A dry run stores no file's bytes: it is rolled back whole, and need not carry them.
      const fileSha256 = options.dryRun === true ? null : await storeOriginal(file);
      await storeStatement(trx, statement, { account, fingerprint, importId, file, fileSha256 });
      outcomes.push({ ...base, outcome: same === undefined ? 'new' : 'replaced' });
    }
    if (conflicts.length > 0) {
      throw new InputFileError(`Nothing imported: ${conflicts.join('; ')}. Give --replace to replace it (the replacement is recorded).`, conflicts);
    }
    const stored = outcomes.filter((o) => o.outcome !== 'unchanged');
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
  const accounts = [...new Set(result.outcomes.filter((o) => o.outcome !== 'unchanged').map((o) => o.account))];
  if (accounts.length > 0) result.reconciled = (await reconcileOwedDates(ctx, accounts)).reconciled;
  return result;
}

async function storeStatement(trx: Transaction<Database>, s: ParsedStatement, at: { account: string; fingerprint: string; importId: number; file: string; fileSha256: string | null }): Promise<number> {
  const own = proveStatement(provableOf(s), null);
  return insertStatement(
    trx,
    {
      account: at.account,
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
      entries: s.entries.length,
      fingerprint: at.fingerprint,
      // Proved again with its neighbours once every statement of the command is stored.
      ...proofColumns(own),
      import_id: at.importId,
      source_file: path.basename(at.file),
      file_sha256: at.fileSha256,
      created_at: validTimestamp(s.createdAt),
    },
    s.balances,
    s.entries,
  );
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
