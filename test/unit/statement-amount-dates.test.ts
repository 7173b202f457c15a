import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { statementAmount } from '../../src/statements/statement-amount.js';
import { calendarDate } from '../../src/statements/statement-dates.js';

// ISO 4217 minor units of the currencies these tests write amounts in.
const DECIMALS = { JPY: 0, KRW: 0, EUR: 2, USD: 2, GBP: 2, KWD: 3, BHD: 3, JOD: 3, CLF: 4 } as const;
type Code = keyof typeof DECIMALS;
const codes = Object.keys(DECIMALS) as Code[];

/** Minor units written as a statement writes them: whole part, the decimal mark, every decimal of the currency. */
function written(minor: bigint, decimals: number, mark: ',' | '.'): string {
  if (decimals === 0) return `${minor}`;
  const digits = minor.toString().padStart(decimals + 1, '0');
  return `${digits.slice(0, -decimals)}${mark}${digits.slice(-decimals)}`;
}

describe('a statement amount in minor units, exactly (statementAmount)', () => {
  it('reads the decimal point or MT940\'s decimal comma, at every ISO 4217 scale', () => {
    expect(statementAmount('1234567890123456.78', 'EUR')).toBe(123_456_789_012_345_678n);
    expect(statementAmount('1000,880', 'KWD')).toBe(1_000_880n);
    expect(statementAmount('0,125', 'KWD')).toBe(125n);
    expect(statementAmount('1,010', 'KWD')).toBe(1_010n);
    expect(statementAmount('12345', 'JPY')).toBe(12_345n);
    expect(statementAmount('0.0001', 'CLF')).toBe(1n);
    expect(statementAmount('7,5', 'EUR')).toBe(750n);
  });

  it('reads MT940\'s amount that ends in its decimal comma (or a point) as whole units', () => {
    expect(statementAmount('12,', 'EUR')).toBe(1_200n);
    expect(statementAmount('12.', 'USD')).toBe(1_200n);
    expect(statementAmount('500,', 'JPY')).toBe(500n);
    // Only a mark at the end is dropped: one inside stays a decimal mark.
    expect(statementAmount('12.5', 'EUR')).toBe(1_250n);
    expect(statementAmount('1,5', 'BHD')).toBe(1_500n);
  });

  it('refuses more decimals than the currency has, never rounding', () => {
    expect(statementAmount('12474,505', 'EUR')).toBeUndefined();
    expect(statementAmount('1000,8805', 'KWD')).toBeUndefined();
    expect(statementAmount('1,5', 'JPY')).toBeUndefined();
    expect(statementAmount('0.00001', 'CLF')).toBeUndefined();
  });

  it('refuses a currency without ISO 4217 minor units, and what is not a plain non-negative decimal', () => {
    for (const currency of ['XYZ', 'XAU', 'eur', '']) expect(statementAmount('12', currency)).toBeUndefined();
    for (const text of ['-5', '+5', '1,000,00', '1.000,00', '', ',5x', '5e3', '0x10']) expect(statementAmount(text, 'EUR')).toBeUndefined();
  });

  it('reads back every amount written with the currency\'s decimals, with either mark', () => {
    fc.assert(
      fc.property(fc.constantFrom(...codes), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.constantFrom(',', '.'), (code, minor, mark) => {
        expect(statementAmount(written(minor, DECIMALS[code], mark), code)).toBe(minor);
      }),
    );
  });

  it('refuses every amount with one more decimal than the currency has, unless that decimal is 0', () => {
    fc.assert(
      fc.property(fc.constantFrom(...codes), fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 9 }), (code, minor, extra) => {
        const decimals = DECIMALS[code];
        const text = decimals === 0 ? `${minor}.${extra}` : `${written(minor, decimals, ',')}${extra}`;
        expect(statementAmount(text, code)).toBe(extra === 0 ? minor : undefined);
      }),
    );
  });
});

describe('a date of the calendar (calendarDate)', () => {
  it('takes every day that exists, 29 February in leap years only', () => {
    for (const day of ['2026-01-01', '2026-11-30', '2026-12-31', '2028-02-29', '2000-02-29', '2026-02-28', '2026-04-30']) expect(calendarDate(day)).toBe(day);
  });

  it('refuses a day past the end of its month, month 0 or 13, day 0, and what is not YYYY-MM-DD', () => {
    for (const day of ['2026-11-31', '2026-02-29', '2100-02-29', '2026-04-31', '2026-12-32', '2026-13-01', '2026-00-10', '2026-01-00', '2026-1-01', '2026-01-1', '2026-01-01x', 'x2026-01-01', '20261-01-01', '2026/01/01', '']) {
      expect(calendarDate(day)).toBeUndefined();
    }
  });

  it('agrees with the calendar on every day, and refuses the day after each month\'s last', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2199-12-31T00:00:00Z'), noInvalidDate: true }), (date) => {
        const iso = date.toISOString().slice(0, 10);
        expect(calendarDate(iso)).toBe(iso);
        const last = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
        expect(calendarDate(`${iso.slice(0, 8)}${String(last + 1).padStart(2, '0')}`)).toBeUndefined();
      }),
    );
  });
});
