import path from 'node:path';
import type { AppContext } from '../app-context.js';
import type { AccountBooksSettings, Config } from '../config/index.js';
import type { BooksFormatName } from '../db/database.types.js';
import { lockBooksOfAccounts, previewExpectedBalanceDays, replaceExpectedBalanceDays, type BooksChange } from '../db/expected-balance.repository.js';
import { todayOf } from '../reconciliation/business-dates.js';
import { reconcileOwedDates, resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import { readBalanceFile, type BalanceFileRow, type BooksFormat } from './books-file.js';
import { listLiveSignoffs } from '../db/signoff.repository.js';
import { findLocks, lockedDateError } from '../signoff/date-lock.js';

export interface BooksImportOptions extends Partial<BooksFormat> {
  /** `--account`: the account of rows without an account column; its saved books settings apply. */
  account?: string;
  /** Work out and report the changes, write nothing. */
  dryRun?: boolean;
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
  accounts: string[];
  firstDate: string;
  lastDate: string;
}

/**
 * How an account's books are written: the command line's options over the account's saved
 * `books` settings, over the defaults (major units, decimal point, ISO dates, default headers).
 * Without --account the saved settings of the only configured account apply.
 */
export function resolveBooksFormat(config: Config, options: Partial<BooksFormat> & { account?: string }): BooksFormat {
  const accountName = options.account ?? (config.accounts.length === 1 ? config.accounts[0]!.name : undefined);
  const saved: AccountBooksSettings = config.accounts.find((a) => a.name === accountName)?.books ?? {};
  return {
    amounts: options.amounts ?? saved.amounts ?? 'major',
    decimalComma: options.decimalComma ?? saved.decimalComma ?? false,
    dateFormat: options.dateFormat ?? saved.dateFormat,
    map: options.map ?? saved.map,
  };
}

/**
 * Imports a books file into expected_balances: validates every row first, then, in one
 * transaction, makes each (account, business date) in the file hold exactly the file's rows
 * (new keys inserted, others replaced, the day's keys the file lacks removed), so a file is
 * either wholly imported or not at all and a corrected day never keeps a stale currency.
 */
export async function importBooksFile(ctx: AppContext, filePath: string, options: BooksImportOptions = {}): Promise<BooksImportResult> {
  // A mistyped --account is one usage error, not the same problem repeated on every line.
  if (options.account !== undefined) resolveAccountNames(ctx.config, options.account);
  const format = resolveBooksFormat(ctx.config, options);
  // Books of a day that has not begun are a mistake (a wrong year, a template filled ahead).
  const read = await readBalanceFile(filePath, { ...format, account: options.account, knownAccounts: ctx.config.accounts.map((a) => a.name), notAfter: todayOf(ctx) });
  return storeBooks(ctx, read.rows, { source: path.basename(filePath), format: read.format, amounts: format.amounts, dryRun: options.dryRun === true, reconcile: true });
}

/**
 * Stores validated books rows (from a file or a ledger query) as one books import, or with
 * `dryRun` only works out what would change. With `reconcile`, dates whose results predate
 * these books are reconciled again before it returns (the commands do; the worker need not).
 */
export async function storeBooks(
  ctx: AppContext,
  rows: readonly BalanceFileRow[],
  how: { source: string; format: BooksFormatName; amounts: 'major' | 'minor'; dryRun: boolean; reconcile: boolean },
): Promise<BooksImportResult> {
  const { source, format, amounts, dryRun } = how;
  const dates = rows.map((r) => r.businessDate).sort();
  const summary = { source, format, amounts, dryRun, rows: rows.length, accounts: [...new Set(rows.map((r) => r.account))].sort(), firstDate: dates[0]!, lastDate: dates[dates.length - 1]! };
  const preview = await previewExpectedBalanceDays(ctx.database.db, rows);
  const signed = await daysLeftAsSigned(ctx, rows, preview.changes);
  if (dryRun) {
    return { ...summary, inserted: preview.inserted, replaced: preview.changed + preview.unchanged, changed: preview.changed, unchanged: preview.unchanged, removed: preview.removed, changes: preview.changes, importId: null, reReconciledDates: 0 };
  }
  const written = rows.filter((r) => !signed.has(`${r.account}|${r.businessDate}`));
  if (written.length === 0) {
    // Every day of the file is signed and identical: nothing to write, nothing invalidated.
    ctx.logger.info({ source, rows: rows.length, unchanged: preview.unchanged }, 'books imported: identical to the signed-off books, nothing written');
    return { ...summary, inserted: 0, replaced: preview.unchanged, changed: 0, unchanged: preview.unchanged, removed: 0, changes: [], importId: null, reReconciledDates: 0 };
  }
  const importedAt = ctx.clock.now();
  const counts = await ctx.database.db.transaction().execute(async (trx) => {
    await lockBooksOfAccounts(trx, written.map((r) => r.account));
    return replaceExpectedBalanceDays(trx, written, source, importedAt, { format, amounts });
  });
  // Days left as signed count as unchanged: their rows are the stored ones.
  counts.unchanged += rows.length - written.length;
  counts.replaced += rows.length - written.length;
  const days = new Map(written.map((r) => [`${r.account}|${r.businessDate}`, { account: r.account, businessDate: r.businessDate }]));
  // The import marked its dates owed (in its transaction, by trigger); those whose cut-off passed
  // are reconciled now, before the command ends. Dates still open wait for their cut-off.
  const pairs = [...days.values()];
  const reReconciledDates = how.reconcile
    ? new Set((await reconcileOwedDates(ctx, [...new Set(pairs.map((p) => p.account))], { only: pairs })).reconciled.map((p) => p.businessDate)).size
    : 0;
  ctx.logger.info({ source, format, amounts, rows: rows.length, ...counts, reReconciledDates }, 'books imported');
  return { ...summary, ...counts, changes: preview.changes, reReconciledDates };
}

/**
 * The (account, business date) days of these books that a sign-off covers and the books leave as
 * they are: such a day is not written at all, so an identical re-import neither rewrites a locked
 * day nor invalidates a prepared one. A change to a day an approved sign-off locks refuses the
 * whole file before anything is written (DateLockedError), whatever its other days hold.
 */
async function daysLeftAsSigned(ctx: AppContext, rows: readonly BalanceFileRow[], changes: readonly BooksChange[]): Promise<Set<string>> {
  const db = ctx.database.db;
  const pairs = [...new Map(rows.map((r) => [`${r.account}|${r.businessDate}`, { account: r.account, businessDate: r.businessDate }])).values()];
  const changed = new Map<string, number>();
  for (const c of changes) changed.set(`${c.account}|${c.businessDate}`, (changed.get(`${c.account}|${c.businessDate}`) ?? 0) + 1);
  for (const lock of await findLocks(db, pairs)) {
    const n = changed.get(`${lock.account}|${lock.businessDate}`) ?? 0;
    if (n > 0) throw lockedDateError(lock, `this import would change ${n} of its expected balances`);
  }
  const live = await listLiveSignoffs(db, [...new Set(pairs.map((p) => p.businessDate))]);
  const covered = (p: { account: string; businessDate: string }) => live.some((s) => s.businessDate === p.businessDate && s.accountSet.includes(p.account));
  return new Set(pairs.filter((p) => covered(p) && !changed.has(`${p.account}|${p.businessDate}`)).map((p) => `${p.account}|${p.businessDate}`));
}
