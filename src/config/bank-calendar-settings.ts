import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';

/**
 * The days a bank books, as its accounts file entry names them: weekdays it is closed on
 * (0 Sunday … 6 Saturday) and holidays (`YYYY-MM-DD`). A day it is closed gets no statement.
 */
export interface BankCalendar {
  readonly closedWeekdays: readonly number[];
  readonly holidays: ReadonlySet<string>;
}

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const FULL_NAMES = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

/** The weekday a name means (Sat, sat, Saturday), or undefined. */
export function weekdayOf(name: string): number | undefined {
  const lower = name.trim().toLowerCase();
  const short = WEEKDAYS.indexOf(lower as (typeof WEEKDAYS)[number]);
  if (short >= 0) return short;
  const full = FULL_NAMES.indexOf(lower as (typeof FULL_NAMES)[number]);
  return full >= 0 ? full : undefined;
}

/** `YYYY-MM-DD` naming a day of the calendar (no 31 November), else undefined. */
export function isoDay(text: string): string | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (month < 1 || month > 12 || day < 1) return undefined;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate() ? text : undefined;
}

// A YAML 1.1 reader turns 2026-12-25 into a Date: read as the day it names (UTC).
const dayText = z.preprocess((v) => (v instanceof Date && !Number.isNaN(v.getTime()) ? v.toISOString().slice(0, 10) : v), z.string());

export const bankCalendarSchema = z
  .object({
    closedWeekdays: z.array(z.string().refine((v) => weekdayOf(v) !== undefined, 'must be a weekday: Mon, Tue, Wed, Thu, Fri, Sat or Sun')).optional(),
    holidays: z.array(dayText.refine((v) => isoDay(v) !== undefined, 'must be a date that exists, YYYY-MM-DD such as 2026-12-25')).optional(),
    holidaysFile: z.string().min(1, 'must name a file').optional(),
  })
  .strict()
  .refine((c) => c.closedWeekdays !== undefined || c.holidays !== undefined || c.holidaysFile !== undefined, { message: 'needs closedWeekdays, holidays or holidaysFile' });

/**
 * A bank account's calendar from its settings; a holidays file is found beside the accounts file
 * that names it: one date (`YYYY-MM-DD`) a line, `#` comments and blank lines ignored. What is
 * wrong with the file is a problem naming it and the line.
 */
export function bankCalendarOf(settings: z.infer<typeof bankCalendarSchema>, accountsFile: string, problem: (text: string) => void): BankCalendar {
  const holidays = new Set(settings.holidays ?? []);
  if (settings.holidaysFile !== undefined) {
    const file = path.resolve(path.dirname(accountsFile), settings.holidaysFile);
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      problem(`${settings.holidaysFile} could not be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    for (const [index, raw] of text.split(/\r?\n/).entries()) {
      const line = raw.replace(/#.*$/, '').trim();
      if (line === '') continue;
      if (isoDay(line) === undefined) problem(`${settings.holidaysFile}, line ${index + 1}: ${JSON.stringify(line.slice(0, 40))} is not a date that exists (YYYY-MM-DD such as 2026-12-25)`);
      else holidays.add(line);
    }
  }
  return { closedWeekdays: [...new Set((settings.closedWeekdays ?? []).map((d) => weekdayOf(d)!))].sort(), holidays };
}

/** Whether the bank books on a date: not a weekday it is closed on, not one of its holidays. */
export function bankBooksOn(calendar: BankCalendar | undefined, date: string): boolean {
  if (calendar === undefined) return true;
  if (calendar.holidays.has(date)) return false;
  return !calendar.closedWeekdays.includes(new Date(`${date}T00:00:00Z`).getUTCDay());
}
