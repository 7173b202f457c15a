import type { Kysely } from 'kysely';
import type { Database } from '../db/database.types.js';
import { countByStatus, type StatusCounts, type StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import type { RangeTallies } from './render-html.js';
import { loadSummaryOptions, streamReportResults, SummaryTally, type Report, type ReportRange, type SummaryOptions } from './report-data.js';
import { CurrencyTallies } from './report-view.js';

/**
 * A range's report for the HTML page, in one pass over a cursor: the summary, the per-currency
 * totals and the per-date counts are tallied as the results go by, and only the results the
 * page lists are kept (every one that did not match; the matched ones only with `keepMatched`).
 * A year of results is read once and never held.
 */
export async function loadRangeReport(
  db: Kysely<Database>,
  range: ReportRange,
  options: SummaryOptions & { today: string; keepMatched: boolean; signal?: AbortSignal },
): Promise<{ report: Report; tallies: RangeTallies }> {
  const summary = new SummaryTally();
  const currencies = new CurrencyTallies();
  const perDate = new Map<string, StatusCounts>();
  const kept: StoredReconciliationResult[] = [];
  for await (const batch of streamReportResults(db, range, options.today, undefined, options.signal)) {
    for (const r of batch) {
      summary.add(r);
      currencies.add(r);
      let counts = perDate.get(r.businessDate);
      if (counts === undefined) {
        counts = countByStatus([]);
        perDate.set(r.businessDate, counts);
      }
      counts[r.status]++;
      if (options.keepMatched || r.status !== 'matched') kept.push(r);
    }
  }
  const { keepMatched: _keep, signal: _signal, ...summaryOptions } = options;
  return {
    report: { summary: summary.summary(range, await loadSummaryOptions(db, range, summaryOptions)), results: kept },
    tallies: {
      currencies: currencies.result(),
      perDate: [...perDate.entries()].map(([date, counts]) => ({ date, counts })),
      resultCount: summary.count,
      reconciledAccountDates: summary.reconciledAccountDates,
    },
  };
}
