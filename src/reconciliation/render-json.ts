import { currencyDecimals, formatAmount } from '../money/format-amount.js';
import { resultColumns, type StoredReconciliationResult } from './reconciliation-result.js';
import type { Report } from './report-data.js';

const AMOUNTS = ['gateway_balance', 'single_balance', 'expected_balance', 'previous_balance', 'movement', 'difference'] as const;

/**
 * `{"summary": {...}, "results": [...]}` with amounts as strings of digits in minor units, so no
 * reader rounds them; each result names its case (id, state now, age in days), null when it
 * matched; beside the amounts `currency_decimals` (null: a currency Intl does not know, left
 * in minor units) and `formatted`, each amount as people read it ("2,674,944,142,140,371.99").
 */
export function renderJson(report: Report<StoredReconciliationResult>): string {
  const results = report.results.map((r) => {
    const columns = resultColumns(r);
    const formatted = Object.fromEntries(AMOUNTS.map((name) => [name, columns[name] === null ? null : formatAmount(BigInt(columns[name]), r.currency)]));
    return {
      ...columns,
      computed_at: r.computedAt.toISOString(),
      case_id: r.case?.id ?? null,
      case_state: r.case?.state ?? null,
      case_age_days: r.case?.ageDays ?? null,
      currency_decimals: currencyDecimals(r.currency),
      formatted,
    };
  });
  return `${JSON.stringify({ summary: report.summary, results }, null, 2)}\n`;
}
