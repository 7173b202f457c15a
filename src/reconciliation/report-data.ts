import type { Kysely } from 'kysely';
import { datesBetween } from '../clock.js';
import type { Database } from '../db/database.types.js';
import { listExpectedBalancesBetween } from '../db/expected-balance.repository.js';
import { listBalanceHistory, listResults } from '../db/reconciliation-result.repository.js';
import { addCounts, countByStatus, reconciliationExitCode, type ReconciliationResult, type StatusCounts, type StoredReconciliationResult } from './reconciliation-result.js';

/** The business dates (inclusive) and, optionally, the one account a report covers. */
export interface ReportRange {
  from: string;
  to: string;
  account?: string;
}

export interface ReportSummary {
  from: string;
  to: string;
  /** The account asked for, or null for all. */
  account: string | null;
  total: StatusCounts;
  accounts: Array<{ account: string; counts: StatusCounts }>;
  /** What `reconcile` would exit with for these results: 0 all matched, 3 otherwise. */
  exitCode: 0 | 3;
}

/** A summary and the results it summarises. */
export interface Report<R extends ReconciliationResult = StoredReconciliationResult> {
  summary: ReportSummary;
  results: R[];
}

/** One line of a chart: an account's gateway balances or its books, by business date. */
export interface BalanceSeries {
  account: string;
  kind: 'gateway' | 'books';
  points: Array<{ date: string; balance: bigint }>;
}

/** Every series of one currency over the report's dates. */
export interface CurrencyHistory {
  currency: string;
  dates: string[];
  series: BalanceSeries[];
}

/** Builds the summary of a set of results, per account (sorted) and in total. */
export function summarizeResults<R extends ReconciliationResult>(range: ReportRange, results: R[]): Report<R> {
  const names = [...new Set([...(range.account === undefined ? [] : [range.account]), ...results.map((r) => r.account)])].sort();
  const accounts = names.map((account) => ({ account, counts: countByStatus(results.filter((r) => r.account === account)) }));
  const total = accounts.reduce((sum, a) => addCounts(sum, a.counts), countByStatus([]));
  return { summary: { from: range.from, to: range.to, account: range.account ?? null, total, accounts, exitCode: reconciliationExitCode(total) }, results };
}

/** Reads the stored results over a range and summarises them. */
export async function loadReport(db: Kysely<Database>, range: ReportRange): Promise<Report> {
  return summarizeResults(range, await listResults(db, range));
}

/** Per currency, each account's gateway balances (`balance_history`) and books over the range. */
export async function loadCurrencyHistories(db: Kysely<Database>, range: ReportRange): Promise<CurrencyHistory[]> {
  const dates = datesBetween(range.from, range.to);
  const byCurrency = new Map<string, Map<string, BalanceSeries>>();
  const add = (currency: string, account: string, kind: BalanceSeries['kind'], date: string, balance: bigint) => {
    const series = byCurrency.get(currency) ?? new Map<string, BalanceSeries>();
    byCurrency.set(currency, series);
    const key = `${account}\u0000${kind}`;
    const line = series.get(key) ?? { account, kind, points: [] };
    series.set(key, line);
    line.points.push({ date, balance });
  };
  for (const h of await listBalanceHistory(db, range)) add(h.currency, h.account, 'gateway', h.businessDate, h.balance);
  for (const b of await listExpectedBalancesBetween(db, range)) add(b.currency, b.account, 'books', b.businessDate, b.balance);
  return [...byCurrency.keys()].sort().map((currency) => ({
    currency,
    dates,
    series: [...byCurrency.get(currency)!.values()].sort((a, b) => a.account.localeCompare(b.account) || (a.kind === b.kind ? 0 : a.kind === 'gateway' ? -1 : 1)),
  }));
}
