import { resultColumns, type StoredReconciliationResult } from './reconciliation-result.js';
import type { Report } from './report-data.js';

/**
 * `{"summary": {...}, "results": [...]}` with amounts as strings of digits, so no reader rounds
 * them; each result names its case (id, state now, age in days), null when it matched.
 */
export function renderJson(report: Report<StoredReconciliationResult>): string {
  const results = report.results.map((r) => ({
    ...resultColumns(r),
    computed_at: r.computedAt.toISOString(),
    case_id: r.case?.id ?? null,
    case_state: r.case?.state ?? null,
    case_age_days: r.case?.ageDays ?? null,
  }));
  return `${JSON.stringify({ summary: report.summary, results }, null, 2)}\n`;
}
