import { formatTable } from '../cli/output.js';
import { countUnmatched, type ReconciliationResult, type StatusCounts } from './reconciliation-result.js';
import type { Report } from './report-data.js';

const amount = (v: bigint | null): string => (v === null ? '' : v.toString());

/** Summary columns shared by the table and HTML reports. */
export const SUMMARY_COLUMNS: ReadonlyArray<{ header: string; count: (c: StatusCounts) => number }> = [
  { header: 'matched', count: (c) => c.matched },
  { header: 'breaks', count: (c) => c.break },
  { header: 'missing', count: (c) => c.missing_in_ledger + c.missing_in_gateway },
  { header: 'endpoint mismatches', count: (c) => c.endpoint_mismatch },
  { header: 'disappeared', count: (c) => c.disappeared },
  { header: 'no snapshot', count: (c) => c.no_snapshot },
];

/** The plain-text report: a summary per account, then every result that did not match. */
export function renderTable(report: Report<ReconciliationResult>): string {
  const { summary, results } = report;
  const period = summary.from === summary.to ? summary.from : `${summary.from} to ${summary.to}`;
  const title = `Reconciliation ${period}${summary.account === null ? '' : ` for account ${summary.account}`}`;
  if (results.length === 0) {
    return `${title}: no results stored. Run "wallet-recon reconcile --date ${summary.from}" (or "wallet-recon backfill") first.`;
  }
  const table = formatTable(
    ['account', ...SUMMARY_COLUMNS.map((c) => c.header)],
    summary.accounts.map((a) => [a.account, ...SUMMARY_COLUMNS.map((c) => String(c.count(a.counts)))]),
  );
  const unmatched = results.filter((r) => r.status !== 'matched');
  if (unmatched.length === 0) return `${title}\n\n${table}\n\nEvery result matched.`;
  const details = formatTable(
    ['business date', 'account', 'currency', 'status', 'gateway', 'single wallet', 'books', 'difference', 'movement', 'run'],
    unmatched.map((r) => [
      r.businessDate,
      r.account,
      r.currency ?? '',
      r.status,
      amount(r.gatewayBalance),
      amount(r.singleBalance),
      amount(r.expectedBalance),
      amount(r.difference),
      amount(r.movement),
      r.runId === null ? '' : String(r.runId),
    ]),
  );
  return `${title}\n\n${table}\n\n${countUnmatched(summary.total)} result(s) need attention:\n\n${details}`;
}
