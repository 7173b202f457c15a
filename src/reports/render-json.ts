import type { ToleranceSettings } from '../config/index.js';
import { describeTolerance } from './report-facts.js';
import { currencyDecimals, formatAmount } from '../money/format-amount.js';
import { resultColumns, type StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import type { Report } from './report-data.js';

const AMOUNTS = ['gateway_balance', 'single_balance', 'expected_balance', 'previous_balance', 'movement', 'difference'] as const;

/**
 * `{"summary": {...}, "results": [...]}` with amounts as strings of digits in minor units, so no
 * reader rounds them; each result names its case (id, state now, age in days), null when it
 * matched; beside the amounts `currency_decimals` (ISO 4217; null: a currency it does not
 * know, left in minor units) and `formatted`, each amount as people read it ("2,674,944,142,140,371.99").
 */
export function renderJson(report: Report<StoredReconciliationResult>, options: { tolerance?: ToleranceSettings } = {}): string {
  const results = report.results.map((r) => {
    const columns = resultColumns(r);
    const formatted = Object.fromEntries(AMOUNTS.map((name) => [name, columns[name] === null ? null : formatAmount(BigInt(columns[name]), r.currency, r.scale)]));
    return {
      ...columns,
      computed_at: r.computedAt.toISOString(),
      case_id: r.case?.id ?? null,
      case_state: r.case?.state ?? null,
      case_age_days: r.case?.ageDays ?? null,
      currency_decimals: r.scale ?? currencyDecimals(r.currency),
      formatted,
    };
  });
  const tolerance =
    options.tolerance === undefined
      ? {}
      : { tolerance: { default: options.tolerance.default, by_currency: options.tolerance.byCurrency, bps: options.tolerance.bps, unit: 'major', description: describeTolerance(options.tolerance) } };
  return `${JSON.stringify({ summary: report.summary, ...tolerance, results }, null, 2)}\n`;
}
