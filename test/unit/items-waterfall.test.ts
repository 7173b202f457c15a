import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ItemKind } from '../../src/db/database.types.js';
import { ITEM_KINDS, outstandingAmountOf, totalsByKind, unrecordedAmountOf } from '../../src/items/item-rules.js';
import { waterfallOf } from '../../src/reconciliation/waterfall.js';

// The waterfall of one account, currency and date: books + Σ open items + unexplained = the
// gateway or bank balance. `waterfallOf` takes the difference gateway − books, in minor units.

const minor = fc.bigInt({ min: -10_000_000_000n, max: 10_000_000_000n });
const tolerance = fc.bigInt({ min: 0n, max: 10_000n });
const kind = fc.constantFrom(...ITEM_KINDS);
const items = fc.array(fc.record({ kind, amount: minor }), { maxLength: 8 });
const abs = (n: bigint): bigint => (n < 0n ? -n : n);
const sum = (amounts: readonly bigint[]): bigint => amounts.reduce((s, a) => s + a, 0n);

describe('the waterfall: books + items + unexplained = gateway or bank balance', () => {
  it('a gateway difference of 123.45 with an in-transit item of 123.45 is explained, nothing unexplained', () => {
    const books = 100_000n;
    const gateway = 112_345n;
    expect(waterfallOf(gateway - books, { total: 12_345n, count: 1 }, 0n)).toEqual({ status: 'explained', itemsTotal: 12_345n, unexplained: 0n });
  });

  it('the issue example: a books payment of −500.00 not yet at the bank and a bank fee of −2.50 not in the books explain the difference', () => {
    const opening = 1_000_000n;
    const books = opening + 30_000n - 50_000n; // a receipt matched at the bank, and a payment of −500.00 not yet there
    const bank = opening + 30_000n - 250n; // the same receipt, and a fee of −2.50 the books do not have
    const open = [outstandingAmountOf(-50_000n), unrecordedAmountOf(-250n)];
    expect(open).toEqual([50_000n, -250n]);
    expect(waterfallOf(bank - books, { total: sum(open), count: open.length }, 0n)).toEqual({ status: 'explained', itemsTotal: 49_750n, unexplained: 0n });
  });

  it('equal balances without items are matched; a difference without items is a break of the whole difference', () => {
    expect(waterfallOf(0n, { total: 0n, count: 0 }, 0n)).toEqual({ status: 'matched', itemsTotal: 0n, unexplained: 0n });
    expect(waterfallOf(-12_345n, { total: 0n, count: 0 }, 0n)).toEqual({ status: 'break', itemsTotal: 0n, unexplained: -12_345n });
    expect(waterfallOf(12_345n, { total: 0n, count: 0 }, 0n)).toEqual({ status: 'break', itemsTotal: 0n, unexplained: 12_345n });
  });

  it('items that leave part of the difference unexplained make a break of that part only, on either side', () => {
    expect(waterfallOf(12_345n, { total: 10_000n, count: 1 }, 100n)).toEqual({ status: 'break', itemsTotal: 10_000n, unexplained: 2_345n });
    expect(waterfallOf(12_345n, { total: 20_000n, count: 2 }, 100n)).toEqual({ status: 'break', itemsTotal: 20_000n, unexplained: -7_655n });
    expect(waterfallOf(-12_345n, { total: -10_000n, count: 1 }, 100n)).toEqual({ status: 'break', itemsTotal: -10_000n, unexplained: -2_345n });
  });

  it('the tolerance is inclusive on both sides: exactly the tolerance is within it, one minor unit more is a break', () => {
    const statuses = (count: number) => [-101n, -100n, -1n, 0n, 1n, 100n, 101n].map((d) => waterfallOf(5_000n + d, { total: 5_000n, count }, 100n).status);
    expect(statuses(1)).toEqual(['break', 'explained', 'explained', 'explained', 'explained', 'explained', 'break']);
    expect(waterfallOf(100n, { total: 0n, count: 0 }, 100n).status).toBe('matched');
    expect(waterfallOf(-100n, { total: 0n, count: 0 }, 100n).status).toBe('matched');
    expect(waterfallOf(101n, { total: 0n, count: 0 }, 100n).status).toBe('break');
    expect(waterfallOf(-101n, { total: 0n, count: 0 }, 100n).status).toBe('break');
  });

  it('items that cancel out (sum zero) still explain: open items make a date explained, not matched', () => {
    expect(waterfallOf(0n, { total: 0n, count: 2 }, 0n)).toEqual({ status: 'explained', itemsTotal: 0n, unexplained: 0n });
  });

  it('books + Σ items + unexplained is the gateway balance, and the status follows the unexplained part and the item count (property)', () => {
    fc.assert(
      fc.property(minor, minor, items, tolerance, (books, gateway, open, tol) => {
        const totals = totalsByKind(open);
        const w = waterfallOf(gateway - books, { total: totals.total, count: open.length }, tol);
        expect(books + w.itemsTotal + w.unexplained).toBe(gateway);
        expect(w.itemsTotal).toBe(sum(open.map((i) => i.amount)));
        const expected = abs(w.unexplained) > tol ? 'break' : open.length > 0 ? 'explained' : 'matched';
        expect(w.status).toBe(expected);
      }),
    );
  });

  it('a break is exactly what lies beyond the tolerance, whatever the items (property)', () => {
    fc.assert(
      fc.property(minor, tolerance, fc.bigInt({ min: 1n, max: 1_000_000n }), fc.constantFrom(-1n, 1n), fc.nat({ max: 5 }), (itemsTotal, tol, beyond, side, count) => {
        const inside = side * tol;
        expect(waterfallOf(itemsTotal + inside, { total: itemsTotal, count }, tol)).toEqual({ status: count > 0 ? 'explained' : 'matched', itemsTotal, unexplained: inside });
        const outside = side * (tol + beyond);
        expect(waterfallOf(itemsTotal + outside, { total: itemsTotal, count }, tol)).toEqual({ status: 'break', itemsTotal, unexplained: outside });
      }),
    );
  });

  it('unmatched entries as items explain books against bank exactly: outstanding the opposite of the books line, unrecorded the bank line (property)', () => {
    // Both sides start from the same opening balance; matched pairs are on both, the rest on one side only.
    fc.assert(
      fc.property(minor, fc.array(minor, { maxLength: 6 }), fc.array(minor, { maxLength: 6 }), fc.array(minor, { maxLength: 6 }), (opening, matched, booksOnly, bankOnly) => {
        const books = opening + sum(matched) + sum(booksOnly);
        const bank = opening + sum(matched) + sum(bankOnly);
        const open = [...booksOnly.map((a) => ({ kind: 'outstanding' as ItemKind, amount: outstandingAmountOf(a) })), ...bankOnly.map((a) => ({ kind: 'unrecorded' as ItemKind, amount: unrecordedAmountOf(a) }))];
        const totals = totalsByKind(open);
        expect(books + totals.total).toBe(bank);
        const w = waterfallOf(bank - books, { total: totals.total, count: open.length }, 0n);
        expect(w.unexplained).toBe(0n);
        expect(w.status).toBe(open.length > 0 ? 'explained' : 'matched');
      }),
    );
  });

  it('totals per kind: glossary order, one line per kind present, counts and sums that add up to the whole (property)', () => {
    fc.assert(
      fc.property(items, (open) => {
        const totals = totalsByKind(open);
        expect(totals.byKind.map((k) => k.kind)).toEqual(ITEM_KINDS.filter((k) => open.some((i) => i.kind === k)));
        for (const line of totals.byKind) {
          const own = open.filter((i) => i.kind === line.kind);
          expect(line).toEqual({ kind: line.kind, total: sum(own.map((i) => i.amount)), count: own.length });
        }
        expect(totals.total).toBe(sum(open.map((i) => i.amount)));
        expect(totals.byKind.reduce((n, k) => n + k.count, 0)).toBe(open.length);
      }),
    );
  });
});
