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
  /** Matched results, by date and account (none when a summarised range did not keep them). */
  matched: R[];
  /** How many results matched (kept or not). */
  matchedCount: number;
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

/** Per status of a set of results: how many, and the sum of their differences; one pass. */
export function totalsOf(results: readonly ReconciliationResult[]): StatusTotal[] {
  const byStatus = new Map<ReconciliationStatus, { count: number; difference: bigint | null }>();
  for (const r of results) {
    const total = byStatus.get(r.status);
    if (total === undefined) byStatus.set(r.status, { count: 1, difference: r.difference });
    else {
      total.count++;
      if (r.difference !== null) total.difference = (total.difference ?? 0n) + r.difference;
    }
  }
  return RECONCILIATION_STATUSES.flatMap((status) => {
    const t = byStatus.get(status);
    return t === undefined ? [] : [{ status, count: t.count, difference: t.difference }];
  });
}

/**
 * What a streamed range report counted while it read the results it did not keep (the matched
 * ones of a summarised range): per currency its totals, its matched count and whether it moved.
 */
export interface CurrencyTally {
  totals: StatusTotal[];
  matchedCount: number;
  moved: boolean;
}

/** Tallies results one at a time per currency (totals, matched count, movement) without keeping them. */
export class CurrencyTallies {
  private readonly byCurrency = new Map<string, { counts: Map<ReconciliationStatus, { count: number; difference: bigint | null }>; moved: boolean }>();

  add(r: ReconciliationResult): void {
    if (r.currency === null) return;
    let own = this.byCurrency.get(r.currency);
    if (own === undefined) {
      own = { counts: new Map(), moved: false };
      this.byCurrency.set(r.currency, own);
    }
    const total = own.counts.get(r.status);
    if (total === undefined) own.counts.set(r.status, { count: 1, difference: r.difference });
    else {
      total.count++;
      if (r.difference !== null) total.difference = (total.difference ?? 0n) + r.difference;
    }
    if (r.status !== 'matched' || (r.movement !== null && r.movement !== 0n)) own.moved = true;
  }

  /** Per currency, totals in the order of totalsOf. */
  result(): Map<string, CurrencyTally> {
    const out = new Map<string, CurrencyTally>();
    for (const [currency, own] of this.byCurrency) {
      const totals = RECONCILIATION_STATUSES.flatMap((status) => {
        const t = own.counts.get(status);
        return t === undefined ? [] : [{ status, count: t.count, difference: t.difference }];
      });
      out.set(currency, { totals, matchedCount: own.counts.get('matched')?.count ?? 0, moved: own.moved });
    }
    return out;
  }
}

/**
 * Builds the view every human-facing report renders: exceptions first, sections per currency,
 * charts that tell something. With `tallies` (a streamed range), the sections' totals, matched
 * counts and movement come from them, and the report's results are the ones it kept.
 */
export function buildReportView<R extends ReconciliationResult>(report: Report<R>, histories: readonly CurrencyHistory[], tallies?: ReadonlyMap<string, CurrencyTally>): ReportView<R> {
  const breaks = report.results.filter((r) => r.status !== 'matched' && r.status !== 'explained' && !WAITING_STATUSES.includes(r.status)).sort(compareByAbsoluteDifference);
  const currencies = [...new Set([...report.results.flatMap((r) => (r.currency === null ? [] : [r.currency])), ...(tallies?.keys() ?? [])])].sort();
  // Grouped once by currency: a filter per currency over all results multiplied the two.
  const byCurrency = new Map<string, R[]>();
  for (const r of report.results) {
    if (r.currency === null) continue;
    const own = byCurrency.get(r.currency);
    if (own === undefined) byCurrency.set(r.currency, [r]);
    else own.push(r);
  }
  const sections = currencies.map((currency) => {
    const own = byCurrency.get(currency) ?? [];
    const matched = own.filter((r) => r.status === 'matched');
    const tally = tallies?.get(currency);
    const matchedCount = tally?.matchedCount ?? matched.length;
    return {
      currency,
      // In date order, as the matched rows: a range's table reads down the dates.
      exceptions: own.filter((r) => r.status !== 'matched').sort(compareByDate),
      matched,
      matchedCount,
      collapseMatched: matchedCount > MATCHED_ROWS_SHOWN,
      totals: tally?.totals ?? totalsOf(own),
      moved: tally?.moved ?? own.some((r) => r.status !== 'matched' || (r.movement !== null && r.movement !== 0n)),
    };
  });
  const chartable = new Set(sections.filter((s) => s.moved).map((s) => s.currency));
  // A chart of one date is one point: it shows nothing the table does not (a one-day report).
  return { breaks, sections, charts: histories.filter((h) => chartable.has(h.currency) && h.dates.length > 1) };
}
