import type { ItemKind } from '../db/database.types.js';

/**
 * Glossary. A *reconciling item* explains part of a difference between the books and the gateway
 * or bank balance: a payout in transit, a cheque not yet cashed (outstanding), a fee the books do
 * not have yet (unrecorded). Its amount is signed so that books + Σ items + unexplained = the
 * gateway or bank balance. It is open from `openedOn` until it clears (matched, or cleared by a
 * person with a note); open on a date after its expected clearing date, it is *overdue*.
 */
export const ITEM_KINDS: readonly ItemKind[] = ['outstanding', 'unrecorded', 'in_transit', 'timing', 'fee', 'adjustment', 'other'];
/** The kinds a person adds; outstanding and unrecorded items come from unmatched entries. */
export const MANUAL_ITEM_KINDS: readonly ItemKind[] = ['in_transit', 'timing', 'fee', 'adjustment', 'other'];

export type ItemStateOnDate = 'open' | 'overdue' | 'cleared';

export interface ItemDates {
  openedOn: string;
  expectedClear: string | null;
  /** The date it cleared (it no longer counts on that date), null while open. */
  clearedOn: string | null;
}

/** Whether an item counts on a business date: opened on or before it and not cleared by then. */
export function isOpenOn(item: ItemDates, date: string): boolean {
  return item.openedOn <= date && (item.clearedOn === null || item.clearedOn > date);
}

/** What an item is on a date: cleared (or not yet opened: cleared as far as that date goes), open, or overdue past its expected clearing date. */
export function itemStateOn(item: ItemDates, date: string): ItemStateOnDate {
  if (!isOpenOn(item, date)) return 'cleared';
  return item.expectedClear !== null && date > item.expectedClear ? 'overdue' : 'open';
}

/**
 * Business days (Monday to Friday) from one YYYY-MM-DD date to a later one: an item opened on
 * a Friday is 1 business day old on Monday. 0 when `to` is not after `from`.
 */
export function businessDaysBetween(from: string, to: string): number {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (!(end > start)) return 0;
  const days = Math.round((end - start) / 86_400_000);
  const weeks = Math.floor(days / 7);
  let count = weeks * 5;
  const startDay = new Date(start).getUTCDay();
  for (let i = 1; i <= days % 7; i++) {
    const day = (startDay + i) % 7;
    if (day !== 0 && day !== 6) count++;
  }
  return count;
}

export const ITEM_AGE_BUCKETS = ['0-2 days', '3-5 days', '6-20 days', 'over 20 days'] as const;
export type ItemAgeBucket = (typeof ITEM_AGE_BUCKETS)[number];

/** The aging bucket of an item of this many business days. */
export function itemAgeBucketOf(ageDays: number): ItemAgeBucket {
  if (ageDays <= 2) return '0-2 days';
  if (ageDays <= 5) return '3-5 days';
  if (ageDays <= 20) return '6-20 days';
  return 'over 20 days';
}

/** Open items summed per kind, in the order ITEM_KINDS lists them (kinds without items left out), and their total. */
export function totalsByKind(items: ReadonlyArray<{ kind: ItemKind; amount: bigint }>): { byKind: Array<{ kind: ItemKind; total: bigint; count: number }>; total: bigint } {
  const byKind = ITEM_KINDS.flatMap((kind) => {
    const own = items.filter((i) => i.kind === kind);
    return own.length === 0 ? [] : [{ kind, total: own.reduce((s, i) => s + i.amount, 0n), count: own.length }];
  });
  return { byKind, total: byKind.reduce((s, k) => s + k.total, 0n) };
}

/** The amount an unmatched books entry leaves open: what the books have and the bank does not yet, so its opposite (−500.00 paid in the books: +500.00). */
export function outstandingAmountOf(booksEntryAmount: bigint): bigint {
  return -booksEntryAmount;
}

/** The amount an unmatched statement entry leaves open: the bank has it and the books do not, so its own sign (a fee of −2.50: −2.50). */
export function unrecordedAmountOf(statementEntryAmount: bigint): bigint {
  return statementEntryAmount;
}
