import { describe, expect, it } from 'vitest';
import { readMajorAmount, type AmountStyle } from '../../src/books/amount-text.js';

const point: AmountStyle = { decimalMark: 'point' };
const comma: AmountStyle = { decimalMark: 'comma' };
const unstated: AmountStyle = { decimalMark: 'unstated' };
/** The minor units read, or the refusal's sentence. */
const read = (text: string, decimals: number, style: AmountStyle, currency = 'EUR') => {
  const r = readMajorAmount(text, decimals, style, currency);
  return r.ok ? r.minor : r.problem;
};
const NOT_POINT = 'is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)';
const NOT_COMMA = 'is not an amount such as 1234,56, -1.234,56 or (1.234,56)';
const HINT = 'looks like a decimal comma; pass --decimal-comma (or set books.decimalMark: comma for the account)';

describe('amounts read exactly into minor units (readMajorAmount)', () => {
  it('keeps every digit past 2^53 for 0-, 2- and 3-decimal currencies', () => {
    expect(read('9007199254740993', 0, point, 'JPY')).toBe(9007199254740993n);
    expect(read('90071992547409.93', 2, point)).toBe(9007199254740993n);
    expect(read('9,007,199,254,740.993', 3, point, 'KWD')).toBe(9007199254740993n);
    expect(read('-9.007.199.254.740,993', 3, comma, 'KWD')).toBe(-9007199254740993n);
    expect(read('(90071992547409.93)', 2, point)).toBe(-9007199254740993n);
  });

  it('pads missing decimals and drops leading zeros', () => {
    expect(read('1.5', 3, point, 'KWD')).toBe(1500n);
    expect(read('12', 2, point)).toBe(1200n);
    expect(read('0.07', 2, point)).toBe(7n);
    expect(read('000123.45', 2, point)).toBe(12345n);
    expect(read('0', 2, point)).toBe(0n);
    expect(read('0.00', 2, point)).toBe(0n);
    expect(read('-0.50', 2, point)).toBe(-50n);
    expect(read('1,5', 3, comma, 'KWD')).toBe(1500n);
  });

  it('groups thousands with one separator throughout, groups of three after the first', () => {
    expect(read('1,234,567.89', 2, point)).toBe(123456789n);
    expect(read('12,345', 0, point, 'JPY')).toBe(12345n);
    expect(read('1.234.567,89', 2, comma)).toBe(123456789n);
    expect(read('1 234 567,89', 2, comma)).toBe(123456789n);
    expect(read('1\u00a0234,56', 2, comma)).toBe(123456n);
    expect(read('1\u202f234,56', 2, comma)).toBe(123456n);
    for (const text of ['1,23', '1234,567', ',123', '1,234,56', '1,,234', '1,234.', '1 234.56', '1.234']) {
      if (text === '1.234') continue;
      expect([text, read(text, 2, point)]).toEqual([text, expect.stringMatching(/^balance ".*" (is not an amount such as|looks like a decimal comma|has )/)]);
    }
    expect(read('1,23', 2, point)).toBe(`balance "1,23" ${HINT}`);
    expect(read('1234,567', 2, point)).toBe(`balance "1234,567" ${NOT_POINT}`);
    expect(read('1,234,56', 2, point)).toBe(`balance "1,234,56" ${NOT_POINT}`);
    expect(read('1.234 567,89', 2, comma)).toBe(`balance "1.234 567,89" ${NOT_COMMA}`);
    expect(read('1.23,4', 2, comma)).toBe(`balance "1.23,4" ${NOT_COMMA}`);
    expect(read('1,234', 2, comma)).toBe('balance 1,234 has 3 decimals but EUR has 2');
  });

  it('reads a minus or parentheses as negative, never both', () => {
    expect(read('(5.00)', 2, point)).toBe(-500n);
    expect(read('-5', 2, point)).toBe(-500n);
    expect(read('(-5.00)', 2, point)).toBe('balance "(-5.00)" has both a minus and parentheses');
    expect(read('-(5.00)', 2, point)).toBe(`balance "-(5.00)" ${NOT_POINT}`);
    expect(read('(5.00', 2, point)).toBe(`balance "(5.00" ${NOT_POINT}`);
    expect(read('5.00)', 2, point)).toBe(`balance "5.00)" ${NOT_POINT}`);
    expect(read('--5', 2, point)).toBe(`balance "--5" ${NOT_POINT}`);
    expect(read('()', 2, point)).toBe(`balance "()" ${NOT_POINT}`);
    expect(read('+5', 2, point)).toBe(`balance "+5" ${NOT_POINT}`);
  });

  it('refuses more decimals than the currency has, counting only significant ones', () => {
    expect(read('1.5', 0, point, 'JPY')).toBe('balance 1.5 has 1 decimal but JPY has 0');
    expect(read('1.55', 0, point, 'JPY')).toBe('balance 1.55 has 2 decimals but JPY has 0');
    expect(read('1,2345', 3, comma, 'KWD')).toBe('balance 1,2345 has 4 decimals but KWD has 3');
    expect(read('1.000', 0, point, 'JPY')).toBe(1n);
    expect(read('1.10', 1, point, 'XXX')).toBe(11n);
  });

  it('refuses more than 38 digits in minor units, but not leading zeros', () => {
    const max = '9'.repeat(36);
    expect(read(`${max}.99`, 2, point)).toBe(BigInt('9'.repeat(38)));
    expect(read(`9${max}.99`, 2, point)).toBe(`balance "9${max}.99" is too large (at most 38 digits in minor units)`);
    expect(read(`-9${max}.99`, 2, point)).toBe(`balance "-9${max}.99" is too large (at most 38 digits in minor units)`);
    expect(read(`0000${max}.99`, 2, point)).toBe(BigInt('9'.repeat(38)));
  });

  it('says more than one decimal mark, and hints at a decimal comma only where one fits', () => {
    expect(read('1.2.3', 2, point)).toBe('balance "1.2.3" has more than one decimal point');
    expect(read('1,2,3', 2, comma)).toBe('balance "1,2,3" has more than one decimal comma');
    expect(read('1.234,56', 2, point)).toBe(`balance "1.234,56" ${HINT}`);
    expect(read('1.234.567,5', 2, point)).toBe('balance "1.234.567,5" looks like a decimal comma; pass --decimal-comma (or set books.decimalMark: comma for the account)');
    expect(read('12,5', 2, point)).toBe(`balance "12,5" ${HINT}`);
    expect(read('12.345,6', 2, point)).toBe(`balance "12.345,6" ${HINT}`);
    expect(read('x1.234,56', 2, point)).toBe(`balance "x1.234,56" ${NOT_POINT}`);
    expect(read('1.234,56x', 2, point)).toBe(`balance "1.234,56x" ${NOT_POINT}`);
    expect(read('1234.567,8', 2, point)).toBe(`balance "1234.567,8" ${NOT_POINT}`);
    expect(read('12,50', 2, point)).toBe(`balance "12,50" ${HINT}`);
    // Three digits after a comma are a thousands group; four or a fraction with letters are nothing.
    expect(read('12,500', 2, point)).toBe(1250000n);
    expect(read('12,5000', 2, point)).toBe(`balance "12,5000" ${NOT_POINT}`);
    expect(read('1.2a', 2, point)).toBe(`balance "1.2a" ${NOT_POINT}`);
    expect(read('1.', 2, point)).toBe(`balance "1." ${NOT_POINT}`);
    expect(read('1234.5,6', 2, point)).toBe(`balance "1234.5,6" ${NOT_POINT}`);
    expect(read('12.34,5', 2, point)).toBe(`balance "12.34,5" ${NOT_POINT}`);
    expect(read('x12,5', 2, point)).toBe(`balance "x12,5" ${NOT_POINT}`);
    expect(read('12,5x', 2, point)).toBe(`balance "12,5x" ${NOT_POINT}`);
    expect(read('1,234,5', 2, point)).toBe(`balance "1,234,5" ${NOT_POINT}`);
    expect(read('1,5', 2, comma)).toBe(150n);
    expect(read('1.5', 2, comma)).toBe(`balance "1.5" ${NOT_COMMA}`);
    expect(read('1,5a', 2, comma)).toBe(`balance "1,5a" ${NOT_COMMA}`);
  });
});

describe('an ambiguous amount names what each mark would make of it', () => {
  const TAIL = '; say which with --decimal-point or --decimal-comma (or books.decimalMark: point|comma for the account)';

  it('gives the decimal-mark reading first for a point and for a comma', () => {
    expect(read('250.000', 0, unstated, 'JPY')).toBe(`balance "250.000" is ambiguous for JPY: 250 if "." is the decimal mark, 250000 if it groups thousands${TAIL}`);
    expect(read('1.500', 2, unstated)).toBe(`balance "1.500" is ambiguous for EUR: 1.50 if "." is the decimal mark, 1500.00 if it groups thousands${TAIL}`);
    expect(read('1,234', 3, unstated, 'KWD')).toBe(`balance "1,234" is ambiguous for KWD: 1.234 if "," is the decimal mark, 1234.000 if it groups thousands${TAIL}`);
    expect(read('-1,500', 3, unstated, 'KWD')).toBe(`balance "-1,500" is ambiguous for KWD: -1.500 if "," is the decimal mark, -1500.000 if it groups thousands${TAIL}`);
    expect(read('(0.005)', 3, unstated, 'KWD')).toBe(`balance "(0.005)" is ambiguous for KWD: -0.005 if "." is the decimal mark, -5.000 if it groups thousands${TAIL}`);
  });

  it('reads what both marks read alike, and otherwise reads with a point as before a mark was asked for', () => {
    expect(read('250', 0, unstated, 'JPY')).toBe(250n);
    expect(read('1.234.567', 0, unstated, 'JPY')).toBe('balance "1.234.567" has more than one decimal point');
    expect(read('1.234,56', 2, unstated)).toBe(`balance "1.234,56" ${HINT}`);
    expect(read('1 234,56', 2, unstated)).toBe(`balance "1 234,56" ${NOT_POINT}`);
    expect(read('1,234', 2, unstated)).toBe(123400n);
  });
});
