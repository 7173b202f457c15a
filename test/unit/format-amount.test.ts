import { describe, expect, it } from 'vitest';
import { currencyDecimals, describeAmount, formatAmount, formatMoney, formatOptionalAmount, groupDigits, toMajorUnits } from '../../src/money/format-amount.js';

describe('amounts for people', () => {
  it('knows no currency by the name of an object member: constructor, toString and __proto__ have no decimals', () => {
    expect(['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf'].map((code) => currencyDecimals(code))).toEqual([null, null, null, null, null]);
    expect(currencyDecimals('XCG')).toBe(2);
  });

  it('knows each currency’s decimals from Intl, and no decimals for codes it does not know', () => {
    expect([currencyDecimals('EUR'), currencyDecimals('JPY'), currencyDecimals('KWD'), currencyDecimals('AAB'), currencyDecimals(null)]).toEqual([2, 0, 3, null, null]);
  });

  it.each([
    [267494414214037199n, 'EUR', '2,674,944,142,140,371.99'],
    [99999999999999999999999999999999999999n, 'EUR', '999,999,999,999,999,999,999,999,999,999,999,999.99'],
    [5n, 'EUR', '0.05'],
    [-5n, 'EUR', '-0.05'],
    [-123456n, 'EUR', '-1,234.56'],
    [0n, 'EUR', '0.00'],
    [1500n, 'JPY', '1,500'],
    [-1234567n, 'JPY', '-1,234,567'],
    [1234567n, 'KWD', '1,234.567'],
    [7n, 'KWD', '0.007'],
    [1234567n, 'AAB', '1,234,567 minor units'],
  ])('%s %s reads %s', (minor, currency, text) => {
    expect(formatAmount(minor, currency)).toBe(text);
  });

  it('keeps exact decimals for machines and says which decimals it used', () => {
    expect(toMajorUnits(9007199254740993n, 2)).toBe('90071992547409.93');
    expect(toMajorUnits(-5n, 3)).toBe('-0.005');
    expect(toMajorUnits(42n, 0)).toBe('42');
    expect(describeAmount(-50n, 'USD')).toEqual({ formatted: '-0.50', decimals: 2 });
    expect(describeAmount(null, 'ZZZ')).toEqual({ formatted: null, decimals: null });
  });

  it('writes money with its code, empty for a missing side, and groups digits exactly', () => {
    expect(formatMoney(267494414214037199n, 'EUR')).toBe('EUR 2,674,944,142,140,371.99');
    expect(formatOptionalAmount(null, 'EUR')).toBe('');
    expect(groupDigits(-9007199254740993n)).toBe('-9,007,199,254,740,993');
  });
});
