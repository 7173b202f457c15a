import type { ToleranceSettings } from '../config/index.js';
import { describeTolerance } from './report-facts.js';
import { AGE_BUCKETS } from '../cases/case-model.js';
import { formatTable } from '../text-table.js';
import { describeDates } from '../reconciliation/business-dates.js';
import { formatOptionalAmount } from '../money/format-amount.js';
import type { NumberStyle } from '../money/number-style.js';
import { countUnmatched, type ReconciliationResult, type StatusCounts } from '../reconciliation/reconciliation-result.js';
import type { Report, ReportSummary } from './report-data.js';
import { compareByAbsoluteDifference } from './report-view.js';

/** The case columns every report format adds per result: id, state and age in days (empty without a case). */
export function caseCells(r: Pick<ReconciliationResult, 'case'>): [string, string, string] {
  const c = r.case;
  return c === undefined || c === null ? ['', '', ''] : [String(c.id), c.state, String(c.ageDays)];
}

/**
 * The case lines of a summary, none when no result names a case: active cases by age and the
 * accepted ones, e.g. `active cases by age: under 2 days 1, 2-7 days 0, 8-30 days 0, over 30 days 0`.
 */
export function describeCases(summary: ReportSummary): string[] {
  const { activeByAge, accepted } = summary.cases;
  const active = AGE_BUCKETS.reduce((sum, b) => sum + activeByAge[b], 0);
  if (active === 0 && accepted.length === 0) return [];
  const lines = [`active cases by age: ${AGE_BUCKETS.map((b) => `${b} ${activeByAge[b]}`).join(', ')}`];
  for (const a of accepted) {
    lines.push(`accepted (not counted as a break): case ${a.caseId} ${a.account}${a.currency === null ? '' : ` ${a.currency}`} ${a.kind ?? ''}${a.acceptedUntil === null ? ', no end date' : ` until ${a.acceptedUntil}`}`);
  }
  return lines;
}

/** Summary columns shared by the table and HTML reports. */
export const SUMMARY_COLUMNS: ReadonlyArray<{ header: string; count: (c: StatusCounts) => number }> = [
  { header: 'matched', count: (c) => c.matched },
  { header: 'breaks', count: (c) => c.break },
  { header: 'missing', count: (c) => c.missing_in_ledger + c.missing_in_gateway },
  { header: 'endpoint mismatches', count: (c) => c.endpoint_mismatch },
  { header: 'disappeared', count: (c) => c.disappeared },
  { header: 'no snapshot', count: (c) => c.no_snapshot },
  { header: 'no books', count: (c) => c.no_books },
  { header: 'awaiting books', count: (c) => c.awaiting_books },
  { header: 'unknown decimals', count: (c) => c.unknown_decimals },
  // Differences open reconciling items explain: counted apart, neither matched nor a break.
  { header: 'explained', count: (c) => c.explained },
];

/** Summary columns of the bank leg, shown when a report covers a bank account. */
export const BANK_SUMMARY_COLUMNS: ReadonlyArray<{ header: string; count: (c: StatusCounts) => number }> = [
  { header: 'statement proof failed', count: (c) => c.roll_forward_break + c.sequence_gap + c.conflicting_statements },
  { header: 'no statement', count: (c) => c.no_statement },
  { header: 'awaiting statement', count: (c) => c.awaiting_statement },
];

/** Whether a report covers a bank account: its tables then say each account's source. */
export function coversBank(summary: Pick<ReportSummary, 'accounts'>): boolean {
  return summary.accounts.some((a) => a.source === 'bank');
}

/**
 * The heading of a balance column over rows of these sources: a bank account's balance is the
 * bank's (from its statement), never the gateway's; a column over both says both.
 */
export function balanceHeaderOf(sources: Iterable<string | null | undefined>): 'gateway' | 'bank' | 'gateway / bank' {
  let gateway = false;
  let bank = false;
  for (const s of sources) {
    if (s === 'bank') bank = true;
    else gateway = true;
  }
  return bank ? (gateway ? 'gateway / bank' : 'bank') : 'gateway';
}

/** The summary columns of a report: the bank leg's too when it covers a bank account. */
export function summaryColumnsOf(summary: Pick<ReportSummary, 'accounts'>): ReadonlyArray<{ header: string; count: (c: StatusCounts) => number }> {
  return coversBank(summary) ? [...SUMMARY_COLUMNS, ...BANK_SUMMARY_COLUMNS] : SUMMARY_COLUMNS;
}

/**
 * One line per account with dates that have no stored result (`not reconciled: eu-main 2026-11-14
 * to 2026-11-15`), whose results are owed (an input changed since), or whose books are awaited.
 */
export function describeUnreconciled(summary: ReportSummary): string[] {
  return [
    ...summary.accounts.filter((a) => a.unreconciledDates.length > 0).map((a) => `not reconciled: ${a.account} ${describeDates(a.unreconciledDates)}`),
    ...summary.accounts
      .filter((a) => (a.owedDates ?? []).length > 0)
      .map((a) => `results owed (an input changed since they were computed; the worker or the next command recomputes them): ${a.account} ${describeDates(a.owedDates)}`),
    ...summary.accounts
      .filter((a) => (a.awaitingBooksDates ?? []).length > 0)
      .map((a) => `books not imported yet: ${a.account} ${describeDates(a.awaitingBooksDates)}`),
    ...summary.accounts
      .filter((a) => (a.awaitingStatementDates ?? []).length > 0)
      .map((a) => `bank statement not imported yet: ${a.account} ${describeDates(a.awaitingStatementDates)}`),
  ];
}

/** The plain-text report: a summary per account, the dates never reconciled, then every result that did not match (largest absolute difference first), amounts in each currency's major units. */
export function renderTable(report: Report<ReconciliationResult>, options: { tolerance?: ToleranceSettings; style?: NumberStyle } = {}): string {
  const { summary, results } = report;
  const period = summary.from === summary.to ? summary.from : `${summary.from} to ${summary.to}`;
  const toleranceLine = options.tolerance === undefined ? '' : `\nTolerance: ${describeTolerance(options.tolerance, [...new Set(results.flatMap((r) => (r.currency === null ? [] : [r.currency])))])}`;
  const title = `Reconciliation ${period}${summary.account === null ? '' : ` for account ${summary.account}`}${results.length === 0 ? '' : toleranceLine}`;
  if (results.length === 0) {
    // Advice the tool will follow: only a date that can be reconciled now (its cut-off passed).
    const first = summary.unreconciledDates[0];
    return first === undefined
      ? `${title}: no results stored, and no date of it can be reconciled now (its cut-off is still ahead, or it is before the accounts' first capture).`
      : `${title}: no results stored. Run "wallet-recon reconcile --date ${first}" (or "wallet-recon backfill") first.`;
  }
  const bank = coversBank(summary);
  const columns = summaryColumnsOf(summary);
  const table = formatTable(
    ['account', ...(bank ? ['source'] : []), ...columns.map((c) => c.header)],
    summary.accounts.map((a) => [a.account, ...(bank ? [a.source] : []), ...columns.map((c) => String(c.count(a.counts)))]),
  );
  const unreconciled = describeUnreconciled(summary);
  const caseLines = describeCases(summary);
  const withCases = caseLines.length === 0 ? `${title}\n\n${table}` : `${title}\n\n${table}\n\n${caseLines.join('\n')}`;
  // Reconciling is the advice for dates never reconciled only: owed ones are recomputed by the
  // worker or the next command, awaited books are imported, and a date whose cut-off is ahead
  // is never listed (reconcile would refuse it).
  const advice = summary.unreconciledDates.length === 0 ? '' : `\nRun "wallet-recon reconcile --date D" (or "wallet-recon backfill") for the dates not reconciled.`;
  const head = unreconciled.length === 0 ? withCases : `${withCases}\n\n${unreconciled.join('\n')}${advice}`;
  const unmatched = results.filter((r) => r.status !== 'matched').sort(compareByAbsoluteDifference);
  const waterfall = results.some((r) => r.itemsTotal !== undefined && r.itemsTotal !== null && r.itemsTotal !== 0n);
  if (unmatched.length === 0) return `${head}\n\n${unreconciled.length === 0 ? 'Every result matched.' : 'Every stored result matched, but not every date was reconciled.'}`;
  const details = formatTable(
    ['business date', 'account', ...(bank ? ['source'] : []), 'currency', 'status', balanceHeaderOf(unmatched.map((r) => r.source)), 'single wallet', 'books', 'difference', 'movement', 'run', 'case', 'case state', 'age (days)', ...(waterfall ? ['open items', 'unexplained'] : [])],
    unmatched.map((r) => [
      r.businessDate,
      r.account,
      ...(bank ? [r.source ?? 'gateway'] : []),
      r.currency ?? '',
      r.status,
      formatOptionalAmount(r.gatewayBalance, r.currency, r.scale, options.style),
      formatOptionalAmount(r.singleBalance, r.currency, r.scale, options.style),
      formatOptionalAmount(r.expectedBalance, r.currency, r.scale, options.style),
      formatOptionalAmount(r.difference, r.currency, r.scale, options.style),
      formatOptionalAmount(r.movement, r.currency, r.scale, options.style),
      r.runId === null ? '' : String(r.runId),
      ...caseCells(r),
      ...(waterfall ? [formatOptionalAmount(r.itemsTotal ?? null, r.currency, r.scale, options.style), formatOptionalAmount(r.unexplained ?? null, r.currency, r.scale, options.style)] : []),
    ]),
  );
  const acceptedNote = summary.accepted === 0 ? '' : `, ${summary.accepted} accepted`;
  const needing = countUnmatched(summary.total);
  return `${head}\n\n${needing === 1 ? '1 result needs' : `${needing} results need`} attention${acceptedNote}:\n\n${details}`;
}
