import { describe, expect, it } from 'vitest';
import { checkGatewayDecimals, currencySettingsOf, toleranceAtDecimals, toleranceFor } from '../../src/config/business-settings.js';

const tolerance = (byCurrency: Record<string, string>, fallback = '0.01', bps = 0) => ({ tolerance: { default: fallback, byCurrency, bps } });

describe('a tolerance cut to the currency’s minor unit (toleranceAtDecimals)', () => {
  it('rounds down what the currency cannot hold, so it never allows more than was stated', () => {
    expect(toleranceAtDecimals('0.01', 0)).toBe('0');
    expect(toleranceAtDecimals('1.5', 0)).toBe('1');
    expect(toleranceAtDecimals('0.015', 2)).toBe('0.01');
    expect(toleranceAtDecimals('1.2345', 3)).toBe('1.234');
    expect(toleranceAtDecimals('0.0001', 2)).toBe('0.00');
  });

  it('returns a tolerance that fits as written, trailing zeros included', () => {
    expect(toleranceAtDecimals('0.01', 2)).toBe('0.01');
    expect(toleranceAtDecimals('0.010', 2)).toBe('0.010');
    expect(toleranceAtDecimals('3.000', 0)).toBe('3.000');
    expect(toleranceAtDecimals('2', 0)).toBe('2');
    expect(toleranceAtDecimals('0.5', 3)).toBe('0.5');
  });
});

describe('the tolerance of one currency in minor units (toleranceFor)', () => {
  it('turns RECON_TOLERANCE into minor units of 0-, 2- and 3-decimal currencies', () => {
    const config = tolerance({});
    expect(toleranceFor(config, 'EUR', 2)).toBe(1n);
    expect(toleranceFor(config, 'KWD', 3)).toBe(10n);
    // 0.01 yen does not exist: an exact match, not a yen.
    expect(toleranceFor(config, 'JPY', 0)).toBe(0n);
    expect(toleranceFor(tolerance({}, '1.5'), 'JPY', 0)).toBe(1n);
  });

  it('prefers the currency’s own tolerance to the default', () => {
    const config = tolerance({ JPY: '1', KWD: '0.005' });
    expect(toleranceFor(config, 'JPY', 0)).toBe(1n);
    expect(toleranceFor(config, 'KWD', 3)).toBe(5n);
    expect(toleranceFor(config, 'EUR', 2)).toBe(1n);
  });

  it('takes the larger of the absolute tolerance and the basis points of |balance|, rounded down', () => {
    const config = tolerance({}, '0.01', 10);
    // 10 bps of EUR 10,000.00 is EUR 10.00.
    expect(toleranceFor(config, 'EUR', 2, 1_000_000n)).toBe(1_000n);
    expect(toleranceFor(config, 'EUR', 2, -1_000_000n)).toBe(1_000n);
    // 10 bps of EUR 19.99 is 1.999 cents: 1 cent, and the absolute cent is not exceeded.
    expect(toleranceFor(config, 'EUR', 2, 1_999n)).toBe(1n);
    expect(toleranceFor(config, 'EUR', 2, 3_999n)).toBe(3n);
    expect(toleranceFor(config, 'EUR', 2, -3_999n)).toBe(3n);
    expect(toleranceFor(config, 'EUR', 2)).toBe(1n);
    // Past 2^53 the relative part stays exact.
    expect(toleranceFor(tolerance({}, '0', 1), 'EUR', 2, 90071992547409930000n)).toBe(9007199254740993n);
  });
});

describe('per-currency settings from the environment (currencySettingsOf)', () => {
  it('reads RECON_TOLERANCE_<CODE> and GATEWAY_AMOUNT_DECIMALS_<CODE>, leaving RECON_TOLERANCE_BPS alone', () => {
    const problems: string[] = [];
    const env = { OLD_RECON_TOLERANCE_USD: 'x', OLD_GATEWAY_AMOUNT_DECIMALS_USD: 'x', RECON_TOLERANCE_JPY: '1', RECON_TOLERANCE_BPS: '5', RECON_TOLERANCE: '0.01', GATEWAY_AMOUNT_DECIMALS_IDR: '0', RECON_TOLERANCE_XAU: '0.5', GATEWAY_AMOUNT_DECIMALS_XAU: '1', RECON_TOLERANCE_EUR: undefined };
    expect(currencySettingsOf(env, problems)).toEqual({ toleranceByCurrency: { JPY: '1', XAU: '0.5' }, amountDecimals: { IDR: 0, XAU: 1 } });
    expect(problems).toEqual([]);
  });

  it('names each bad variable, its value and what it must be', () => {
    const problems: string[] = [];
    const env = {
      RECON_TOLERANCE_jpy: '1',
      RECON_TOLERANCE_EURO: '1',
      RECON_TOLERANCE_EUR: '-1',
      RECON_TOLERANCE_USD: 'abc',
      RECON_TOLERANCE_JPY: '1.5',
      RECON_TOLERANCE_KWD: '0.0005',
      RECON_TOLERANCE_GBP: '0.015',
      RECON_TOLERANCE_XAU: '0.5',
      GATEWAY_AMOUNT_DECIMALS_XAU: '0',
      GATEWAY_AMOUNT_DECIMALS_EUR: '3',
      GATEWAY_AMOUNT_DECIMALS_IDRX: '0',
    };
    const settings = currencySettingsOf(env, problems);
    expect(problems).toEqual([
      'RECON_TOLERANCE_jpy must end in a three-letter currency code such as RECON_TOLERANCE_JPY',
      'RECON_TOLERANCE_EURO must end in a three-letter currency code such as RECON_TOLERANCE_JPY',
      'RECON_TOLERANCE_EUR must be an amount in major units of EUR, 0 or more, such as 0.01 or 1, got "-1"',
      'RECON_TOLERANCE_USD must be an amount in major units of USD, 0 or more, such as 0.01 or 1, got "abc"',
      'GATEWAY_AMOUNT_DECIMALS_EUR is more decimals than EUR has in ISO 4217 (2): such amounts could not be compared with the books without rounding, got "3"',
      'GATEWAY_AMOUNT_DECIMALS_IDRX must end in a three-letter currency code such as GATEWAY_AMOUNT_DECIMALS_IDR, got "0"',
      'RECON_TOLERANCE_JPY has more decimals than JPY has (0); write it in whole units, got "1.5"',
      'RECON_TOLERANCE_KWD has more decimals than KWD has (3); write it in whole units with at most 3 decimals, got "0.0005"',
      'RECON_TOLERANCE_GBP has more decimals than GBP has (2); write it in whole units with at most 2 decimals, got "0.015"',
      'RECON_TOLERANCE_XAU has more decimals than XAU has (0); write it in whole units, got "0.5"',
    ]);
    expect(settings.amountDecimals).toEqual({ XAU: 0 });
  });

  it('does not check the decimals of a tolerance for a code whose decimals nobody knows', () => {
    const problems: string[] = [];
    expect(currencySettingsOf({ RECON_TOLERANCE_XAG: '0.000001' }, problems).toleranceByCurrency).toEqual({ XAG: '0.000001' });
    expect(problems).toEqual([]);
  });
});

describe('the gateway decimals a currency may be given (checkGatewayDecimals)', () => {
  it('accepts 0 up to the ISO decimals, and up to 18 for a code without them', () => {
    expect(checkGatewayDecimals('JPY', '0')).toBeUndefined();
    expect(checkGatewayDecimals('KWD', '3')).toBeUndefined();
    expect(checkGatewayDecimals('XAU', '18')).toBeUndefined();
    expect(checkGatewayDecimals('XAU', '09')).toBeUndefined();
  });

  it('refuses more than ISO 4217 gives, more than 18, and what is not a whole number', () => {
    expect(checkGatewayDecimals('JPY', '1')).toBe('is more decimals than JPY has in ISO 4217 (0): such amounts could not be compared with the books without rounding');
    const notWhole = 'must be a whole number of decimals from 0 to 18 (0: the gateway sends whole units)';
    expect(['19', '99', '100', '-1', '1.5', '', 'a1', '1a'].map((v) => checkGatewayDecimals('XAU', v))).toEqual(Array(8).fill(notWhole));
    expect(checkGatewayDecimals('xau', '2')).toBe('must end in a three-letter currency code such as GATEWAY_AMOUNT_DECIMALS_IDR');
    expect(checkGatewayDecimals('XAUX', '2')).toBe('must end in a three-letter currency code such as GATEWAY_AMOUNT_DECIMALS_IDR');
    expect(checkGatewayDecimals('AXAU', '2')).toBe('must end in a three-letter currency code such as GATEWAY_AMOUNT_DECIMALS_IDR');
  });
});
