import type { BooksDayRows } from '../db/books-day.repository.js';
import { formatAmount } from '../money/format-amount.js';
import type { ReconciliationResult } from './reconciliation-result.js';

/**
 * The books' roll-forward of one currency on a date: the previous closing plus the entries booked
 * after it up to the date must give the date's closing, like a statement's opening + entries =
 * closing. Amounts at the comparison scale.
 */
export interface BooksProof {
  previousDate: string;
  previousClosing: bigint;
  entries: bigint;
  closing: bigint;
  /** closing − (previous closing + entries): zero when the books roll forward. */
  residual: bigint;
}

/** The books balance of one currency on a date, and where it comes from. */
export interface BooksBalanceOfDay {
  currency: string;
  /** At the comparison scale. */
  balance: bigint;
  /** `closing`: a closing balance imported for the date; `entries`: the previous closing (zero without one) plus the entries since. */
  from: 'closing' | 'entries';
  /** The books import the balance rests on: the closing's, else the newest of the entries (or of the previous closing). */
  importId: number | null;
  /** Checked where the date has a closing, an earlier closing, and entries between them; else null. */
  proof: BooksProof | null;
}

type ToComparison = (currency: string, amount: bigint, scale: number | null) => bigint;

function newest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

/**
 * A date's books per currency: the closing imported for it, proved against the previous closing
 * and the entries between where both exist; without a closing, a date with entries booked on it
 * has the previous closing (zero when there is none: the entries are the account's whole history)
 * plus the entries booked after it up to the date. A currency with neither has no books that day.
 */
export function booksOfDay(rows: readonly BooksDayRows[], toComparison: ToComparison): BooksBalanceOfDay[] {
  const out: BooksBalanceOfDay[] = [];
  for (const r of rows) {
    const entries = r.entries.reduce((sum, e) => sum + toComparison(r.currency, e.total, e.scale), 0n);
    const count = r.entries.reduce((n, e) => n + e.count, 0);
    const onDate = r.entries.reduce((n, e) => n + e.onDate, 0);
    const entriesImport = r.entries.reduce<number | null>((id, e) => newest(id, e.importId), null);
    const previous = r.previous === null ? null : toComparison(r.currency, r.previous.balance, r.previous.scale);
    if (r.closing !== null) {
      const closing = toComparison(r.currency, r.closing.balance, r.closing.scale);
      const proof = previous === null || count === 0 ? null : { previousDate: r.previous!.businessDate, previousClosing: previous, entries, closing, residual: closing - previous - entries };
      out.push({ currency: r.currency, balance: closing, from: 'closing', importId: r.closing.importId, proof });
    } else if (onDate > 0) {
      out.push({ currency: r.currency, balance: (previous ?? 0n) + entries, from: 'entries', importId: newest(entriesImport, r.previous?.importId ?? null), proof: null });
    }
  }
  return out;
}

/** The statuses a failed books roll-forward overrides: those that compared the balances. */
const COMPARED = new Set(['matched', 'explained', 'break']);

/**
 * A result whose books do not roll forward is never green: a compared result of that currency
 * becomes `roll_forward_break`, its note naming the residual (the statement's own failures, and
 * statuses that compared nothing, are left as they are).
 */
export function applyBooksProofs(results: readonly ReconciliationResult[], books: readonly BooksBalanceOfDay[], scaleOf: (currency: string) => number | null): ReconciliationResult[] {
  const failed = new Map(books.filter((b) => b.proof !== null && b.proof.residual !== 0n).map((b) => [b.currency, b.proof!]));
  return results.map((r) => {
    const proof = r.currency === null ? undefined : failed.get(r.currency);
    if (proof === undefined || !COMPARED.has(r.status)) return r;
    const currency = r.currency!;
    const f = (amount: bigint) => formatAmount(amount, currency, scaleOf(currency));
    const note = `the books do not roll forward: closing of ${proof.previousDate} ${f(proof.previousClosing)} + entries ${f(proof.entries)} ≠ closing ${f(proof.closing)} ${currency}: residual ${f(proof.residual)} ${currency}`;
    return { ...r, status: 'roll_forward_break' as const, note: r.note ? `${note}; ${r.note}` : note };
  });
}
