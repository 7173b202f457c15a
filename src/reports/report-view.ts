import { RECONCILIATION_STATUSES, WAITING_STATUSES, type ReconciliationResult, type ReconciliationStatus } from '../reconciliation/reconciliation-result.js';
import type { CurrencyHistory, Report } from './report-data.js';

/** A currency table longer than this shows its matched rows collapsed. */
export const MATCHED_ROWS_SHOWN = 8;

/** Per status of one currency: how many results and the sum of their differences (null: no difference to sum). */
export interface StatusTotal {
  status: ReconciliationStatus;
  count: number;
  difference: bigint | null;
}

/** One currency's part of the report: its results, the exceptions first, and totals per status. */
export interface CurrencySection<R extends ReconciliationResult> {
  currency: string;
  /** Results that need attention, by date and account. */
  exceptions: R[];
  /** Matched results, by date and account. */
  matched: R[];
  /** Whether the matched rows are collapsed by default (many of them). */
  collapseMatched: boolean;
  totals: StatusTotal[];
  /** A break or a movement: the currency is worth a chart. */
  moved: boolean;
}

/** The report as a finance document reads it, independent of its format. */
export interface ReportView<R extends ReconciliationResult> {
  /** Every result that is not matched, over all currencies: largest absolute difference first. */
  breaks: R[];
  sections: Array<CurrencySection<R>>;
  /** Histories of the currencies that moved or broke only, all over the same dates. */
  charts: CurrencyHistory[];
}

const abs = (v: bigint) => (v < 0n ? -v : v);

/**
 * Orders exceptions as an accountant works through them: the largest absolute difference first,
 * then results without a difference (a missing side, no snapshot), then by date and account.
 */
export function compareByAbsoluteDifference(a: ReconciliationResult, b: ReconciliationResult): number {
  if (a.difference !== null && b.difference !== null) {
    const [x, y] = [abs(a.difference), abs(b.difference)];
    if (x !== y) return x > y ? -1 : 1;
  } else if (a.difference !== null || b.difference !== null) {
    return a.difference !== null ? -1 : 1;
  }
  return a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account) || (a.currency ?? '').localeCompare(b.currency ?? '');
}

function compareByDate(a: ReconciliationResult, b: ReconciliationResult): number {
  return a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account) || (a.currency ?? '').localeCompare(b.currency ?? '');
}

export function totalsOf(results: readonly ReconciliationResult[]): StatusTotal[] {
  return RECONCILIATION_STATUSES.flatMap((status) => {
    const own = results.filter((r) => r.status === status);
    if (own.length === 0) return [];
    const differences = own.flatMap((r) => (r.difference === null ? [] : [r.difference]));
    return [{ status, count: own.length, difference: differences.length === 0 ? null : differences.reduce((a, b) => a + b, 0n) }];
  });
}

/** Builds the view every human-facing report renders: exceptions first, sections per currency, charts that tell something. */
export function buildReportView<R extends ReconciliationResult>(report: Report<R>, histories: readonly CurrencyHistory[]): ReportView<R> {
  const breaks = report.results.filter((r) => r.status !== 'matched' && !WAITING_STATUSES.includes(r.status)).sort(compareByAbsoluteDifference);
  const currencies = [...new Set(report.results.flatMap((r) => (r.currency === null ? [] : [r.currency])))].sort();
  // Grouped once by currency: a filter per currency over all results multiplied the two.
  const byCurrency = new Map<string, R[]>();
  for (const r of report.results) {
    if (r.currency === null) continue;
    const own = byCurrency.get(r.currency);
    if (own === undefined) byCurrency.set(r.currency, [r]);
    else own.push(r);
  }
  const sections = currencies.map((currency) => {
    const own = byCurrency.get(currency)!;
    const matched = own.filter((r) => r.status === 'matched');
    return {
      currency,
      // In date order, as the matched rows: a range's table reads down the dates.
      exceptions: own.filter((r) => r.status !== 'matched').sort(compareByDate),
      matched,
      collapseMatched: matched.length > MATCHED_ROWS_SHOWN,
      totals: totalsOf(own),
      moved: own.some((r) => r.status !== 'matched' || (r.movement !== null && r.movement !== 0n)),
    };
  });
  const chartable = new Set(sections.filter((s) => s.moved).map((s) => s.currency));
  // A chart of one date is one point: it shows nothing the table does not (a one-day report).
  return { breaks, sections, charts: histories.filter((h) => chartable.has(h.currency) && h.dates.length > 1) };
}
