import { currencyDecimals, formatAmount, formatAmountCell } from '../money/format-amount.js';
import { DEFAULT_NUMBER_STYLE, type NumberStyle } from '../money/number-style.js';
import { amountText, type StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import type { Report } from './report-data.js';
import { caseCells } from './render-table.js';

/** The amounts of a result, in column order: each is exact minor units, then again formatted. */
const AMOUNT_COLUMNS = ['gateway_balance', 'single_balance', 'expected_balance', 'previous_balance', 'movement', 'difference'] as const;

/**
 * The CSV columns: those of the reconciliation_results table (amounts as exact minor-unit
 * integers, for machines), then the currency's decimals and each amount formatted for people
 * in major units ("2,674,944,142,140,371.99"; an unknown currency: minor units, decimals empty),
 * then the result's case (id, state now, age in days), its source, and last the waterfall: the
 * reconciling items open on the date and what they leave unexplained (minor units, then formatted).
 */
export const CSV_COLUMNS = [
  'account',
  'business_date',
  'currency',
  ...AMOUNT_COLUMNS,
  'status',
  'run_id',
  'computed_at',
  'currency_decimals',
  ...AMOUNT_COLUMNS.map((c) => `${c}_formatted` as const),
  'case_id',
  'case_state',
  'case_age_days',
  'source',
  'items_total',
  'unexplained',
  'items_total_formatted',
  'unexplained_formatted',
] as const;

/** The status of a date of the range on which an account has no stored result at all. */
export const NOT_RECONCILED = 'not_reconciled';

/** A number as amounts are written (-100, 12.5, -1,234.56): never a formula, so never prefixed. */
const NUMBER = /^[+-]?\d[\d,]*(\.\d+)?( minor units)?$/;

/**
 * Makes a cell inert for spreadsheets (CSV injection): text starting with `=`, `+`, `-` or `@`
 * (and tab or CR, which some spreadsheets skip before reading a formula) that is not a number
 * gets a leading `'`. Account names come from configuration files and books may carry anything.
 */
export function neutralizeFormula(value: string): string {
  return /^[=+\-@\t\r]/.test(value) && !NUMBER.test(value) ? `'${value}` : value;
}

export function resultCells(r: StoredReconciliationResult, style: NumberStyle = DEFAULT_NUMBER_STYLE): string[] {
  const amounts = [r.gatewayBalance, r.singleBalance, r.expectedBalance, r.previousBalance, r.movement, r.difference];
  const decimals = r.scale ?? currencyDecimals(r.currency);
  return [
    r.account,
    r.businessDate,
    r.currency ?? '',
    ...amounts.map((v) => amountText(v) ?? ''),
    r.status,
    r.runId === null ? '' : String(r.runId),
    r.computedAt.toISOString(),
    decimals === null ? '' : String(decimals),
    // With RECON_LOCALE, the locale's spreadsheet reads these cells as numbers: its decimal mark, no grouping.
    ...amounts.map((v) => (v === null ? '' : style.locale === undefined ? formatAmount(v, r.currency, r.scale) : formatAmountCell(v, r.currency, r.scale, style))),
    ...caseCells(r),
    r.source ?? 'gateway',
    ...[r.itemsTotal ?? null, r.unexplained ?? null].map((v) => amountText(v) ?? ''),
    ...[r.itemsTotal ?? null, r.unexplained ?? null].map((v) => (v === null ? '' : style.locale === undefined ? formatAmount(v, r.currency, r.scale) : formatAmountCell(v, r.currency, r.scale, style))),
  ];
}

/**
 * One CSV record and its CRLF (RFC 4180): a field holding the delimiter (`,`, or `;` for a locale
 * whose decimal mark is a comma), a quote or a line break is quoted, its quotes doubled (as
 * csv-stringify writes them). Written by hand: a year's report is millions of fields, and the
 * library's per-field options cost a third of the time and its garbage.
 */
export function csvRecord(cells: readonly string[], delimiter: ',' | ';' = ','): string {
  const special = delimiter === ',' ? /[",\r\n]/ : /[";\r\n]/;
  let line = '';
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]!;
    if (i > 0) line += delimiter;
    line += special.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
  }
  return `${line}\r\n`;
}

/** The line of an account-date of the range that has no stored result at all. */
export function notReconciledCells(account: string, date: string, source: 'gateway' | 'bank' = 'gateway'): string[] {
  const cells = CSV_COLUMNS.map(() => '');
  cells[0] = account;
  cells[1] = date;
  cells[CSV_COLUMNS.indexOf('status')] = NOT_RECONCILED;
  cells[CSV_COLUMNS.indexOf('source')] = source;
  return cells;
}

/**
 * One header line and one line per result, plus one `not_reconciled` line per account and date
 * of the range that has no result at all (as the other formats list them), ordered by date and
 * account; CRLF line ends as RFC 4180 and spreadsheets expect. `style` (RECON_LOCALE) sets the
 * field separator (";" where the decimal mark is a comma) and the formatted columns' decimal mark.
 */
export function renderCsv(report: Report<StoredReconciliationResult>, style: NumberStyle = DEFAULT_NUMBER_STYLE): string {
  const lines = report.results.map((r) => ({ key: `${r.businessDate}\u0000${r.account}`, cells: resultCells(r, style) }));
  for (const account of report.summary.accounts) {
    for (const date of account.unreconciledDates) lines.push({ key: `${date}\u0000${account.account}`, cells: notReconciledCells(account.account, date, account.source ?? 'gateway') });
  }
  // Stable: results keep their order within a date and account.
  const rows = lines.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((l) => l.cells.map(neutralizeFormula));
  // Fields holding a line break are quoted too, so each result stays one record when read back.
  return [[...CSV_COLUMNS], ...rows].map((cells) => csvRecord(cells, style.csvDelimiter)).join('');
}
