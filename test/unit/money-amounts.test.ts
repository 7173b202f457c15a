import { describe, expect, it } from 'vitest';
import { gatewayScaleFor, referenceScaleFor, unknownDecimalsAdvice } from '../../src/money/amount-scale.js';
import {
  currencyDecimals,
  describeAmount,
  formatAmount,
  formatAmountCell,
  formatMoney,
  formatOptionalAmount,
  groupDigits,
  parseMajorAmount,
  rescaleAmount,
  toMajorUnits,
} from '../../src/money/format-amount.js';
import { DEFAULT_NUMBER_STYLE, numberStyleOf } from '../../src/money/number-style.js';

// 2^53 + 1: the first integer a float cannot hold.
const PAST_FLOAT = 9007199254740993n;

describe('a currency’s decimals (ISO 4217)', () => {
  it('gives 0, 2, 3 and 4 decimals where ISO 4217 does, including codes runtimes get wrong', () => {
    expect(['JPY', 'EUR', 'KWD', 'CLF', 'IDR', 'HUF', 'IQD', 'COP'].map((c) => currencyDecimals(c))).toEqual([0, 2, 3, 4, 2, 2, 3, 2]);
  });

  it('knows codes published after its table (XCG, 2 decimals)', () => {
    expect(currencyDecimals('XCG')).toBe(2);
    // Asked twice: the cached answer is the same.
    expect(currencyDecimals('XCG')).toBe(2);
  });

  it('gives no decimals to metals, fund units and testing codes, nor to what is not a code', () => {
    expect(['XAU', 'XAG', 'XDR', 'XTS', 'XXX'].map((c) => currencyDecimals(c))).toEqual([null, null, null, null, null]);
    expect(['eur', 'EURO', 'EU', 'E1R', 'QQQ', '', null, undefined].map((c) => currencyDecimals(c))).toEqual([null, null, null, null, null, null, null, null]);
    // An unknown answer is cached too, and stays unknown.
    expect(currencyDecimals('QQQ')).toBeNull();
  });
});

describe('amounts for people and machines', () => {
  it('groups digits exactly, with any separator, past 2^53', () => {
    expect(groupDigits(PAST_FLOAT)).toBe('9,007,199,254,740,993');
    expect(groupDigits(PAST_FLOAT, '.')).toBe('9.007.199.254.740.993');
    expect(groupDigits(-1234n, '\u202f')).toBe('-1\u202f234');
    expect(groupDigits(999n)).toBe('999');
    expect(groupDigits(-999n)).toBe('-999');
    expect(groupDigits(1000n)).toBe('1,000');
    expect(groupDigits(0n)).toBe('0');
  });

  it('writes minor units as a plain decimal, padding small amounts with zeros', () => {
    expect(toMajorUnits(PAST_FLOAT, 2)).toBe('90071992547409.93');
    expect(toMajorUnits(-PAST_FLOAT, 3)).toBe('-9007199254740.993');
    expect(toMajorUnits(5n, 2)).toBe('0.05');
    expect(toMajorUnits(-5n, 2)).toBe('-0.05');
    expect(toMajorUnits(0n, 2)).toBe('0.00');
    expect(toMajorUnits(-42n, 0)).toBe('-42');
    expect(toMajorUnits(12345n, 4)).toBe('1.2345');
  });

  it('formats at a scale other than the currency’s, and a locale’s marks', () => {
    expect(formatAmount(1500000n, 'IDR', 0)).toBe('1,500,000');
    expect(formatAmount(1500000n, 'IDR')).toBe('15,000.00');
    expect(formatAmount(1500n, 'ZZZ', 2)).toBe('15.00');
    expect(formatAmount(-1500n, 'ZZZ')).toBe('-1,500 minor units');
    const german = numberStyleOf('de-DE');
    expect(formatAmount(-267494414214037199n, 'EUR', undefined, german)).toBe('-2.674.944.142.140.371,99');
    expect(formatAmount(1500n, 'JPY', null, german)).toBe('1.500');
    expect(formatAmount(1234567n, 'AAB', null, german)).toBe('1.234.567 minor units');
    expect(formatAmount(-5n, 'KWD')).toBe('-0.005');
  });

  it('writes spreadsheet cells in the locale’s decimal mark without grouping', () => {
    const german = numberStyleOf('de-DE');
    expect(formatAmountCell(123456n, 'EUR', undefined, german)).toBe('1234,56');
    expect(formatAmountCell(-PAST_FLOAT, 'EUR', null, DEFAULT_NUMBER_STYLE)).toBe('-90071992547409.93');
    expect(formatAmountCell(1500000n, 'IDR', 0, german)).toBe('1500000');
    expect(formatAmountCell(1500n, 'ZZZ', undefined, german)).toBe('1500 minor units');
  });

  it('leaves a missing side empty and writes money with its code, at the given scale and style', () => {
    expect(formatOptionalAmount(undefined, 'EUR')).toBe('');
    expect(formatOptionalAmount(null, 'EUR')).toBe('');
    expect(formatOptionalAmount(0n, 'EUR')).toBe('0.00');
    expect(formatOptionalAmount(123456n, 'EUR', 0, numberStyleOf('de-DE'))).toBe('123.456');
    expect(formatMoney(1500000n, 'IDR', 0)).toBe('IDR 1,500,000');
    expect(formatMoney(123456n, 'EUR', undefined, numberStyleOf('de-DE'))).toBe('EUR 1.234,56');
  });

  it('tells machines the decimals it used: the scale given, else the currency’s', () => {
    expect(describeAmount(1500000n, 'IDR', 0)).toEqual({ formatted: '1,500,000', decimals: 0 });
    expect(describeAmount(null, 'KWD')).toEqual({ formatted: null, decimals: 3 });
    expect(describeAmount(7n, 'ZZZ')).toEqual({ formatted: '7 minor units', decimals: null });
  });
});

describe('exact rescaling and tolerance text', () => {
  it('writes an amount with more decimals by multiplying, and refuses fewer', () => {
    expect(rescaleAmount(1500000n, 0, 2)).toBe(150000000n);
    expect(rescaleAmount(-PAST_FLOAT, 2, 3)).toBe(-90071992547409930n);
    expect(rescaleAmount(PAST_FLOAT, 2, 2)).toBe(PAST_FLOAT);
    expect(() => rescaleAmount(150n, 2, 0)).toThrow(new RangeError('an amount with 2 decimals cannot be written with 0 without losing digits'));
  });

  it('reads a plain non-negative decimal exactly at the currency’s decimals', () => {
    expect(parseMajorAmount('0.01', 2)).toBe(1n);
    expect(parseMajorAmount('1', 0)).toBe(1n);
    expect(parseMajorAmount('12.5', 2)).toBe(1250n);
    expect(parseMajorAmount('0', 3)).toBe(0n);
    expect(parseMajorAmount(' 1.5 ', 1)).toBe(15n);
    expect(parseMajorAmount('1.000', 0)).toBe(1n);
    expect(parseMajorAmount('9007199254740993', 2)).toBe(900719925474099300n);
    expect(parseMajorAmount('1.123456789012345678', 18)).toBe(1123456789012345678n);
    expect(parseMajorAmount('9'.repeat(30), 0)).toBe(BigInt('9'.repeat(30)));
  });

  it('refuses what would need rounding, a sign, or is not a plain decimal', () => {
    for (const [text, decimals] of [
      ['1.5', 0],
      ['0.015', 2],
      ['-1', 2],
      ['+1', 2],
      ['1.', 2],
      ['.5', 2],
      ['1,5', 2],
      ['1e3', 2],
      ['x1', 2],
      ['1x', 2],
      ['', 2],
      ['9'.repeat(31), 0],
      [`0.${'1'.repeat(19)}`, 19],
    ] as const) {
      expect([text, parseMajorAmount(text, decimals)]).toEqual([text, undefined]);
    }
  });
});

describe('number styles of locales', () => {
  it('keeps 1,234.56 and commas without a locale', () => {
    expect(numberStyleOf(undefined)).toBe(DEFAULT_NUMBER_STYLE);
    expect(DEFAULT_NUMBER_STYLE).toEqual({ locale: undefined, group: ',', decimal: '.', csvDelimiter: ',' });
  });

  it('takes the marks from the locale, and semicolons for CSV where the decimal mark is a comma', () => {
    expect(numberStyleOf('de-DE')).toEqual({ locale: 'de-DE', group: '.', decimal: ',', csvDelimiter: ';' });
    expect(numberStyleOf('en-US')).toEqual({ locale: 'en-US', group: ',', decimal: '.', csvDelimiter: ',' });
    expect(numberStyleOf('fr-FR')).toEqual({ locale: 'fr-FR', group: '\u202f', decimal: ',', csvDelimiter: ';' });
    expect(numberStyleOf('de-DE')).toBe(numberStyleOf('de-DE'));
  });
});

describe('the scale of the gateway’s integers', () => {
  const config = { amounts: { unit: 'minor' as const, decimalsByCurrency: { IDR: 0, XAU: 4 } } };
  const plain = { name: 'eu-main' };

  it('takes the account’s decimals first, then the variable’s, then the unit', () => {
    expect(gatewayScaleFor(config, { name: 'id', amounts: { decimalsByCurrency: { IDR: 1 } } }, 'IDR')).toBe(1);
    expect(gatewayScaleFor(config, { name: 'id', amounts: { decimalsByCurrency: { EUR: 0 } } }, 'IDR')).toBe(0);
    expect(gatewayScaleFor(config, plain, 'IDR')).toBe(0);
    expect(gatewayScaleFor(config, plain, 'KWD')).toBe(3);
    expect(gatewayScaleFor({ amounts: { unit: 'major', decimalsByCurrency: {} } }, plain, 'KWD')).toBe(0);
    expect(gatewayScaleFor(config, { name: 'x', amounts: { unit: 'major' } }, 'KWD')).toBe(0);
    expect(gatewayScaleFor({ amounts: { unit: 'major', decimalsByCurrency: {} } }, { name: 'x', amounts: { unit: 'minor' } }, 'KWD')).toBe(3);
    // A configured scale of 0 is a scale, not a missing one.
    expect(gatewayScaleFor({ amounts: { unit: 'minor', decimalsByCurrency: { KWD: 0 } } }, plain, 'KWD')).toBe(0);
  });

  it('keeps an unknown code unread unless configured, and says what to set', () => {
    expect(gatewayScaleFor(config, plain, 'XAG')).toBeNull();
    expect(gatewayScaleFor(config, plain, 'XAU')).toBe(4);
    expect(unknownDecimalsAdvice('metals', 'XAG')).toBe(
      'XAG has no known decimals (not an ISO 4217 currency with a minor unit), so its balance is kept as the gateway\'s raw integer and not compared: set GATEWAY_AMOUNT_DECIMALS_XAG to the number of decimals the gateway\'s integer has (0 for whole units), or amountDecimals.XAG for account "metals" in RECON_ACCOUNTS_FILE, then reconcile the date again',
    );
  });

  it('compares in ISO decimals, else the configured ones (account first), else the stored scale', () => {
    expect(referenceScaleFor(config, { amounts: { decimalsByCurrency: { IDR: 0 } } }, 'IDR')).toBe(2);
    expect(referenceScaleFor(config, { amounts: { decimalsByCurrency: { XAU: 2 } } }, 'XAU')).toBe(2);
    expect(referenceScaleFor(config, { amounts: { decimalsByCurrency: { XAU: 0 } } }, 'XAU')).toBe(0);
    expect(referenceScaleFor(config, undefined, 'XAU')).toBe(4);
    expect(referenceScaleFor(config, {}, 'XAU')).toBe(4);
    expect(referenceScaleFor(config, { amounts: {} }, 'XAU')).toBe(4);
    expect(referenceScaleFor(config, { amounts: { unit: 'major' } }, 'XAU')).toBe(4);
    expect(referenceScaleFor(config, undefined, 'XAG')).toBeNull();
  });
});
