import path from 'node:path';
import type { AppContext } from '../app-context.js';
import type { Transaction } from 'kysely';
import { toleranceFor, type Config } from '../config/index.js';
import { InputFileError, ReconError, UsageError } from '../errors.js';
import { formatAmount } from '../money/format-amount.js';
import { referenceScaleFor } from '../money/amount-scale.js';
import type { BooksFormatName, Database } from '../db/database.types.js';
import { lockBooksOfAccounts, previewExpectedBalanceDays, replaceExpectedBalanceDays, type BooksChange } from '../db/expected-balance.repository.js';
import { todayOf } from '../reconciliation/business-dates.js';
import { reconcileOwedDates, resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import { readBalanceFile, type BalanceFileRow } from './books-file.js';
import { loadImportProfile, mergeProfile, resolveBooksFormat, storeImportProfile, type ImportProfile } from './import-profile.js';
import type { SkippedRow } from './table.js';

export interface BooksImportOptions extends ImportProfile {
  /** `--account`: the account of rows without an account column; its saved profile and books settings apply. */
  account?: string;
  /** Work out and report the changes, write nothing. */
  dryRun?: boolean;
  /** `--save-profile`: store this import's options as the account's import profile, with the books. */
  saveProfile?: boolean;
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
  /** Each key added, changed or removed, for `--dry-run` to list. */
  changes: BooksChange[];
  /** The books_imports row recorded for this import; null for a dry run. */
  importId: number | null;
  /** Dates that had results and were reconciled again with the new books. */
  reReconciledDates: number;
  /** Why reconciling those dates again failed after the books were stored (they stay owed). */
  reconcileFailure?: string;
  /** Rows left out on purpose: a title above the header, a footer, total rows. */
  skipped: SkippedRow[];
  /** A dry run whose removals the real import would refuse without --replace-day. */
  removalsNeedConsent: boolean;
  /** The account whose import profile this import used (or saved). */
  profile?: { account: string; used: boolean; saved: boolean };
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
  const accountName = options.account ?? (ctx.config.accounts.length === 1 ? ctx.config.accounts[0]!.name : undefined);
  if (options.saveProfile === true) {
    if (options.dryRun === true) throw new UsageError('--save-profile saves the options of an import that is written; run it without --dry-run.');
    if (accountName === undefined) throw new UsageError(`--save-profile needs --account NAME: a profile belongs to one account (configured: ${ctx.config.accounts.map((a) => a.name).join(', ')}).`);
  }
  const saved = accountName === undefined ? undefined : await loadImportProfile(ctx, accountName);
  const format = resolveBooksFormat(ctx.config, options, saved?.profile);
  const replaceDay = options.replaceDay ?? saved?.profile.replaceDay ?? false;
  // Books of a day that has not begun are a mistake (a wrong year, a template filled ahead).
  const read = await readBalanceFile(filePath, { ...format, account: options.account, knownAccounts: ctx.config.accounts.map((a) => a.name), notAfter: todayOf(ctx) });
  const toSave = options.saveProfile === true ? mergeProfile(options, saved?.profile) : undefined;
  const result = await storeBooks(ctx, read.rows, {
    source: path.basename(filePath),
    format: read.format,
    amounts: format.amounts,
    dryRun: options.dryRun === true,
    reconcile: true,
    refuseRemovals: !replaceDay,
    // The profile is saved with the books it read, in their transaction: both or neither.
    alsoInTransaction: toSave === undefined ? undefined : (trx) => storeImportProfile(trx, accountName!, toSave, ctx.clock.now()),
  });
  return {
    ...result,
    skipped: read.skipped,
    ...(accountName === undefined || (saved === undefined && toSave === undefined) ? {} : { profile: { account: accountName, used: saved !== undefined, saved: toSave !== undefined } }),
  };
}

/**
 * Stores validated books rows (from a file or a ledger query) as one books import, or with
 * `dryRun` only works out what would change. With `reconcile`, dates whose results predate
 * these books are reconciled again before it returns (the commands do; the worker need not).
 */
export async function storeBooks(
  ctx: AppContext,
  rows: readonly BalanceFileRow[],
  how: {
    source: string;
    format: BooksFormatName;
    amounts: 'major' | 'minor';
    dryRun: boolean;
    reconcile: boolean;
    /** Refuse (all or nothing) an import that would remove a day's stored currencies the rows lack. */
    refuseRemovals?: boolean;
    /** More writes that belong with these books, in their transaction. */
    alsoInTransaction?: (trx: Transaction<Database>) => Promise<void>;
  },
): Promise<BooksImportResult> {
  const { source, format, amounts, dryRun } = how;
  const dates = rows.map((r) => r.businessDate).sort();
  const summary = {
    source,
    format,
    amounts,
    dryRun,
    rows: rows.length,
    accounts: [...new Set(rows.map((r) => r.account))].sort(),
    firstDate: dates[0]!,
    lastDate: dates[dates.length - 1]!,
    skipped: [],
    removalsNeedConsent: false,
  };
  const preview = await previewExpectedBalanceDays(ctx.database.db, rows);
  const removals = preview.changes.filter((c) => c.kind === 'removed');
  if (dryRun) {
    return {
      ...summary,
      inserted: preview.inserted,
      replaced: preview.changed + preview.unchanged,
      changed: preview.changed,
      unchanged: preview.unchanged,
      removed: preview.removed,
      changes: preview.changes,
      importId: null,
      reReconciledDates: 0,
      removalsNeedConsent: how.refuseRemovals === true && removals.length > 0,
    };
  }
  if (how.refuseRemovals === true && removals.length > 0) throw removalRefused(source, removals);
  // Settings the re-reconciliation will need are checked before anything is written, so a
  // configuration error ends the command with the database as it was.
  checkComparisonSettings(ctx.config, rows);
  const importedAt = ctx.clock.now();
  const counts = await ctx.database.db.transaction().execute(async (trx) => {
    await lockBooksOfAccounts(trx, rows.map((r) => r.account));
    const written = await replaceExpectedBalanceDays(trx, rows, source, importedAt, { format, amounts });
    // Another import may have added a currency since the preview: still refused, rolled back whole.
    if (how.refuseRemovals === true && written.removed > 0) throw removalRefused(source, [], written.removed);
    await how.alsoInTransaction?.(trx);
    return written;
  });
  const days = new Map(rows.map((r) => [`${r.account}|${r.businessDate}`, { account: r.account, businessDate: r.businessDate }]));
  // The import marked its dates owed (in its transaction, by trigger); those whose cut-off passed
  // are reconciled now, before the command ends. Dates still open wait for their cut-off.
  const pairs = [...days.values()];
  let reReconciledDates = 0;
  let reconcileFailure: string | undefined;
  if (how.reconcile) {
    try {
      reReconciledDates = new Set((await reconcileOwedDates(ctx, [...new Set(pairs.map((p) => p.account))], { only: pairs })).reconciled.map((p) => p.businessDate)).size;
    } catch (error) {
      // The books are committed: the failure is reported beside them, never as "nothing was touched".
      // Their dates stay owed, so the next reconcile (or the worker) takes them up.
      reconcileFailure = error instanceof ReconError ? error.message : `${(error as Error).message ?? String(error)}.`;
      ctx.logger.error({ err: error, source }, 'books imported, but reconciling their dates again failed');
    }
  }
  ctx.logger.info({ source, format, amounts, rows: rows.length, ...counts, reReconciledDates }, 'books imported');
  return { ...summary, ...counts, changes: preview.changes, reReconciledDates, ...(reconcileFailure === undefined ? {} : { reconcileFailure }) };
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
function checkComparisonSettings(config: Config, rows: readonly BalanceFileRow[]): void {
  const seen = new Set<string>();
  for (const { account, currency } of rows) {
    const key = `${account}|${currency}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const decimals = referenceScaleFor(config, config.accounts.find((a) => a.name === account), currency);
    if (decimals !== null) toleranceFor(config, currency, decimals);
  }
}
