import type { ResultCase } from '../db/case-records.js';
import type { ReconciliationStatus } from '../db/database.types.js';
import { amountText } from '../db/exact-amount.js';
import { RECONCILIATION_STATUSES, WAITING_STATUSES, type ResultRecord, type StoredResultRecord } from '../db/result-records.js';
import { currencyDecimals } from '../money/format-amount.js';

export type { ReconciliationStatus } from '../db/database.types.js';
// Defined in the database layer so cases and metrics, below reconciliation, can use them too.
export { amountText } from '../db/exact-amount.js';
export { RECONCILIATION_STATUSES, WAITING_STATUSES } from '../db/result-records.js';

/**
 * Glossary. A *snapshot* is the authoritative run of an account for a business date (its end-of-day
 * run nearest the cut-off, else its latest intraday run: see the authoritative_runs view); the
 * *books* are the merchant's expected balances; a *result* is the verdict for one account,
 * business date and currency (or one `no_snapshot` row per account and date, currency null).
 */
/** One reconciliation verdict (see ResultRecord), with the case following it once cases are tracked. */
export interface ReconciliationResult extends ResultRecord {
  /** The case following this discrepancy (null for a matched result; absent before cases are tracked). */
  case?: ResultCase | null;
}

/** A result as stored, with the time it was computed. */
export interface StoredReconciliationResult extends StoredResultRecord {
  case?: ResultCase | null;
}

export type StatusCounts = Record<ReconciliationStatus, number>;

/**
 * A result in the column names and forms of `reconciliation_results` (amounts as digit
 * strings): the row written to the database and the record the JSON report publishes.
 */
export function resultColumns(r: ReconciliationResult) {
  return {
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
    books_import_id: r.booksImportId ?? null,
    note: r.note ?? null,
    scale: r.scale ?? (r.currency === null ? null : currencyDecimals(r.currency)),
    source: r.source ?? 'gateway',
    bank_statement_id: r.bankStatementId ?? null,
    items_total: amountText(r.itemsTotal ?? null),
    unexplained: amountText(r.unexplained ?? null),
  };
}

/** Counts of results per status, every status present (zero when absent). */
export function countByStatus(results: readonly Pick<ReconciliationResult, 'status'>[]): StatusCounts {
  const counts = Object.fromEntries(RECONCILIATION_STATUSES.map((s) => [s, 0])) as StatusCounts;
  for (const r of results) counts[r.status]++;
  return counts;
}

/** Adds status counts together. */
export function addCounts(a: StatusCounts, b: StatusCounts): StatusCounts {
  return Object.fromEntries(RECONCILIATION_STATUSES.map((s) => [s, a[s] + b[s]])) as StatusCounts;
}

/** Whether a result is a discrepancy its case has accepted: known, explained, not a break for exit codes. */
export function isAccepted(r: Pick<ReconciliationResult, 'case'>): boolean {
  return r.case?.state === 'accepted';
}

/**
 * Statuses that need nobody: matched, a difference open reconciling items explain, or one beyond
 * tolerance but within materiality (recorded and counted, no case, no alert).
 */
export const SETTLED_STATUSES: readonly ReconciliationStatus[] = ['matched', 'explained', 'immaterial'];

/** Exit code a set of results implies: 0 when everything matched (or is explained by open items, or immaterial), 3 otherwise. */
export function reconciliationExitCode(counts: StatusCounts): 0 | 3 {
  return RECONCILIATION_STATUSES.every((s) => SETTLED_STATUSES.includes(s) || WAITING_STATUSES.includes(s) || counts[s] === 0) ? 0 : 3;
}

/** How many results are neither `matched`, `explained` nor `immaterial` (nor still waiting). */
export function countUnmatched(counts: StatusCounts): number {
  return RECONCILIATION_STATUSES.reduce((sum, s) => (SETTLED_STATUSES.includes(s) || WAITING_STATUSES.includes(s) ? sum : sum + counts[s]), 0);
}
