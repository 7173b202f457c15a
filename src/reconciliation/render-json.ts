import type { StoredReconciliationResult } from './reconciliation-result.js';
import type { Report } from './report-data.js';

const amount = (v: bigint | null): string | null => (v === null ? null : v.toString());

/** `{"summary": {...}, "results": [...]}` with amounts as strings of digits, so no reader rounds them. */
export function renderJson(report: Report<StoredReconciliationResult>): string {
  const results = report.results.map((r) => ({
    account: r.account,
    business_date: r.businessDate,
    currency: r.currency,
    gateway_balance: amount(r.gatewayBalance),
    single_balance: amount(r.singleBalance),
    expected_balance: amount(r.expectedBalance),
    previous_balance: amount(r.previousBalance),
    movement: amount(r.movement),
    difference: amount(r.difference),
    status: r.status,
    run_id: r.runId,
    computed_at: r.computedAt.toISOString(),
  }));
  return `${JSON.stringify({ summary: report.summary, results }, null, 2)}\n`;
}
