import { amountText, type StoredReconciliationResult } from './reconciliation-result.js';
import type { Report } from './report-data.js';
import { caseCells } from './render-table.js';

/** The CSV columns, in the order of the reconciliation_results table, then the result's case (id, state now, age in days). */
export const CSV_COLUMNS = [
  'account',
  'business_date',
  'currency',
  'gateway_balance',
  'single_balance',
  'expected_balance',
  'previous_balance',
  'movement',
  'difference',
  'status',
  'run_id',
  'computed_at',
  'case_id',
  'case_state',
  'case_age_days',
] as const;

/** Quotes one field per RFC 4180: only when it holds a comma, a quote, CR or LF; quotes are doubled. */
export function quoteCsvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** One header line and one line per result; CRLF line ends as RFC 4180 and spreadsheets expect. */
export function renderCsv(report: Report<StoredReconciliationResult>): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of report.results) {
    const fields = [
      r.account,
      r.businessDate,
      r.currency ?? '',
      amountText(r.gatewayBalance) ?? '',
      amountText(r.singleBalance) ?? '',
      amountText(r.expectedBalance) ?? '',
      amountText(r.previousBalance) ?? '',
      amountText(r.movement) ?? '',
      amountText(r.difference) ?? '',
      r.status,
      r.runId === null ? '' : String(r.runId),
      r.computedAt.toISOString(),
      ...caseCells(r),
    ];
    lines.push(fields.map(quoteCsvField).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
