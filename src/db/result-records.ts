import type { ReconciliationStatus, ResultSource } from './database.types.js';

/** Every status a result can have, in the order reports list them. */
export const RECONCILIATION_STATUSES: readonly ReconciliationStatus[] = [
  'matched',
  'explained',
  'break',
  'missing_in_ledger',
  'missing_in_gateway',
  'endpoint_mismatch',
  'no_snapshot',
  'disappeared',
  'unknown_decimals',
  'no_books',
  'roll_forward_break',
  'sequence_gap',
  'no_statement',
  'immaterial',
  'conflicting_statements',
  'awaiting_books',
  'awaiting_statement',
];

/** Statuses that are no verdict yet: the books (or the bank statement) have not arrived and their deadline has not passed. */
export const WAITING_STATUSES: readonly ReconciliationStatus[] = ['awaiting_books', 'awaiting_statement'];

/**
 * Statuses that are a discrepancy someone must look at, named one by one rather than "everything
 * but matched": a status added later (explained, immaterial) is then no break until it is listed.
 * `conflicting_statements` is allowed by the database for the work that produces it.
 */
export const ATTENTION_STATUSES: readonly string[] = [
  'break',
  'missing_in_ledger',
  'missing_in_gateway',
  'endpoint_mismatch',
  'no_snapshot',
  'disappeared',
  'unknown_decimals',
  'no_books',
  'roll_forward_break',
  'sequence_gap',
  'no_statement',
  'conflicting_statements',
];

// The records the result repository reads. The reconciliation module re-exports them and adds
// the case a result belongs to; they live here so the database layer imports nothing from above it.

/** One reconciliation verdict; amounts are exact integers in minor units. */
export interface ResultRecord {
  account: string;
  businessDate: string;
  /** Null only for the account-level `no_snapshot` and `no_books`. */
  currency: string | null;
  gatewayBalance: bigint | null;
  singleBalance: bigint | null;
  expectedBalance: bigint | null;
  previousBalance: bigint | null;
  /** Gateway balance minus the balance on the previous business date that has a snapshot. */
  movement: bigint | null;
  /** Gateway minus books, when both sides exist. */
  difference: bigint | null;
  /** The reconciling items open on the date, summed (absent or null: none, or nothing compared). */
  itemsTotal?: bigint | null;
  /** difference − itemsTotal: what no item explains (absent or null where nothing was compared). */
  unexplained?: bigint | null;
  status: ReconciliationStatus;
  /** The run the gateway side came from: the date's authoritative snapshot. */
  runId: number | null;
  /** The books import the expected side came from (null: no books for that day, or imported before imports were recorded). */
  booksImportId?: number | null;
  /** Why, in words, where the amounts alone do not say it (a wallet the single read could not confirm). */
  note?: string | null;
  /**
   * Decimals of every amount above: the currency's ISO 4217 scale (or the one configured for a
   * code ISO 4217 lacks), which both sides are brought to, exactly, before they are compared.
   * Absent or null: the currency's ISO decimals, or minor units of an unknown code.
   */
  scale?: number | null;
  /** `gateway` (absent: the gateway) or `bank`: then gatewayBalance is the statement's closing booked balance. */
  source?: ResultSource;
  /** The bank statement a bank result came from. */
  bankStatementId?: number | null;
}

/** A result as stored, with the time it was computed. */
export interface StoredResultRecord extends ResultRecord {
  computedAt: Date;
  caseId: number | null;
}
