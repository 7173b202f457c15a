import path from 'node:path';
import type { AppContext } from '../app-context.js';
import type { Transaction } from 'kysely';
import { allAccountNames, toleranceFor, type Config } from '../config/index.js';
import { InputFileError, ReconError, UsageError } from '../errors.js';
import { formatAmount } from '../money/format-amount.js';
import { referenceScaleFor } from '../money/amount-scale.js';
import type { BooksFormatName, Database } from '../db/database.types.js';
import {
  applyBooksStage,
  createBooksStage,
  findStagedDuplicates,
  dropStagedDays,
  indexBooksStage,
  listStagedChangedDays,
  listStagedRemovals,
  lockBooksOfAccounts,
  previewBooksStage,
  stageBooksRows,
  summarizeBooksStage,
  type BooksChange,
} from '../db/expected-balance.repository.js';
import { todayOf } from '../reconciliation/business-dates.js';
import { reconcileOwedDates, resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import { foldWhenSeveralDates } from '../notifications/fold-work.js';
import { duplicateProblem, noRows, openBalanceFile, ProblemList, type BalanceFileRow } from './books-file.js';
import { loadImportProfile, loadNamedProfile, loadNamedProfiles, mergeProfile, PROFILE_NAME, resolveBooksFormat, storeImportProfile, storeNamedProfile, type ImportProfile } from './import-profile.js';
import type { SkippedRow } from './table.js';
import { listLiveSignoffs } from '../db/signoff.repository.js';
import { findLocks, lockedDateError } from '../signoff/date-lock.js';
import { lockAccountDates } from '../db/date-lock.repository.js';
import { recordBooksOrigin, type BooksOrigin } from '../db/books-origin.repository.js';

export interface BooksImportOptions extends ImportProfile {
  /** `--account`: the account of rows without an account column; its saved profile and books settings apply. */
  account?: string;
  /** Work out and report the changes, write nothing. */
  dryRun?: boolean;
  /** `--save-profile`: store this import's options as the account's import profile (or the named `profile`), with the books. */
  saveProfile?: boolean;
  /** `--profile NAME`: the source's named profile, read (and with saveProfile, saved) instead of an account's. */
  profile?: string;
}

export interface BooksImportResult {
  /** The file name (or `sql:<query file>`) recorded as `source`. */
  source: string;
  format: BooksFormatName;
  amounts: 'major' | 'minor';
  dryRun: boolean;
  rows: number;
  inserted: number;
  /** Keys that existed already: changed plus unchanged. */
  replaced: number;
  /** Existing keys whose balance the books changed. */
  changed: number;
  /** Existing keys the books repeat with the same balance. */
  unchanged: number;
  /** Keys of the books' (account, business date) days that they no longer list, deleted (or that would be). */
  removed: number;
  /** Each key added, changed or removed, for `--dry-run` to list (the first 1,000). */
  changes: BooksChange[];
  /** Changes a dry run did not list (beyond the first 1,000). */
  changesNotListed: number;
  /** The books_imports row recorded for this import; null for a dry run. */
  importId: number | null;
  /** Dates that had results and were reconciled again with the new books. */
  reReconciledDates: number;
  /** Those dates, for what follows a reconcile (a clean date prepares itself for sign-off). */
  reconciledDates?: string[];
  /** Why reconciling those dates again failed after the books were stored (they stay owed). */
  reconcileFailure?: string;
  /** Rows left out on purpose: a title above the header, a footer, total rows. */
  skipped: SkippedRow[];
  /** A dry run whose removals the real import would refuse without --replace-day. */
  removalsNeedConsent: boolean;
  /** The account whose import profile this import used (or saved), or the named profile (`name`). */
  profile?: { account?: string; name?: string; used: boolean; saved: boolean };
  accounts: string[];
  firstDate: string;
  lastDate: string;
}

/**
 * Imports a books file into expected_balances: validates every row first, then, in one
 * transaction, makes each (account, business date) in the file hold exactly the file's rows
 * (new keys inserted, others replaced), so a file is either wholly imported or not at all. The
 * day's stored currencies the file lacks are removed only with consent (--replace-day, or the
 * account's saved profile): a one-line correction file must not silently drop the others.
 */
export async function importBooksFile(ctx: AppContext, filePath: string, options: BooksImportOptions = {}): Promise<BooksImportResult> {
  // A mistyped --account is one usage error, not the same problem repeated on every line.
  if (options.account !== undefined) resolveAccountNames(ctx.config, options.account);
  if (options.profile !== undefined) return importWithNamedProfile(ctx, filePath, options.profile, options);
  const accountName = options.account ?? (ctx.config.accounts.length === 1 ? ctx.config.accounts[0]!.name : undefined);
  if (options.saveProfile === true) {
    if (options.dryRun === true) throw new UsageError('--save-profile saves the options of an import that is written; run it without --dry-run.');
    if (accountName === undefined) throw new UsageError(
        `--save-profile needs --account NAME for one account's profile (configured: ${ctx.config.accounts.map((a) => a.name).join(', ')}), or --profile NAME for an export that names its accounts in a column.`,
      );
  }
  const saved = accountName === undefined ? undefined : await loadImportProfile(ctx, accountName);
  const format = resolveBooksFormat(ctx.config, options, saved?.profile);
  const replaceDay = options.replaceDay ?? saved?.profile.replaceDay ?? false;
  // Books of a day that has not begun are a mistake (a wrong year, a template filled ahead).
  const opened = await openBalanceFile(filePath, { ...format, account: options.account, knownAccounts: allAccountNames(ctx.config), notAfter: todayOf(ctx) });
  const toSave = options.saveProfile === true ? mergeProfile(options, saved?.profile) : undefined;
  const result = await storeBookBatches(ctx, opened, {
    source: path.basename(filePath),
    origin: { filePath },
    format: opened.format,
    amounts: format.amounts,
    dryRun: options.dryRun === true,
    reconcile: true,
    refuseRemovals: !replaceDay,
    // The profile is saved with the books it read, in their transaction: both or neither.
    alsoInTransaction: toSave === undefined ? undefined : (trx) => storeImportProfile(trx, accountName!, toSave, ctx.clock.now()),
  });
  return {
    ...result,
    ...(accountName === undefined || (saved === undefined && toSave === undefined) ? {} : { profile: { account: accountName, used: saved !== undefined, saved: toSave !== undefined } }),
  };
}

/**
 * An import read with a source's named profile: the file names its accounts (any configured one,
 * bank accounts included) in its account column; no account's own profile applies. With
 * `saveProfile` the options given, over the profile's, are saved as the profile with the books.
 */
async function importWithNamedProfile(ctx: AppContext, filePath: string, name: string, options: BooksImportOptions): Promise<BooksImportResult> {
  if (!PROFILE_NAME.test(name)) throw new UsageError(`--profile "${name}" is not a profile name: letters, digits, ".", "-" and "_", at most 64.`);
  if (options.saveProfile === true && options.dryRun === true) throw new UsageError('--save-profile saves the options of an import that is written; run it without --dry-run.');
  const saved = await loadNamedProfile(ctx, name);
  if (saved === undefined && options.saveProfile !== true) {
    const names = (await loadNamedProfiles(ctx)).map((p) => p.name);
    throw new UsageError(
      `There is no import profile "${name}" (${names.length === 0 ? 'none is saved' : `saved: ${names.join(', ')}`}). Save it with: wallet-recon ledger import FILE [options] --profile ${name} --save-profile`,
    );
  }
  const format = resolveBooksFormat(ctx.config, { ...options, account: options.account }, saved?.profile);
  const replaceDay = options.replaceDay ?? saved?.profile.replaceDay ?? false;
  const opened = await openBalanceFile(filePath, { ...format, account: options.account, knownAccounts: allAccountNames(ctx.config), notAfter: todayOf(ctx) });
  const toSave = options.saveProfile === true ? mergeProfile(options, saved?.profile) : undefined;
  const result = await storeBookBatches(ctx, opened, {
    source: path.basename(filePath),
    format: opened.format,
    amounts: format.amounts,
    dryRun: options.dryRun === true,
    reconcile: true,
    refuseRemovals: !replaceDay,
    alsoInTransaction: toSave === undefined ? undefined : (trx) => storeNamedProfile(trx, name, toSave, ctx.clock.now()),
  });
  return { ...result, profile: { name, used: saved !== undefined, saved: toSave !== undefined } };
}

/** How a set of books rows is stored (a file or a ledger query). */
export interface StoreBooksHow {
  source: string;
  format: BooksFormatName;
  amounts: 'major' | 'minor';
  dryRun: boolean;
  reconcile: boolean;
  /** Refuse (all or nothing) an import that would remove a day's stored currencies the rows lack. */
  refuseRemovals?: boolean;
  /** More writes that belong with these books, in their transaction. */
  alsoInTransaction?: (trx: Transaction<Database>) => Promise<void>;
  /** The file or query the rows came from, kept with the import (the evidence pack hands it out). */
  origin?: BooksOrigin;
}

/**
 * Stores validated books rows (from a ledger query) as one books import, or with `dryRun` only
 * works out what would change. With `reconcile`, dates whose results predate these books are
 * reconciled again before it returns (the commands do; the worker need not).
 */
export async function storeBooks(ctx: AppContext, rows: readonly BalanceFileRow[], how: StoreBooksHow): Promise<BooksImportResult> {
  async function* once(): AsyncGenerator<BalanceFileRow[]> {
    yield [...rows];
  }
  return storeBookBatches(ctx, { name: how.source, unit: 'row', batches: once(), problems: new ProblemList(), skipped: [] }, how);
}

// Duplicates listed by a refused import, and changes by a dry run; the counts cover them all.
const LISTED_DUPLICATES = 1_000;
const LISTED_CHANGES = 1_000;

/** Thrown to end a dry run's transaction, which rolls back everything it staged. */
class DryRunEnded {
  constructor(readonly result: BooksImportResult) {}
}

/**
 * The one all-or-nothing path of every books import: in a single transaction the rows are staged
 * batch by batch while they are read (memory is one batch), then checked as a whole (problems of
 * any row, keys repeated, settings the reconciliation will need, removals without consent), then
 * compared with the stored books and stored set-based. Any problem rolls the transaction back, so
 * a failed import leaves the database as it was. Dates whose cut-off passed are reconciled after.
 */
async function storeBookBatches(
  ctx: AppContext,
  input: { name: string; unit: 'line' | 'row'; batches: AsyncIterable<BalanceFileRow[]>; problems: ProblemList; skipped: SkippedRow[] },
  how: StoreBooksHow,
): Promise<BooksImportResult> {
  const { source, format, amounts, dryRun } = how;
  const importedAt = ctx.clock.now();
  let stored: { result: BooksImportResult; days: Array<{ account: string; businessDate: string }> };
  try {
    stored = await ctx.database.db.transaction().execute(async (trx) => {
      await createBooksStage(trx);
      for await (const batch of input.batches) {
        // Once a row is bad nothing will be written: the rest is read only for its problems.
        if (input.problems.count === 0) await stageBooksRows(trx, batch);
      }
      if (input.problems.count === 0) {
        await indexBooksStage(trx);
        const duplicates = await findStagedDuplicates(trx, LISTED_DUPLICATES);
        for (const d of duplicates.listed) input.problems.add(duplicateProblem(input.name, input.unit, d.line, d.firstLine, d));
        for (let i = duplicates.listed.length; i < duplicates.count; i++) input.problems.add(`${input.name}: a further duplicate key`);
      }
      input.problems.throwIfAny(input.name);
      const staged = await summarizeBooksStage(trx);
      if (staged.rows === 0) throw noRows(input.name);
      // Settings the re-reconciliation will need are checked before anything is written, so a
      // configuration error ends the command with the database as it was.
      checkComparisonSettings(ctx.config, staged.currencies);
      // Concurrent imports of the same accounts take turns from here until the commit.
      if (!dryRun) await lockBooksOfAccounts(trx, staged.accounts);
      // And with an approval of any of its days: whichever commits first, the other sees it.
      if (!dryRun) await lockAccountDates(trx, staged.days);
      const preview = await previewBooksStage(trx, dryRun ? LISTED_CHANGES : 0);
      const summary = {
        source,
        format,
        amounts,
        dryRun,
        rows: staged.rows,
        accounts: staged.accounts,
        firstDate: staged.firstDate!,
        lastDate: staged.lastDate!,
        skipped: input.skipped,
        inserted: preview.inserted,
        replaced: preview.changed + preview.unchanged,
        changed: preview.changed,
        unchanged: preview.unchanged,
        removed: preview.removed,
        removalsNeedConsent: false,
        reReconciledDates: 0,
      };
      // A change to a closed day is refused, dry run or not.
      if (dryRun) await daysLeftAsSigned(trx, staged.days, ctx.config.timezone);
      if (dryRun) {
        const listed = preview.changes;
        const total = preview.inserted + preview.changed + preview.removed;
        throw new DryRunEnded({ ...summary, changes: listed, changesNotListed: total - listed.length, importId: null, removalsNeedConsent: how.refuseRemovals === true && preview.removed > 0 });
      }
      if (how.refuseRemovals === true && preview.removed > 0) throw removalRefused(source, await listStagedRemovals(trx, 10), preview.removed);
      const signed = await daysLeftAsSigned(trx, staged.days, ctx.config.timezone);
      if (signed.length === staged.days.length) {
        // Every day of the books is signed off and identical: nothing to write, nothing invalidated.
        await how.alsoInTransaction?.(trx);
        ctx.logger.info({ source, rows: staged.rows }, 'books imported: identical to the signed-off books, nothing written');
        return { result: { ...summary, changes: [], changesNotListed: 0, importId: null }, days: [] };
      }
      await dropStagedDays(trx, signed);
      const { importId } = await applyBooksStage(trx, source, importedAt, { rows: staged.rows, format, amounts });
      if (how.origin !== undefined) await recordBooksOrigin(trx, importId, how.origin, importedAt);
      await how.alsoInTransaction?.(trx);
      const written = new Set(signed.map((d) => `${d.account}|${d.businessDate}`));
      return { result: { ...summary, changes: [], changesNotListed: 0, importId }, days: staged.days.filter((d) => !written.has(`${d.account}|${d.businessDate}`)) };
    });
  } catch (error) {
    if (error instanceof DryRunEnded) return error.result;
    throw error;
  }
  const { result, days } = stored;
  // The import marked its dates owed (in its transaction, by trigger); those whose cut-off passed
  // are reconciled now, before the command ends. Dates still open wait for their cut-off.
  let reReconciledDates = 0;
  let reconciledDates: string[] = [];
  let reconcileFailure: string | undefined;
  if (how.reconcile) {
    try {
      // Books of several past dates at once (onboarding) are announced in one summary, like a backfill.
      const settled = await foldWhenSeveralDates(ctx, 'books import', days.map((d) => d.businessDate), () => reconcileOwedDates(ctx, result.accounts, { only: days }));
      reconciledDates = [...new Set(settled.reconciled.map((p) => p.businessDate))].sort();
      reReconciledDates = reconciledDates.length;
      // Each account-date that failed stays owed with its reason; the import still says so.
      if (settled.failed.length > 0) reconcileFailure = settled.failed.map((f) => `${f.account} ${f.businessDate}: ${f.reason.replace(/\.?$/, '.')}`).join(' ');
    } catch (error) {
      // The books are committed: the failure is reported beside them, never as "nothing was touched".
      // Their dates stay owed, so the next reconcile (or the worker) takes them up.
      reconcileFailure = error instanceof ReconError ? error.message : `${(error as Error).message ?? String(error)}.`;
      ctx.logger.error({ err: error, source }, 'books imported, but reconciling their dates again failed');
    }
  }
  const { inserted, changed, unchanged, removed, importId } = result;
  ctx.logger.info({ source, format, amounts, rows: result.rows, importId, inserted, changed, unchanged, removed, reReconciledDates }, 'books imported');
  return { ...result, reReconciledDates, reconciledDates, ...(reconcileFailure === undefined ? {} : { reconcileFailure }) };
}

/** The refusal of an import that would remove a day's other currencies without consent. */
function removalRefused(source: string, removals: readonly BooksChange[], count = removals.length): InputFileError {
  const listed = removals.slice(0, 10).map((c) => `${c.account} ${c.businessDate} ${c.currency} (${formatAmount(c.before!, c.currency)})`);
  const more = count > listed.length && listed.length > 0 ? ` and ${count - listed.length} more` : '';
  return new InputFileError(
    `${source} would remove ${count} stored balance${count === 1 ? '' : 's'} of the days it lists, because it lacks their currencies${listed.length === 0 ? '' : `: ${listed.join(', ')}${more}`}. ` +
      `Each day in a books file is taken as that day's complete books: pass --replace-day to remove them (save that consent with --save-profile), or add their rows. Nothing was imported.`,
    removals.map((c) => `would remove ${c.account} ${c.businessDate} ${c.currency}`),
  );
}

/**
 * Throws the ConfigError reconciling these books would throw for a setting (a tolerance finer
 * than a currency's minor unit), before the import writes anything.
 */
function checkComparisonSettings(config: Config, pairs: ReadonlyArray<{ account: string; currency: string }>): void {
  for (const { account, currency } of pairs) {
    const decimals = referenceScaleFor(config, config.accounts.find((a) => a.name === account), currency);
    if (decimals !== null) toleranceFor(config, currency, decimals);
  }
}

/**
 * The staged days that a sign-off covers and the books leave as they are: such a day is not
 * written at all (taken out of the stage), so an identical re-import neither rewrites a locked day
 * nor invalidates a prepared one. A change to a day an approved sign-off locks refuses the whole
 * import before anything is written (DateLockedError), whatever its other days hold.
 */
async function daysLeftAsSigned(trx: Transaction<Database>, days: ReadonlyArray<{ account: string; businessDate: string }>, timezone: string): Promise<Array<{ account: string; businessDate: string }>> {
  const changed = await listStagedChangedDays(trx);
  const changes = new Map(changed.map((d) => [`${d.account}|${d.businessDate}`, d.changes]));
  for (const lock of await findLocks(trx, changed)) {
    throw lockedDateError(lock, `this import would change ${changes.get(`${lock.account}|${lock.businessDate}`)} of its expected balances`, timezone);
  }
  const live = await listLiveSignoffs(trx, [...new Set(days.map((p) => p.businessDate))]);
  return days.filter((p) => !changes.has(`${p.account}|${p.businessDate}`) && live.some((s) => s.businessDate === p.businessDate && s.accountSet.includes(p.account)));
}
