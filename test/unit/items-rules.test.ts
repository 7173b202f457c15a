import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { businessDaysBetween, isOpenOn, itemAgeBucketOf, itemStateOn, outstandingAmountOf, totalsByKind, unrecordedAmountOf } from '../../src/items/item-rules.js';

describe('reconciling items: state, age and totals on a date', () => {
  it('an item counts from the date it opens until the date it clears (not on it)', () => {
    const item = { openedOn: '2026-11-16', expectedClear: '2026-11-18', clearedOn: '2026-11-20' };
    expect(['2026-11-15', '2026-11-16', '2026-11-18', '2026-11-19', '2026-11-20'].map((d) => [isOpenOn(item, d), itemStateOn(item, d)])).toEqual([
      [false, 'cleared'],
      [true, 'open'],
      [true, 'open'],
      [true, 'overdue'],
      [false, 'cleared'],
    ]);
    expect(itemStateOn({ openedOn: '2026-11-16', expectedClear: null, clearedOn: null }, '2027-01-01')).toBe('open');
  });

  it('counts business days Monday to Friday: Friday to Monday is one, a week is five, none backwards', () => {
    expect(businessDaysBetween('2026-11-20', '2026-11-23')).toBe(1); // Friday → Monday
    expect(businessDaysBetween('2026-11-16', '2026-11-16')).toBe(0);
    expect(businessDaysBetween('2026-11-17', '2026-11-16')).toBe(0);
    expect(businessDaysBetween('2026-11-16', '2026-11-23')).toBe(5);
    expect(businessDaysBetween('2026-11-21', '2026-11-22')).toBe(0); // Saturday → Sunday
    expect(businessDaysBetween('2026-11-21', '2026-11-23')).toBe(1); // Saturday → Monday
    expect(businessDaysBetween('2026-11-16', '2026-11-20')).toBe(4);
  });

  it('business days over any span: five a whole week, never more than the calendar days (property)', () => {
    const date = fc.integer({ min: 0, max: 3_000 }).map((n) => new Date(Date.UTC(2025, 0, 1) + n * 86_400_000).toISOString().slice(0, 10));
    fc.assert(
      fc.property(date, fc.integer({ min: 0, max: 400 }), (from, days) => {
        const to = new Date(Date.parse(`${from}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
        const weekLater = new Date(Date.parse(`${to}T00:00:00Z`) + 7 * 86_400_000).toISOString().slice(0, 10);
        const n = businessDaysBetween(from, to);
        expect(n).toBeLessThanOrEqual(days);
        expect(n).toBeGreaterThanOrEqual(Math.floor(days / 7) * 5);
        expect(businessDaysBetween(from, weekLater)).toBe(n + 5);
      }),
    );
  });

  it('buckets ages at 2, 5 and 20 business days', () => {
    expect([0, 2, 3, 5, 6, 20, 21].map(itemAgeBucketOf)).toEqual(['0-2 days', '0-2 days', '3-5 days', '3-5 days', '6-20 days', '6-20 days', 'over 20 days']);
  });

  it('totals open items per kind in the glossary order, leaving out kinds without items', () => {
    const totals = totalsByKind([
      { kind: 'fee', amount: -250n },
      { kind: 'outstanding', amount: 50_000n },
      { kind: 'fee', amount: -100n },
      { kind: 'in_transit', amount: 0n },
    ]);
    expect(totals).toEqual({
      byKind: [
        { kind: 'outstanding', total: 50_000n, count: 1 },
        { kind: 'in_transit', total: 0n, count: 1 },
        { kind: 'fee', total: -350n, count: 2 },
      ],
      total: 49_650n,
    });
    expect(totalsByKind([])).toEqual({ byKind: [], total: 0n });
  });

  it('signs items of entries so that books + items = bank: a books payment is its opposite, a bank line its own', () => {
    expect(outstandingAmountOf(-50_000n)).toBe(50_000n);
    expect(unrecordedAmountOf(-250n)).toBe(-250n);
  });
});
