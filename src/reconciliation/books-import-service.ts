import path from 'node:path';
import type { AppContext } from '../app-context.js';
import { upsertExpectedBalances } from '../db/expected-balance.repository.js';
import { readBalanceFile } from './books-file.js';

export interface BooksImportResult {
  /** The file name recorded as `source`. */
  source: string;
  rows: number;
  inserted: number;
  replaced: number;
  accounts: string[];
  firstDate: string;
  lastDate: string;
}

/**
 * Imports a books file into expected_balances: validates every row first, then upserts them all
 * in one transaction, so a file is either wholly imported or not at all.
 */
export async function importBooksFile(ctx: AppContext, filePath: string, options: { account?: string } = {}): Promise<BooksImportResult> {
  const rows = await readBalanceFile(filePath, { account: options.account, knownAccounts: ctx.config.accounts.map((a) => a.name) });
  const source = path.basename(filePath);
  const importedAt = ctx.clock.now();
  const counts = await ctx.database.db.transaction().execute((trx) => upsertExpectedBalances(trx, rows, source, importedAt));
  const dates = rows.map((r) => r.businessDate).sort();
  ctx.logger.info({ source, rows: rows.length, ...counts }, 'books imported');
  return { source, rows: rows.length, ...counts, accounts: [...new Set(rows.map((r) => r.account))].sort(), firstDate: dates[0]!, lastDate: dates[dates.length - 1]! };
}
