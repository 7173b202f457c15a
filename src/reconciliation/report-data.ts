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
  /** Per account: its counts and the dates of the range (up to today) without any stored result. */
  accounts: Array<{ account: string; counts: StatusCounts; unreconciledDates: string[] }>;
  /** Dates of the range (up to today) on which some account has no stored result: never reconciled. */
  unreconciledDates: string[];
  /** 0 when every result matched and every date was reconciled, 3 otherwise (what `reconcile` would exit with). */
  exitCode: 0 | 3;
}

/** What a summary needs beyond the results to tell which dates were never reconciled. */
export interface SummaryOptions {
  /** The accounts the report covers; without them no date is reported as not reconciled. */
  accounts?: readonly string[];
  /** Today's business date: later dates of the range cannot have been reconciled yet. */
  today?: string;
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

/**
 * Builds the summary of a set of results, per account (sorted) and in total. With `accounts`,
 * a date of the range (up to `today`) on which one of them has no result at all is listed as
 * not reconciled: an empty day must never read as a clean one.
 */
export function summarizeResults<R extends ReconciliationResult>(range: ReportRange, results: R[], options: SummaryOptions = {}): Report<R> {
  const expected = options.accounts ?? [];
  const names = [...new Set([...(range.account === undefined ? [] : [range.account]), ...expected, ...results.map((r) => r.account)])].sort();
  const last = options.today !== undefined && options.today < range.to ? options.today : range.to;
  const dates = range.from <= last ? datesBetween(range.from, last) : [];
  const accounts = names.map((account) => {
    const own = results.filter((r) => r.account === account);
    const reconciled = new Set(own.map((r) => r.businessDate));
    const unreconciledDates = expected.includes(account) ? dates.filter((d) => !reconciled.has(d)) : [];
    return { account, counts: countByStatus(own), unreconciledDates };
  });
  const total = accounts.reduce((sum, a) => addCounts(sum, a.counts), countByStatus([]));
  const unreconciledDates = dates.filter((d) => accounts.some((a) => a.unreconciledDates.includes(d)));
  const exitCode = unreconciledDates.length > 0 ? 3 : reconciliationExitCode(total);
  return { summary: { from: range.from, to: range.to, account: range.account ?? null, total, accounts, unreconciledDates, exitCode }, results };
}

/** Reads the stored results over a range and summarises them, listing the dates never reconciled. */
export async function loadReport(db: Kysely<Database>, range: ReportRange, options: SummaryOptions = {}): Promise<Report> {
  return summarizeResults(range, await listResults(db, range), options);
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
