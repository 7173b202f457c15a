import { amountText, type StoredReconciliationResult } from './reconciliation-result.js';
import type { Report } from './report-data.js';

/** `{"summary": {...}, "results": [...]}` with amounts as strings of digits, so no reader rounds them. */
export function renderJson(report: Report<StoredReconciliationResult>): string {
  const results = report.results.map((r) => ({
    account: r.account,
    business_date: r.businessDate,
    currency: r.currency,
    gateway_balance: amountText(r.gatewayBalance),
    single_balance: amountText(r.singleBalance),
    expected_balance: amountText(r.expectedBalance),
    previous_balance: amountText(r.previousBalance),
    movement: amountText(r.movement),
    difference: amountText(r.difference),
    status: r.status,
    run_id: r.runId,
    computed_at: r.computedAt.toISOString(),
  }));
  return `${JSON.stringify({ summary: report.summary, results }, null, 2)}\n`;
}
