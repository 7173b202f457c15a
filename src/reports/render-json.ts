import type { ToleranceSettings } from '../config/index.js';
import { describeTolerance } from './report-facts.js';
import { currencyDecimals, formatAmount } from '../money/format-amount.js';
import { resultColumns, type StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import type { Report, ReportSummary } from './report-data.js';

/** The amount columns a result's `formatted` repeats for people, in column order. */
type AmountColumn = 'gateway_balance' | 'single_balance' | 'expected_balance' | 'previous_balance' | 'movement' | 'difference' | 'items_total' | 'unexplained';

/** One result as the JSON report lists it. */
export function jsonResult(r: StoredReconciliationResult) {
  const columns = resultColumns(r);
  // From the amounts themselves: the columns hold them as text, and a year's report parsed each back.
  const format = (v: bigint | null) => (v === null ? null : formatAmount(v, r.currency, r.scale));
  const formatted: Record<AmountColumn, string | null> = {
    gateway_balance: format(r.gatewayBalance),
    single_balance: format(r.singleBalance),
    expected_balance: format(r.expectedBalance),
    previous_balance: format(r.previousBalance),
    movement: format(r.movement),
    difference: format(r.difference),
    items_total: format(r.itemsTotal ?? null),
    unexplained: format(r.unexplained ?? null),
  };
  return {
    ...columns,
    computed_at: r.computedAt.toISOString(),
    case_id: r.case?.id ?? null,
    case_state: r.case?.state ?? null,
    case_age_days: r.case?.ageDays ?? null,
    currency_decimals: r.scale ?? currencyDecimals(r.currency),
    formatted,
  };
}

function toleranceOf(tolerance: ToleranceSettings | undefined) {
  return tolerance === undefined
    ? {}
    : { tolerance: { default: tolerance.default, by_currency: tolerance.byCurrency, bps: tolerance.bps, unit: 'major', description: describeTolerance(tolerance) } };
}

/**
 * `{"summary": {...}, "results": [...]}` with amounts as strings of digits in minor units, so no
 * reader rounds them; each result names its case (id, state now, age in days), null when it
 * matched; beside the amounts `currency_decimals` (ISO 4217; null: a currency it does not
 * know, left in minor units) and `formatted`, each amount as people read it ("2,674,944,142,140,371.99").
 */
export function renderJson(report: Report<StoredReconciliationResult>, options: { tolerance?: ToleranceSettings } = {}): string {
  return `${JSON.stringify({ summary: report.summary, ...toleranceOf(options.tolerance), results: report.results.map(jsonResult) }, null, 2)}\n`;
}

/**
 * The text of renderJson written as it is read: the summary first, then the results batch by
 * batch (each indented as JSON.stringify would), so a range of years takes the memory of a batch.
 */
export async function* streamJson(summary: ReportSummary, batches: AsyncIterable<readonly StoredReconciliationResult[]>, options: { tolerance?: ToleranceSettings } = {}): AsyncGenerator<string> {
  const head = JSON.stringify({ summary, ...toleranceOf(options.tolerance), results: [] }, null, 2);
  // The head ends in `"results": []\n}`: the results go between the brackets.
  const open = head.slice(0, head.lastIndexOf('[]') + 1);
  let written = 0;
  for await (const batch of batches) {
    let text = written === 0 && batch.length > 0 ? open : '';
    for (const r of batch) {
      text += `${written++ === 0 ? '' : ','}\n    ${indentedJson(jsonResult(r), '    ')}`;
      // Written every few results: a batch's whole text held while it grows outlives the young
      // generation and is copied to the old one, which a long report then fills with garbage.
      if (written % CHUNK_RESULTS === 0) {
        yield text;
        text = '';
      }
    }
    if (text !== '') yield text;
  }
  yield written === 0 ? `${open}]\n}\n` : '\n  ]\n}\n';
}

const CHUNK_RESULTS = 50;

/**
 * `JSON.stringify(value, null, 2)` with every line after the first indented by `indent`, written
 * directly (a result is flat but for `formatted`): the text of a year's results is made once,
 * not made and then copied again to indent it.
 */
export function indentedJson(value: object, indent: string): string {
  const inner = `${indent}  `;
  let text = '';
  for (const [key, v] of Object.entries(value)) {
    const item =
      v === null || typeof v !== 'object' || typeof (v as { toJSON?: unknown }).toJSON === 'function'
        ? (JSON.stringify(v) as string | undefined)
        : Array.isArray(v)
          ? JSON.stringify(v, null, 2).replaceAll('\n', `\n${inner}`)
          : indentedJson(v, inner);
    if (item === undefined) continue;
    text += `${text === '' ? '' : ','}\n${inner}${JSON.stringify(key)}: ${item}`;
  }
  return text === '' ? '{}' : `{${text}\n${indent}}`;
}
