import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReconcilingItem } from '../../src/db/reconciling-item.repository.js';
import { ITEM_KINDS } from '../../src/items/item-rules.js';
import { describeItem, totalOpenItems } from '../../src/items/open-item-totals.js';

// The open items of one account and date as the waterfall takes them: per currency, their total
// at the scale the date is compared in, how many there are, and how people read them.

function item(fields: Partial<ReconcilingItem> & Pick<ReconcilingItem, 'currency' | 'amount'>): ReconcilingItem {
  return {
    id: null,
    account: 'eu-bank',
    source: 'bank',
    kind: 'in_transit',
    scale: 2,
    openedOn: '2026-11-16',
    expectedClear: null,
    state: 'open',
    clearedOn: null,
    clearedBy: null,
    clearNote: null,
    note: null,
    evidence: null,
    createdBy: null,
    booksEntryId: null,
    statementEntryId: null,
    overdueRaisedOn: null,
    ...fields,
  };
}

/** Brings an amount at `scale` to 4 decimals, as a date compared at 4 decimals would. */
const toFour = (_currency: string, amount: bigint, scale: number): bigint => amount * 10n ** BigInt(4 - scale);

describe('open items named and totalled for the waterfall', () => {
  it('names an item people added by its id, one of an unmatched entry by that entry', () => {
    expect(describeItem(item({ id: 3, kind: 'in_transit', currency: 'EUR', amount: 12_345n }))).toBe('#3 in_transit EUR 123.45');
    expect(describeItem(item({ kind: 'outstanding', currency: 'EUR', amount: 50_000n, booksEntryId: 17 }))).toBe('outstanding (books entry 17) EUR 500.00');
    expect(describeItem(item({ kind: 'unrecorded', currency: 'EUR', amount: -250n, statementEntryId: 9 }))).toBe('unrecorded (statement entry 9) EUR -2.50');
    expect(describeItem(item({ id: 4, kind: 'fee', currency: 'JPY', amount: -120_000n, scale: 0 }))).toBe('#4 fee JPY -120,000');
  });

  it('totals per currency at the comparison scale, counts the items and names them all', () => {
    const totals = totalOpenItems(
      [
        item({ id: 1, currency: 'EUR', amount: 12_345n }),
        item({ currency: 'USD', kind: 'unrecorded', amount: -250n, statementEntryId: 9 }),
        item({ currency: 'EUR', kind: 'outstanding', amount: 50_000n, booksEntryId: 17 }),
        item({ id: 2, currency: 'EUR', kind: 'fee', amount: -1_000n, scale: 3 }),
      ],
      toFour,
    );
    expect([...totals.keys()]).toEqual(['EUR', 'USD']);
    expect(totals.get('EUR')).toEqual({
      total: 1_234_500n + 5_000_000n - 10_000n,
      count: 3,
      description: 'items #1 in_transit EUR 123.45, outstanding (books entry 17) EUR 500.00, #2 fee EUR -1.000',
    });
    expect(totals.get('USD')).toEqual({ total: -25_000n, count: 1, description: 'item unrecorded (statement entry 9) USD -2.50' });
  });

  it('items that cancel out still count, and no items give no currency at all', () => {
    const totals = totalOpenItems([item({ id: 1, currency: 'EUR', amount: 500n }), item({ id: 2, currency: 'EUR', amount: -500n })], toFour);
    expect(totals.get('EUR')).toEqual({ total: 0n, count: 2, description: 'items #1 in_transit EUR 5.00, #2 in_transit EUR -5.00' });
    expect(totalOpenItems([], toFour).size).toBe(0);
  });

  it('per currency: the sum of each item brought to the comparison scale, every item counted once and named in order (property)', () => {
    const anItem = fc
      .record({ id: fc.option(fc.nat({ max: 9_999 })), currency: fc.constantFrom('EUR', 'USD', 'JPY'), kind: fc.constantFrom(...ITEM_KINDS), amount: fc.bigInt({ min: -1_000_000_000_000n, max: 1_000_000_000_000n }), scale: fc.constantFrom(0, 2, 3), entry: fc.nat({ max: 9_999 }) })
      .map(({ entry, ...f }) => item({ ...f, booksEntryId: f.id === null ? entry : null }));
    fc.assert(
      fc.property(fc.array(anItem, { maxLength: 12 }), (open) => {
        const totals = totalOpenItems(open, toFour);
        const currencies = open.map((i) => i.currency).filter((c, n, all) => all.indexOf(c) === n);
        expect([...totals.keys()]).toEqual(currencies);
        const lines = [...totals.values()];
        expect(lines.reduce((sum, l) => sum + l.total, 0n)).toBe(open.reduce((sum, i) => sum + toFour(i.currency, i.amount, i.scale), 0n));
        expect(lines.reduce((n, l) => n + l.count, 0)).toBe(open.length);
        for (const [currency, line] of totals) {
          const own = open.filter((i) => i.currency === currency);
          expect(line.count).toBe(own.length);
          const [word, ...rest] = line.description.split(' ');
          expect(word).toBe(own.length === 1 ? 'item' : 'items');
          expect(rest.join(' ').split(', ')).toEqual(own.map(describeItem));
        }
      }),
    );
  });
});
