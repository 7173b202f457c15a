import path from 'node:path';
import type { AppContext } from '../app-context.js';
import { lockBooksOfAccounts, replaceExpectedBalanceDays } from '../db/expected-balance.repository.js';
import { readBalanceFile } from './books-file.js';
import { todayOf } from './business-dates.js';
import { reconcileOwedDates, resolveAccountNames } from './reconciliation-service.js';

export interface BooksImportResult {
  /** The file name recorded as `source`. */
  source: string;
  rows: number;
  inserted: number;
  /** Keys that existed already: changed plus unchanged. */
  replaced: number;
  /** Existing keys whose balance the file changed. */
  changed: number;
  /** Existing keys the file repeats with the same balance. */
  unchanged: number;
  /** Keys of the file's (account, business date) days that the file no longer lists, now deleted. */
  removed: number;
  /** The books_imports row recorded for this file; results computed from it name it. */
  importId: number;
  /** Dates that had results and were reconciled again with the new books. */
  reReconciledDates: number;
  accounts: string[];
  firstDate: string;
  lastDate: string;
}

/**
 * Imports a books file into expected_balances: validates every row first, then, in one
 * transaction, makes each (account, business date) in the file hold exactly the file's rows
 * (new keys inserted, others replaced, the day's keys the file lacks removed), so a file is
 * either wholly imported or not at all and a corrected day never keeps a stale currency.
 */
export async function importBooksFile(ctx: AppContext, filePath: string, options: { account?: string } = {}): Promise<BooksImportResult> {
  // A mistyped --account is one usage error, not the same problem repeated on every line.
  if (options.account !== undefined) resolveAccountNames(ctx.config, options.account);
  // Books of a day that has not begun are a mistake (a wrong year, a template filled ahead).
  const rows = await readBalanceFile(filePath, { account: options.account, knownAccounts: ctx.config.accounts.map((a) => a.name), notAfter: todayOf(ctx) });
  const source = path.basename(filePath);
  const importedAt = ctx.clock.now();
  const counts = await ctx.database.db.transaction().execute(async (trx) => {
    await lockBooksOfAccounts(trx, rows.map((r) => r.account));
    return replaceExpectedBalanceDays(trx, rows, source, importedAt);
  });
  const days = new Map(rows.map((r) => [`${r.account}|${r.businessDate}`, { account: r.account, businessDate: r.businessDate }]));
  // The import marked its dates owed (in its transaction); the ones whose cut-off passed are
  // reconciled now, before the command ends. Dates still open wait for their cut-off.
  const pairs = [...days.values()];
  const reReconciledDates = new Set((await reconcileOwedDates(ctx, [...new Set(pairs.map((p) => p.account))], { only: pairs })).reconciled.map((p) => p.businessDate)).size;
  const dates = rows.map((r) => r.businessDate).sort();
  ctx.logger.info({ source, rows: rows.length, ...counts, reReconciledDates }, 'books imported');
  return { source, rows: rows.length, ...counts, reReconciledDates, accounts: [...new Set(rows.map((r) => r.account))].sort(), firstDate: dates[0]!, lastDate: dates[dates.length - 1]! };
}
