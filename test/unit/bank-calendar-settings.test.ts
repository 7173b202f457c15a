import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bankBooksOn, bankCalendarOf, bankCalendarSchema, isoDay, weekdayOf } from '../../src/config/bank-calendar-settings.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wr-bank-calendar-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function calendar(settings: unknown, problems: string[] = []) {
  const parsed = bankCalendarSchema.parse(settings);
  return bankCalendarOf(parsed, path.join(dir, 'accounts.yaml'), (p) => problems.push(p));
}

describe('a bank account\'s calendar', () => {
  it('names weekdays short or long, in any case; nothing else', () => {
    expect(['Sun', 'mon', 'TUE', 'Wednesday', 'thu', 'Fri', 'saturday'].map(weekdayOf)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(weekdayOf('Sab')).toBeUndefined();
    expect(weekdayOf('')).toBeUndefined();
    expect(weekdayOf(' Sat ')).toBe(6);
  });

  it('takes only dates that exist', () => {
    expect(isoDay('2026-12-25')).toBe('2026-12-25');
    expect(isoDay('2028-02-29')).toBe('2028-02-29');
    for (const bad of ['2026-11-31', '2026-02-29', '2026-13-01', '2026-00-10', '2026-01-00', '26-12-25', '2026-12-25x']) expect(isoDay(bad)).toBeUndefined();
  });

  it('closes the weekdays and holidays it names, and no other day; without a calendar the bank books every day', () => {
    const cal = calendar({ closedWeekdays: ['Sat', 'Sun', 'sat'], holidays: ['2026-12-25'] });
    expect(cal.closedWeekdays).toEqual([0, 6]);
    // Friday 27 November 2026 to Monday 30 November, then Christmas (a Friday).
    expect(['2026-11-27', '2026-11-28', '2026-11-29', '2026-11-30', '2026-12-24', '2026-12-25'].map((d) => bankBooksOn(cal, d))).toEqual([true, false, false, true, true, false]);
    expect(bankBooksOn(undefined, '2026-11-28')).toBe(true);
  });

  it('reads a holidays file beside the accounts file: one date a line, comments and blank lines ignored, a bad line a problem naming it', () => {
    writeFileSync(path.join(dir, 'holidays.txt'), '# bank holidays\n2026-12-24\n\n  2026-12-25  # Christmas\r\n2026-12-32\n');
    const problems: string[] = [];
    const cal = calendar({ holidaysFile: 'holidays.txt', holidays: [new Date('2026-01-01T00:00:00Z')] }, problems);
    expect([...cal.holidays].sort()).toEqual(['2026-01-01', '2026-12-24', '2026-12-25']);
    expect(problems).toEqual(['holidays.txt, line 5: "2026-12-32" is not a date that exists (YYYY-MM-DD such as 2026-12-25)']);
    const missing: string[] = [];
    calendar({ holidaysFile: 'none.txt' }, missing);
    expect(missing).toEqual(['none.txt could not be read: ENOENT']);
  });

  it('refuses settings that say nothing or something else', () => {
    expect(bankCalendarSchema.safeParse({}).error?.issues[0]?.message).toBe('needs closedWeekdays, holidays or holidaysFile');
    expect(bankCalendarSchema.safeParse({ closedWeekdays: ['Sab'] }).error?.issues[0]?.message).toBe('must be a weekday: Mon, Tue, Wed, Thu, Fri, Sat or Sun');
    expect(bankCalendarSchema.safeParse({ holidays: ['2026-02-30'] }).error?.issues[0]?.message).toBe('must be a date that exists, YYYY-MM-DD such as 2026-12-25');
    expect(bankCalendarSchema.safeParse({ holidaysFile: '' }).error?.issues[0]?.message).toBe('must name a file');
    expect(bankCalendarSchema.safeParse({ closedWeekdays: ['Sat'], weekend: true }).success).toBe(false);
  });
});
