import { formatMoney } from '../money/format-amount.js';
import type { CaseOccurrence, ReconciliationCase } from '../db/case-records.js';
import type { CaseKind, CaseState, ReconciliationStatus } from '../db/database.types.js';
import { amountText } from '../db/exact-amount.js';
import type { ResultRecord } from '../db/result-records.js';

export type { CaseAction, CaseKind, CaseResolution, CaseState } from '../db/database.types.js';

/**
 * Glossary. A *case* is one discrepancy of one kind for one account and currency (currency null
 * for account-level kinds), followed from the day it opens. An *occurrence* is one business
 * date it was seen on. An *event* is one line of its append-only audit trail. *Active* cases
 * (open, acknowledged) need someone's attention; accepted ones are known and explained.
 */
export const CASE_STATES: readonly CaseState[] = ['open', 'acknowledged', 'resolved', 'accepted'];
export const ACTIVE_STATES: readonly CaseState[] = ['open', 'acknowledged'];
/** `--state` values of `wallet-recon cases`: a state, or `active` for open and acknowledged. */
export const CASE_STATE_FILTERS = [...CASE_STATES, 'active'] as const;

/**
 * Which result status opens which kind of case. A status absent here (matched) opens none; a
 * new kind (a missed business date) is one more entry here and in the migration's check.
 */
export const CASE_KIND_OF_STATUS: Readonly<Partial<Record<ReconciliationStatus, CaseKind>>> = {
  break: 'break',
  missing_in_ledger: 'missing_in_ledger',
  missing_in_gateway: 'missing_in_gateway',
  endpoint_mismatch: 'endpoint_mismatch',
  disappeared: 'disappeared',
  unknown_decimals: 'unknown_decimals',
  no_snapshot: 'no_snapshot',
  no_books: 'no_books',
  roll_forward_break: 'roll_forward_break',
  sequence_gap: 'sequence_gap',
  no_statement: 'no_statement',
  conflicting_statements: 'conflicting_statements',
};

/** Kinds no result status opens: an item past its expected clearing date (opened and resolved with its items). */
export const ITEM_CASE_KINDS: readonly CaseKind[] = ['overdue_item'];

export const CASE_KINDS: readonly CaseKind[] = [...new Set([...Object.values(CASE_KIND_OF_STATUS), ...ITEM_CASE_KINDS])];

/** Kinds about the whole account rather than one currency. */
export const ACCOUNT_LEVEL_KINDS: readonly CaseKind[] = ['no_snapshot', 'no_books'];

export type { CaseEvent, CaseOccurrence, ReconciliationCase } from '../db/case-records.js';

export type { ResultCase } from '../db/case-records.js';

/** The actor the reconciliation itself writes events as. */
export const SYSTEM_ACTOR = 'wallet-recon';

/** The case kind a result opens, or undefined for a matched result. */
export function caseKindOf(status: ReconciliationStatus): CaseKind | undefined {
  return CASE_KIND_OF_STATUS[status];
}

/**
 * The amount a case follows: gateway minus books with a missing side counted as zero (so a
 * missing_in_ledger case follows the gateway balance), for a break the unexplained remainder; for endpoint_mismatch the list balance
 * minus the single-wallet one; null when neither side has an amount (no_snapshot).
 */
export function discrepancyAmount(r: Pick<ResultRecord, 'status' | 'gatewayBalance' | 'singleBalance' | 'expectedBalance' | 'difference' | 'unexplained'>): bigint | null {
  // A break beside open reconciling items is the part they leave unexplained.
  if (r.status === 'break' && r.unexplained !== undefined && r.unexplained !== null) return r.unexplained;
  if (r.status === 'endpoint_mismatch' && r.gatewayBalance !== null && r.singleBalance !== null) return r.gatewayBalance - r.singleBalance;
  // A raw integer of unknown decimals compares with nothing: no amount until its decimals are set.
  if (r.status === 'unknown_decimals') return null;
  if (r.difference !== null) return r.difference;
  if (r.gatewayBalance === null && r.expectedBalance === null) return null;
  return (r.gatewayBalance ?? 0n) - (r.expectedBalance ?? 0n);
}

/** Whole days from one YYYY-MM-DD date to another (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/**
 * A case's age in days: to today while it is active or accepted, to its resolution date once
 * resolved. `today` is the current business date from the context's clock (`todayOf(ctx).date`):
 * the one rule of docs/cases-and-signoff.md#case-ages, which open_cases.age_days follows in SQL.
 */
export function caseAgeDays(c: Pick<ReconciliationCase, 'state' | 'openedOn' | 'resolvedOn'>, today: string): number {
  const end = c.state === 'resolved' && c.resolvedOn !== null ? c.resolvedOn : today;
  return Math.max(0, daysBetween(c.openedOn, end));
}

export const AGE_BUCKETS = ['under 2 days', '2-7 days', '8-30 days', 'over 30 days'] as const;
export type AgeBucket = (typeof AGE_BUCKETS)[number];

/** The age bucket the summaries count active cases in. */
export function ageBucketOf(ageDays: number): AgeBucket {
  if (ageDays < 2) return 'under 2 days';
  if (ageDays <= 7) return '2-7 days';
  if (ageDays <= 30) return '8-30 days';
  return 'over 30 days';
}

/** `difference EUR 1.00` (major units; minor units stay as stored), or `no amount` for account-level kinds. */
export function describeAmount(amount: bigint | null, currency?: string | null): string {
  return amount === null ? 'no amount' : `difference ${caseAmountText(amount, currency)}`;
}

/**
 * A case's amount as people read it: "EUR 1.00", "JPY -5,000". Cases hold amounts in the
 * currency's ISO 4217 scale (reconciliation brings both sides there); a currency without one
 * keeps its minor units ("1,500 minor units"), and an account-level amount its plain digits.
 */
export function caseAmountText(amount: bigint, currency: string | null | undefined): string {
  return currency === null || currency === undefined ? amount.toString() : formatMoney(amount, currency);
}

/** How a case is named to people: `#7 eu-main EUR break`. */
export function describeCase(c: Pick<ReconciliationCase, 'id' | 'account' | 'currency' | 'kind'>): string {
  return `#${c.id} ${c.account}${c.currency === null ? '' : ` ${c.currency}`} ${c.kind}`;
}

/** An occurrence as JSON shows it and as event evidence freezes it: amounts as strings of digits. */
export function occurrenceRecord(o: CaseOccurrence) {
  return {
    business_date: o.businessDate,
    status: o.status,
    difference: amountText(o.difference),
    gateway_balance: amountText(o.gatewayBalance),
    single_balance: amountText(o.singleBalance),
    expected_balance: amountText(o.expectedBalance),
    run_id: o.runId,
  };
}
