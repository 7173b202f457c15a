import { randomUUID } from 'node:crypto';
import type { StatusCounts } from '../reconciliation/reconciliation-result.js';
import type { ChangeList } from './change-list.js';
import { problemHeadline, type ProblemData, type ProblemEventType, type ProblemFoldedData } from './problems/problem-events.js';

/**
 * Glossary. An *event* is something people are told about (a settled night, a missed date); it
 * has an id, a type, a timestamp and a versioned body. A *notification* is one event on its way
 * to one *channel* (webhook, Slack, e-mail): a row of the outbox.
 */
export const EVENT_VERSION = 1;

export type EventType =
  | 'night.completed'
  | 'date.missed'
  | 'date.at_risk'
  | 'date.recovered'
  | 'books.missing'
  | 'reconciliation.failed'
  | 'notification.test'
  | 'signoff.invalidated'
  | 'signoff.reopened'
  | 'item.overdue'
  | ProblemEventType;

export interface NotificationEvent<D = EventData> {
  /** `evt_…`, the same for every channel: a webhook receiver deduplicates on it (webhook-id). */
  id: string;
  type: EventType;
  /** When the event happened (ISO 8601, UTC). */
  timestamp: string;
  version: typeof EVENT_VERSION;
  data: D;
}

export type EventData =
  | NightCompletedData
  | DateMissedData
  | DateAtRiskData
  | DateRecoveredData
  | BooksMissingData
  | ReconciliationFailedData
  | TestEventData
  | SignoffInvalidatedData
  | SignoffReopenedData
  | ItemOverdueData
  | ProblemData
  | ProblemFoldedData;

/** An exact amount in minor units, as a string of digits, with its currency. */
export interface Money {
  amount: string;
  currency: string;
}

export interface NightAccountDigest {
  account: string;
  status: 'captured' | 'missed';
  /** The run whose snapshot is the date's end of day (captured only). */
  runId: number | null;
  /** Capture start minus cut-off, in seconds (negative: before the cut-off). */
  cutoffDriftSeconds: number | null;
  /** Wallets in the captured snapshot. */
  wallets: number | null;
  /** End-of-day capture attempts for the date (a failure that was retried and captured shows here). */
  attempts: number;
  /** Why the date was missed, or the last error of an attempt that was retried. */
  lastError: string | null;
  reconciliation: StatusCounts;
}

export interface Discrepancy {
  account: string;
  status: string;
  /** Gateway minus books (a missing side counts as zero), exact, in the currency's ISO 4217 minor units. */
  difference: Money;
  gatewayBalance: string | null;
  expectedBalance: string | null;
  /** The difference in major units as people read it: "EUR 1.00", "JPY -5". */
  differenceFormatted?: string;
  /**
   * |difference| in basis points of the balance (the larger side), rounded down: what orders the
   * list, so currencies compare without exchange rates. Null when the balance is zero (ranked first).
   */
  relativeBps?: string | null;
}

/** Discrepancy cases of the date: newly open (opened or reopened that day), still open from before, resolved by the day's clean results. */
export interface CaseCounts {
  new: number;
  persisting: number;
  autoResolved: number;
}

export interface NightCompletedData {
  businessDate: string;
  /** The scheduled slot that served the date. */
  slot: string;
  cutoffAt: string;
  accounts: NightAccountDigest[];
  /** Results of the date over every account, per status. */
  reconciliation: StatusCounts;
  /** The largest discrepancies by absolute amount, at most 20. */
  topDiscrepancies: Discrepancy[];
  /** Discrepancies beyond the ones listed. */
  moreDiscrepancies: number;
  /** Accounts whose latest settled dates were missed in a row (only counts above zero). */
  consecutiveFailures: Array<{ account: string; missedDates: number }>;
  /** Discrepancies of the date whose case is accepted: not in `reconciliation` nor `topDiscrepancies`. */
  acceptedDiscrepancies: number;
  caseCounts: CaseCounts;
  /** Accounts whose results cannot be final yet, and why, for people ("books for 2026-11-23 not imported yet"). */
  pending: Array<{ account: string; state: 'awaiting_books' | 'owed' | 'awaiting_statement'; message: string }>;
  /** The night as a change list: per account, new, changed, still open (with age), snoozed and cleared problems, most material first; immaterial and explained counted. Absent in digests written before it existed. */
  changes?: ChangeList;
}

/** The gateway refused an account's credentials while its date could still be captured. */
export interface DateAtRiskData {
  account: string;
  businessDate: string;
  /** The capture window closes then: fixed before it, the date is still captured. */
  windowClosesAt: string;
  reason: string;
}

/** A date that was at risk (date.at_risk) was captured after all, inside its window. */
export interface DateRecoveredData {
  account: string;
  businessDate: string;
  /** When the end-of-day capture's reads finished. */
  capturedAt: string;
  runId: number;
}

export interface BooksMissingData {
  account: string;
  businessDate: string;
  cutoffAt: string;
  /** RECON_BOOKS_DEADLINE after the cut-off: when the books were due. */
  deadlineAt: string;
}

/** One account-date could not be reconciled: it stays owed and is tried again; the others went on. */
export interface ReconciliationFailedData {
  account: string;
  businessDate: string;
  reason: string;
}

export interface DateMissedData {
  account: string;
  businessDate: string;
  cutoffAt: string;
  windowClosedAt: string;
  lastError: string | null;
  /** Including this one. */
  consecutiveMissedDates: number;
}

/** A signed business date whose inputs changed afterwards: it must be signed again. */
export interface SignoffInvalidatedData {
  signoffId: number;
  businessDate: string;
  accounts: string[];
  preparedBy: string;
  approvedBy: string | null;
  /** What changed, one sentence each. */
  changes: string[];
}

/** An approved business date unlocked by an approver or admin, with the reason: it must be signed again. */
export interface SignoffReopenedData {
  signoffId: number;
  businessDate: string;
  accounts: string[];
  preparedBy: string;
  approvedBy: string;
  reopenedBy: string;
  reopenedAt: string;
  note: string;
}

/** A reconciling item still open after its expected clearing date: raised once per item. */
export interface ItemOverdueData {
  /** The stored item's id; null for the item of an unmatched entry, named by its entry id below. */
  itemId: number | null;
  booksEntryId?: number | null;
  statementEntryId?: number | null;
  account: string;
  currency: string;
  kind: string;
  /** Signed, minor units: books + items + unexplained = gateway or bank balance. */
  amount: Money;
  openedOn: string;
  expectedClear: string;
  /** The date it was first seen overdue. */
  businessDate: string;
  note: string | null;
}

export interface TestEventData {
  message: string;
}

/** A new event stamped with a fresh id. */
export function createEvent<D extends EventData>(type: EventType, at: Date, data: D): NotificationEvent<D> {
  return { id: `evt_${randomUUID().replaceAll('-', '')}`, type, timestamp: at.toISOString(), version: EVENT_VERSION, data };
}

/** A one-line headline of an event, for subjects, Slack and logs. */
export function headlineOf(event: NotificationEvent): string {
  if (event.type === 'night.completed') {
    const d = event.data as NightCompletedData;
    // The problems come first, so a subject line says what needs doing before anything else.
    const missed = d.accounts.filter((a) => a.status === 'missed').length;
    const breaks = d.reconciliation.break ?? 0;
    const other = Object.entries(d.reconciliation).reduce((sum, [status, n]) => (status === 'matched' || status === 'explained' || status === 'awaiting_books' || status === 'break' ? sum : sum + n), 0);
    const awaited = (d.pending ?? []).filter((p) => p.state === 'awaiting_books').length;
    const problems = [
      ...(breaks > 0 ? [`${breaks} break${breaks === 1 ? '' : 's'}`] : []),
      ...(other > 0 ? [`${other} other discrepanc${other === 1 ? 'y' : 'ies'}`] : []),
      ...(awaited > 0 ? [`books awaited for ${awaited} account${awaited === 1 ? '' : 's'}`] : []),
      ...(missed > 0 ? [`${missed} account${missed === 1 ? '' : 's'} missed`] : []),
    ];
    if (problems.length > 0) return `Reconciliation of ${d.businessDate}: ${problems.join(', ')}`;
    return `Reconciliation of ${d.businessDate}: all ${d.reconciliation.matched} result${d.reconciliation.matched === 1 ? '' : 's'} matched (${d.accounts.length} account${d.accounts.length === 1 ? '' : 's'} captured)`;
  }
  if (event.type === 'date.at_risk') {
    const d = event.data as DateAtRiskData;
    return `Account "${d.account}" may miss business date ${d.businessDate}: the gateway refused its credentials`;
  }
  if (event.type === 'date.recovered') {
    const d = event.data as DateRecoveredData;
    return `Account "${d.account}" captured business date ${d.businessDate} after all: no longer at risk`;
  }
  if (event.type === 'books.missing') {
    const d = event.data as BooksMissingData;
    return `Books of account "${d.account}" for ${d.businessDate} did not arrive by their deadline`;
  }
  if (event.type === 'reconciliation.failed') {
    const d = event.data as ReconciliationFailedData;
    return `Account "${d.account}" could not be reconciled for ${d.businessDate}`;
  }
  if (event.type === 'date.missed') {
    const d = event.data as DateMissedData;
    return `Account "${d.account}" missed business date ${d.businessDate}: no end-of-day snapshot`;
  }
  if (event.type === 'signoff.invalidated') {
    const d = event.data as SignoffInvalidatedData;
    return `Business date ${d.businessDate} changed after sign-off: it must be signed again`;
  }
  if (event.type === 'signoff.reopened') {
    const d = event.data as SignoffReopenedData;
    return `Business date ${d.businessDate} was reopened by ${d.reopenedBy}: it is no longer signed off`;
  }
  if (event.type === 'item.overdue') {
    const d = event.data as ItemOverdueData;
    const name = d.itemId !== null ? `#${d.itemId}` : d.booksEntryId != null ? `of books entry ${d.booksEntryId}` : `of statement entry ${d.statementEntryId}`;
    return `Reconciling item ${name} of account "${d.account}" (${d.kind}, ${d.currency}) was expected to clear by ${d.expectedClear} and is still open`;
  }
  if (event.type.startsWith('problem.')) return problemHeadline(event.type as ProblemEventType, event.data as ProblemData | ProblemFoldedData);
  return 'wallet-recon test notification';
}
