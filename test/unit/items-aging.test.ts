import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { businessDaysBetween, isOpenOn, ITEM_AGE_BUCKETS, itemAgeBucketOf, itemStateOn, type ItemDates } from '../../src/items/item-rules.js';

// An item's age counts business days (Monday to Friday) from the date it opened; its state on a
// date is open, overdue (on every date after its expected clearing date) or cleared.

const DAY = 86_400_000;
const addDays = (date: string, n: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
const weekday = (date: string): number => new Date(`${date}T00:00:00Z`).getUTCDay();
/** The reference: walk day by day after `from` up to `to`, counting Monday to Friday. */
const weekdaysWalked = (from: string, to: string): number => {
  let n = 0;
  for (let d = addDays(from, 1); d <= to; d = addDays(d, 1)) if (weekday(d) !== 0 && weekday(d) !== 6) n++;
  return n;
};
// Dates from 2024 to 2032: leap years, year ends and every weekday to start from.
const date = fc.integer({ min: 0, max: 3_300 }).map((n) => addDays('2024-01-01', n));

describe('an item’s age in business days', () => {
  it('an item opened on a Thursday ages over the weekend by the working days only', () => {
    const opened = '2026-11-19'; // Thursday
    const week = [0, 1, 2, 3, 4, 5, 6].map((n) => addDays(opened, n)); // Thursday → Wednesday
    expect(week.map((d) => businessDaysBetween(opened, d))).toEqual([0, 1, 1, 1, 2, 3, 4]);
  });

  it('an item opened on a weekend is 0 until Monday, then 1', () => {
    expect(['2026-11-21', '2026-11-22', '2026-11-23'].map((d) => businessDaysBetween('2026-11-21', d))).toEqual([0, 0, 1]);
    expect(businessDaysBetween('2026-11-22', '2026-11-23')).toBe(1); // Sunday → Monday
    expect(businessDaysBetween('2026-11-22', '2026-11-28')).toBe(5); // Sunday → Saturday
  });

  it('counts across a year end, a leap day and a change to summer time the same way', () => {
    expect(businessDaysBetween('2026-12-31', '2027-01-04')).toBe(2); // Thursday → Monday: Friday 1 January and Monday
    expect(businessDaysBetween('2028-02-28', '2028-03-01')).toBe(2); // Monday → Wednesday over 29 February
    expect(businessDaysBetween('2026-03-27', '2026-03-30')).toBe(1); // Friday → Monday over the clock change
    expect(businessDaysBetween('2026-01-02', '2026-12-31')).toBe(259); // 261 weekdays in 2026 less 1 and 2 January
  });

  it('is the number of Mondays to Fridays after the opening date up to the date asked (property)', () => {
    fc.assert(fc.property(date, fc.integer({ min: 0, max: 800 }), (from, days) => {
      const to = addDays(from, days);
      expect(businessDaysBetween(from, to)).toBe(weekdaysWalked(from, to));
    }));
  });

  it('is 0 on the opening date and on any earlier date (property)', () => {
    fc.assert(fc.property(date, fc.integer({ min: 0, max: 800 }), (to, back) => {
      expect(businessDaysBetween(addDays(to, back), to)).toBe(0);
    }));
  });

  it('adds up over consecutive spans and never grows on a Saturday or Sunday (property)', () => {
    fc.assert(fc.property(date, fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 }), (a, x, y) => {
      const b = addDays(a, x);
      const c = addDays(b, y);
      expect(businessDaysBetween(a, b) + businessDaysBetween(b, c)).toBe(businessDaysBetween(a, c));
      const next = addDays(c, 1);
      const grows = businessDaysBetween(a, next) - businessDaysBetween(a, c);
      expect(grows).toBe(weekday(next) === 0 || weekday(next) === 6 ? 0 : 1);
    }));
  });
});

describe('aging buckets', () => {
  it('an item opened on a Monday moves bucket on its 3rd, 6th and 21st business day', () => {
    const opened = '2026-11-02'; // Monday
    const on = (d: string) => itemAgeBucketOf(businessDaysBetween(opened, d));
    expect([on('2026-11-04'), on('2026-11-05'), on('2026-11-09'), on('2026-11-10'), on('2026-11-30'), on('2026-12-01')]).toEqual([
      '0-2 days', // Wednesday: 2
      '3-5 days', // Thursday: 3
      '3-5 days', // next Monday: 5
      '6-20 days', // Tuesday: 6
      '6-20 days', // four weeks on: 20
      'over 20 days', // 21
    ]);
  });

  it('buckets follow the age in order, one step at each boundary and none between (property)', () => {
    const boundaries = [2, 5, 20]; // the last age of each bucket but the last
    fc.assert(fc.property(fc.nat({ max: 1_000 }), (age) => {
      const index = ITEM_AGE_BUCKETS.indexOf(itemAgeBucketOf(age));
      expect(index).toBe(boundaries.filter((last) => age > last).length);
      const step = ITEM_AGE_BUCKETS.indexOf(itemAgeBucketOf(age + 1)) - index;
      expect(step).toBe(boundaries.includes(age) ? 1 : 0);
    }));
  });
});

describe('an item’s state on a date: open, overdue after its expected clearing date, cleared', () => {
  it('is overdue exactly from the day after its expected clearing date, weekend or not', () => {
    const item: ItemDates = { openedOn: '2026-11-16', expectedClear: '2026-11-20', clearedOn: null }; // expected by Friday
    expect(['2026-11-19', '2026-11-20', '2026-11-21', '2026-11-23'].map((d) => itemStateOn(item, d))).toEqual(['open', 'open', 'overdue', 'overdue']);
  });

  it('cleared on its expected clearing date it is never overdue; cleared later, it is overdue until that date', () => {
    const onTime: ItemDates = { openedOn: '2026-11-16', expectedClear: '2026-11-18', clearedOn: '2026-11-18' };
    expect(['2026-11-17', '2026-11-18', '2026-11-19'].map((d) => itemStateOn(onTime, d))).toEqual(['open', 'cleared', 'cleared']);
    const late: ItemDates = { openedOn: '2026-11-16', expectedClear: '2026-11-18', clearedOn: '2026-11-20' };
    expect(['2026-11-18', '2026-11-19', '2026-11-20'].map((d) => itemStateOn(late, d))).toEqual(['open', 'overdue', 'cleared']);
  });

  it('an item cleared on the date it opened never counts', () => {
    const item: ItemDates = { openedOn: '2026-11-16', expectedClear: null, clearedOn: '2026-11-16' };
    expect(['2026-11-15', '2026-11-16', '2026-11-17'].map((d) => [isOpenOn(item, d), itemStateOn(item, d)])).toEqual([
      [false, 'cleared'],
      [false, 'cleared'],
      [false, 'cleared'],
    ]);
  });

  const itemDates = fc
    .tuple(date, fc.option(fc.integer({ min: -3, max: 30 })), fc.option(fc.integer({ min: 0, max: 40 })))
    .map(([openedOn, clearIn, clearedIn]): ItemDates => ({
      openedOn,
      expectedClear: clearIn === null ? null : addDays(openedOn, clearIn),
      clearedOn: clearedIn === null ? null : addDays(openedOn, clearedIn),
    }));

  it('day by day, an item goes not yet open → open → overdue → cleared, never back (property)', () => {
    const order = { before: 0, open: 1, overdue: 2, after: 3 } as const;
    fc.assert(fc.property(itemDates, (item) => {
      let last = -1;
      for (let n = -3; n <= 45; n++) {
        const d = addDays(item.openedOn, n);
        const state = itemStateOn(item, d);
        expect(isOpenOn(item, d)).toBe(state !== 'cleared');
        const step = state === 'cleared' ? (d < item.openedOn ? order.before : order.after) : order[state];
        expect(step).toBeGreaterThanOrEqual(last);
        last = step;
      }
    }));
  });

  it('opens on its opening date, clears on its clearing date, is overdue on the day after its expected date and not on it (property)', () => {
    fc.assert(fc.property(itemDates, (item) => {
      const stillOpen = (d: string) => item.clearedOn === null || d < item.clearedOn;
      expect(itemStateOn(item, addDays(item.openedOn, -1))).toBe('cleared');
      expect(isOpenOn(item, item.openedOn)).toBe(stillOpen(item.openedOn));
      if (item.clearedOn !== null) {
        expect(itemStateOn(item, item.clearedOn)).toBe('cleared');
        if (item.clearedOn > item.openedOn) expect(itemStateOn(item, addDays(item.clearedOn, -1))).not.toBe('cleared');
      }
      if (item.expectedClear === null) {
        for (let n = 0; n <= 45; n++) expect(itemStateOn(item, addDays(item.openedOn, n))).not.toBe('overdue');
        return;
      }
      const due = item.expectedClear;
      const dayAfter = addDays(due, 1);
      if (due >= item.openedOn && stillOpen(due)) expect(itemStateOn(item, due)).toBe('open');
      if (dayAfter >= item.openedOn && stillOpen(dayAfter)) expect(itemStateOn(item, dayAfter)).toBe('overdue');
    }));
  });
});
