import { resultColumns, type StoredReconciliationResult } from './reconciliation-result.js';
import type { Report } from './report-data.js';

/** `{"summary": {...}, "results": [...]}` with amounts as strings of digits, so no reader rounds them. */
export function renderJson(report: Report<StoredReconciliationResult>): string {
  const results = report.results.map((r) => ({ ...resultColumns(r), computed_at: r.computedAt.toISOString() }));
  return `${JSON.stringify({ summary: report.summary, results }, null, 2)}\n`;
}
