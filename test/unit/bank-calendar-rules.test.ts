import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveAccounts } from '../../src/config/accounts.js';
import { bankBooksOn, bankCalendarOf, bankCalendarSchema, isoDay, weekdayOf, type BankCalendar } from '../../src/config/bank-calendar-settings.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wr-bank-calendar-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMES = [
  ['Sun', 'Sunday'],
  ['Mon', 'Monday'],
  ['Tue', 'Tuesday'],
  ['Wed', 'Wednesday'],
  ['Thu', 'Thursday'],
  ['Fri', 'Friday'],
  ['Sat', 'Saturday'],
] as const;

/** The problems of an accounts file holding one bank account with this calendar (YAML flow mapping). */
function accountsProblems(calendar: string, files: Record<string, string> = {}, sub = ''): string[] {
  const where = mkdtempSync(path.join(dir, 'acc-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(where, name)), { recursive: true });
    writeFileSync(path.join(where, name), text);
  }
  mkdirSync(path.join(where, sub || '.'), { recursive: true });
  writeFileSync(path.join(where, sub, 'accounts.yaml'), `bankAccounts:\n  - { name: us-bank, accountId: "0975312468", currency: USD, calendar: ${calendar} }\n`);
  return resolveAccounts({ RECON_ACCOUNTS_FILE: path.join(sub, 'accounts.yaml') }, where, 'sandbox').problems;
}

function accountsCalendar(calendar: string, files: Record<string, string> = {}): BankCalendar | undefined {
  const where = mkdtempSync(path.join(dir, 'acc-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(where, name), text);
  writeFileSync(path.join(where, 'accounts.yaml'), `bankAccounts:\n  - { name: us-bank, accountId: "0975312468", currency: USD, calendar: ${calendar} }\n`);
  const resolved = resolveAccounts({ RECON_ACCOUNTS_FILE: 'accounts.yaml' }, where, 'sandbox');
  expect(resolved.problems).toEqual([]);
  return resolved.bankAccounts[0]!.calendar;
}

describe('weekday names (weekdayOf)', () => {
  it('takes every weekday by its three letters or its full name, in any case, spaces around ignored', () => {
    NAMES.forEach(([short, full], day) => {
      for (const name of [short, full, short.toUpperCase(), full.toLowerCase(), ` ${full.toUpperCase()}\t`]) expect(weekdayOf(name)).toBe(day);
    });
  });

  it('takes nothing else', () => {
    for (const name of ['Sa', 'Satur', 'Sundays', 'S un', '0', '6', 'Samstag', '', ' ']) expect(weekdayOf(name)).toBeUndefined();
  });
});

describe('holiday dates (isoDay)', () => {
  it('takes every day of the calendar as written', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2199-12-31T00:00:00Z'), noInvalidDate: true }), (date) => {
        const iso = date.toISOString().slice(0, 10);
        expect(isoDay(iso)).toBe(iso);
      }),
    );
  });

  it('refuses the day after a month\'s last, month 0 and 13, day 0, and what is not YYYY-MM-DD', () => {
    for (const text of ['2026-01-32', '2026-04-31', '2026-02-29', '2100-02-29', '2026-12-32', '2026-13-01', '2026-00-01', '2026-06-00', '2026-6-01', ' 2026-06-01', '2026-06-01 ', '202-06-01', '12026-06-01', '2026.06.01']) {
      expect(isoDay(text)).toBeUndefined();
    }
    for (const text of ['2026-01-01', '2026-01-31', '2026-12-01', '2026-12-31', '2024-02-29', '2000-02-29']) expect(isoDay(text)).toBe(text);
  });
});

describe('calendar settings (bankCalendarSchema)', () => {
  it('needs at least one of closedWeekdays, holidays, holidaysFile; each alone will do', () => {
    for (const settings of [{ closedWeekdays: [] }, { holidays: [] }, { holidaysFile: 'h.txt' }, { closedWeekdays: ['Sat'], holidays: ['2026-12-25'], holidaysFile: 'h.txt' }]) {
      expect(bankCalendarSchema.safeParse(settings).success).toBe(true);
    }
  });

  it('reads a holiday the YAML reader made a date as the day it names; an invalid date or a number is refused', () => {
    expect(bankCalendarSchema.parse({ holidays: [new Date('2026-12-25T00:00:00Z'), '2026-12-26'] }).holidays).toEqual(['2026-12-25', '2026-12-26']);
    expect(bankCalendarSchema.safeParse({ holidays: [new Date('x')] }).success).toBe(false);
    expect(bankCalendarSchema.safeParse({ holidays: [20261225] }).success).toBe(false);
  });
});

describe('a calendar from settings (bankCalendarOf)', () => {
  const of = (settings: unknown, accountsFile = path.join(dir, 'accounts.yaml')) => {
    const problems: string[] = [];
    const calendar = bankCalendarOf(bankCalendarSchema.parse(settings), accountsFile, (p) => problems.push(p));
    return { calendar, problems };
  };

  it('closes the named weekdays, each once, in weekday order', () => {
    expect(of({ closedWeekdays: ['saturday', 'Fri', 'SUN', 'fri'] }).calendar).toEqual({ closedWeekdays: [0, 5, 6], holidays: new Set() });
    expect(of({ holidays: ['2026-12-25'] }).calendar).toEqual({ closedWeekdays: [], holidays: new Set(['2026-12-25']) });
  });

  it('finds the holidays file beside the accounts file, not in the working directory', () => {
    mkdirSync(path.join(dir, 'bank'), { recursive: true });
    writeFileSync(path.join(dir, 'bank', 'us-holidays.txt'), '2026-07-03\n2026-11-26 # Thanksgiving\n');
    const { calendar, problems } = of({ holidaysFile: 'us-holidays.txt', holidays: ['2026-12-25'] }, path.join(dir, 'bank', 'accounts.yaml'));
    expect(problems).toEqual([]);
    expect([...calendar.holidays].sort()).toEqual(['2026-07-03', '2026-11-26', '2026-12-25']);
  });

  it('names each bad line of the holidays file, quoting at most 40 characters of it', () => {
    const long = `2026-12-25 ${'x'.repeat(60)}`;
    writeFileSync(path.join(dir, 'bad-holidays.txt'), `2026-12-24\n\t\n# only a comment\nChristmas\n${long}\n2026-02-29  # not in 2026\n`);
    const { calendar, problems } = of({ holidaysFile: 'bad-holidays.txt' });
    expect(problems).toEqual([
      'bad-holidays.txt, line 4: "Christmas" is not a date that exists (YYYY-MM-DD such as 2026-12-25)',
      `bad-holidays.txt, line 5: ${JSON.stringify(long.slice(0, 40))} is not a date that exists (YYYY-MM-DD such as 2026-12-25)`,
      'bad-holidays.txt, line 6: "2026-02-29" is not a date that exists (YYYY-MM-DD such as 2026-12-25)',
    ]);
    expect([...calendar.holidays]).toEqual(['2026-12-24']);
  });

  it('a holidays file that cannot be read is a problem naming it and why, and adds no holiday', () => {
    mkdirSync(path.join(dir, 'a-directory'), { recursive: true });
    const { calendar, problems } = of({ holidaysFile: 'a-directory', holidays: ['2026-12-25'] });
    expect(problems).toEqual(['a-directory could not be read: EISDIR']);
    expect([...calendar.holidays]).toEqual(['2026-12-25']);
  });
});

describe('the days a bank books (bankBooksOn)', () => {
  it('is closed on its weekdays and holidays only, the weekday of the date itself in any time zone', () => {
    const calendar = { closedWeekdays: [0, 6], holidays: new Set(['2026-12-25']) };
    // Saturday 28 November 2026 to Sunday 6 December.
    const days = ['2026-11-28', '2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02', '2026-12-03', '2026-12-04', '2026-12-05', '2026-12-06'];
    expect(days.map((d) => bankBooksOn(calendar, d))).toEqual([false, false, true, true, true, true, true, false, false]);
    expect(bankBooksOn(calendar, '2026-12-25')).toBe(false);
    expect(bankBooksOn({ closedWeekdays: [], holidays: new Set() }, '2026-11-28')).toBe(true);
  });

  it('on any date: closed exactly when its weekday is closed or it is a holiday; without a calendar, open', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.uniqueArray(fc.integer({ min: 0, max: 6 })),
        fc.boolean(),
        (date, closedWeekdays, holiday) => {
          const iso = date.toISOString().slice(0, 10);
          const calendar = { closedWeekdays, holidays: new Set(holiday ? [iso] : ['1999-01-01']) };
          expect(bankBooksOn(calendar, iso)).toBe(!holiday && !closedWeekdays.includes(date.getUTCDay()));
          expect(bankBooksOn(undefined, iso)).toBe(true);
        },
      ),
    );
  });
});

describe('a calendar in the accounts file', () => {
  it('is read with the bank account, dates as YAML writes them', () => {
    const calendar = accountsCalendar('{ closedWeekdays: [Sat, Sun], holidays: [2026-12-25, "2026-12-31"], holidaysFile: holidays.txt }', { 'holidays.txt': '2026-07-03\n' });
    expect(calendar?.closedWeekdays).toEqual([0, 6]);
    expect([...calendar!.holidays].sort()).toEqual(['2026-07-03', '2026-12-25', '2026-12-31']);
  });

  it('refuses a wrong weekday, holiday or file naming the place in the accounts file', () => {
    expect(accountsProblems('{ closedWeekdays: [Sat, Sonntag] }')).toEqual(['RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0.calendar.closedWeekdays.1: must be a weekday: Mon, Tue, Wed, Thu, Fri, Sat or Sun']);
    expect(accountsProblems('{ holidays: [2026-12-25, 2026-11-31] }')).toEqual(['RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0.calendar.holidays.1: must be a date that exists, YYYY-MM-DD such as 2026-12-25']);
    expect(accountsProblems('{ holidaysFile: "" }')).toEqual(['RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0.calendar.holidaysFile: must name a file']);
    expect(accountsProblems('{}')).toEqual(['RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0.calendar: needs closedWeekdays, holidays or holidaysFile']);
    expect(accountsProblems('{ closedWeekdays: [Sat], weekends: true }')[0]).toMatch(/^RECON_ACCOUNTS_FILE \(accounts\.yaml\) at bankAccounts\.0\.calendar: .*weekends/);
  });

  it('names the holidays file and its line, the file found beside the accounts file', () => {
    expect(accountsProblems('{ holidaysFile: holidays.txt }', { 'conf/holidays.txt': '2026-12-25\n2026-12-32\n' }, 'conf')).toEqual([
      'RECON_ACCOUNTS_FILE (conf/accounts.yaml) at bankAccounts.0.calendar.holidaysFile: holidays.txt, line 2: "2026-12-32" is not a date that exists (YYYY-MM-DD such as 2026-12-25)',
    ]);
    expect(accountsProblems('{ holidaysFile: missing.txt }')).toEqual(['RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0.calendar.holidaysFile: missing.txt could not be read: ENOENT']);
  });
});
