import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BooksDayRows } from '../../src/db/books-day.repository.js';
import { applyBooksProofs, booksOfDay } from '../../src/reconciliation/books-day.js';
import type { ReconciliationResult } from '../../src/reconciliation/reconciliation-result.js';

const same = (_c: string, amount: bigint) => amount;
const closing = (businessDate: string, balance: bigint, importId: number | null = 1) => ({ businessDate, balance, scale: 2, importId });
const entries = (total: bigint, count: number, onDate: number, importId: number | null = 2) => ({ scale: 2, total, count, onDate, importId });

function result(status: ReconciliationResult['status'], currency: string | null = 'EUR', note: string | null = null): ReconciliationResult {
  return { account: 'a', businessDate: '2026-11-03', currency, gatewayBalance: 0n, singleBalance: null, expectedBalance: 0n, previousBalance: null, movement: null, difference: 0n, status, runId: null, note };
}

describe('the books of a date: a closing imported for it, else the previous closing plus the entries since', () => {
  it('takes the closing and proves it against the previous closing and the entries between', () => {
    const rows: BooksDayRows[] = [{ currency: 'EUR', closing: closing('2026-11-03', 166_095n, 5), previous: closing('2026-11-02', 165_345n), entries: [entries(-250n, 1, 1)] }];
    expect(booksOfDay(rows, same)).toEqual([
      { currency: 'EUR', balance: 166_095n, from: 'closing', importId: 5, proof: { previousDate: '2026-11-02', previousClosing: 165_345n, entries: -250n, closing: 166_095n, residual: 1_000n } },
    ]);
  });

  it('proves nothing without a previous closing or without entries between', () => {
    expect(booksOfDay([{ currency: 'EUR', closing: closing('2026-11-03', 10n), previous: null, entries: [entries(10n, 1, 1)] }], same)[0]!.proof).toBeNull();
    expect(booksOfDay([{ currency: 'EUR', closing: closing('2026-11-03', 10n), previous: closing('2026-11-02', 10n), entries: [] }], same)[0]!.proof).toBeNull();
  });

  it('without a closing, a date with entries on it has the previous closing (zero without one) plus the entries since; without entries on it, no books', () => {
    expect(booksOfDay([{ currency: 'EUR', closing: null, previous: closing('2026-11-01', 1_000n, 3), entries: [entries(-250n, 2, 1, 7), entries(5n, 1, 0, null)] }], same)).toEqual([
      { currency: 'EUR', balance: 755n, from: 'entries', importId: 7, proof: null },
    ]);
    expect(booksOfDay([{ currency: 'EUR', closing: null, previous: null, entries: [entries(165_345n, 5, 5, null)] }], same)).toEqual([{ currency: 'EUR', balance: 165_345n, from: 'entries', importId: null, proof: null }]);
    expect(booksOfDay([{ currency: 'EUR', closing: null, previous: closing('2026-11-01', 1_000n, 9), entries: [entries(-250n, 1, 1, null)] }], same)[0]!.importId).toBe(9);
    expect(booksOfDay([{ currency: 'EUR', closing: null, previous: closing('2026-11-01', 1_000n), entries: [entries(-250n, 1, 0)] }], same)).toEqual([]);
  });

  it('brings every amount to the comparison scale', () => {
    const toCents = (_c: string, amount: bigint, scale: number | null) => (scale === 0 ? amount * 100n : amount);
    const rows: BooksDayRows[] = [{ currency: 'EUR', closing: null, previous: { businessDate: '2026-11-01', balance: 10n, scale: 0, importId: null }, entries: [{ scale: 0, total: 2n, count: 1, onDate: 1, importId: null }, entries(50n, 1, 1)] }];
    expect(booksOfDay(rows, toCents)[0]!.balance).toBe(1_250n);
  });

  it('a roll-forward holds exactly when closing = previous closing + entries (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), fc.bigInt({ min: -(10n ** 6n), max: 10n ** 6n }), (previous, moved, off) => {
        const rows: BooksDayRows[] = [{ currency: 'EUR', closing: closing('2026-11-03', previous + moved + off), previous: closing('2026-11-02', previous), entries: [entries(moved, 3, 1)] }];
        const [books] = booksOfDay(rows, same);
        expect(books!.proof!.residual).toBe(off);
        const [r] = applyBooksProofs([result('matched')], [books!], () => 2);
        expect(r!.status).toBe(off === 0n ? 'matched' : 'roll_forward_break');
      }),
    );
  });
});

describe('a failed books roll-forward is never green', () => {
  const failed = booksOfDay([{ currency: 'EUR', closing: closing('2026-11-03', 166_095n), previous: closing('2026-11-02', 165_345n), entries: [entries(-250n, 1, 1)] }], same);

  it('turns matched, explained and break of its currency into roll_forward_break naming the residual', () => {
    for (const status of ['matched', 'explained', 'break'] as const) {
      const [r] = applyBooksProofs([result(status, 'EUR', status === 'explained' ? 'explained by item #1' : null)], failed, () => 2);
      expect(r!.status).toBe('roll_forward_break');
      expect(r!.note).toBe(
        `the books do not roll forward: closing of 2026-11-02 1,653.45 + entries -2.50 ≠ closing 1,660.95 EUR: residual 10.00 EUR${status === 'explained' ? '; explained by item #1' : ''}`,
      );
    }
  });

  it('leaves other statuses, other currencies and proofs that hold as they are', () => {
    const untouched = [result('sequence_gap'), result('awaiting_books'), result('break', 'USD'), result('no_snapshot', null)];
    expect(applyBooksProofs(untouched, failed, () => 2)).toEqual(untouched);
    const holds = booksOfDay([{ currency: 'EUR', closing: closing('2026-11-03', 165_095n), previous: closing('2026-11-02', 165_345n), entries: [entries(-250n, 1, 1)] }], same);
    expect(applyBooksProofs([result('break')], holds, () => 2)).toEqual([result('break')]);
  });
});
