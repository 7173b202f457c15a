import { stringify } from 'csv-stringify/sync';
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

/** A number as amounts are written (-100, 12.5): never a formula, so never prefixed. */
const NUMBER = /^[+-]?\d+(\.\d+)?$/;

/**
 * Makes a cell inert for spreadsheets (CSV injection): text starting with `=`, `+`, `-` or `@`
 * (and tab or CR, which some spreadsheets skip before reading a formula) that is not a number
 * gets a leading `'`. Account names come from configuration files and books may carry anything.
 */
export function neutralizeFormula(value: string): string {
  return /^[=+\-@\t\r]/.test(value) && !NUMBER.test(value) ? `'${value}` : value;
}

/** One header line and one line per result; CRLF line ends as RFC 4180 and spreadsheets expect. */
export function renderCsv(report: Report<StoredReconciliationResult>): string {
  const rows = report.results.map((r) =>
    [
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
    ].map(neutralizeFormula),
  );
  // Fields holding a line break are quoted too, so each result stays one record when read back.
  return stringify([[...CSV_COLUMNS], ...rows], { record_delimiter: 'windows', quote_record_delimiter: true });
}
