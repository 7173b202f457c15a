import { describe, expect, it } from 'vitest';
import {
  currencyCodes,
  generateMerchantWallets,
  generateWallets,
  isCurrencyCode,
  ISO_CURRENCIES,
  MAX_WALLETS,
  UNSAFE_BALANCE,
} from '../../src/sandbox/wallet-fixtures.js';
import { currencyDecimals } from '../../src/money/format-amount.js';

describe('sandbox wallet fixtures', () => {
  it('hands out real ISO 4217 codes, majors first, each once', () => {
    expect(ISO_CURRENCIES.length).toBeGreaterThanOrEqual(150);
    expect(new Set(ISO_CURRENCIES).size).toBe(ISO_CURRENCIES.length);
    expect(ISO_CURRENCIES.slice(0, 4)).toEqual(['USD', 'EUR', 'GBP', 'JPY']);
    expect(ISO_CURRENCIES.every(isCurrencyCode)).toBe(true);
  });

  it('continues with synthetic codes that never collide with ISO ones', () => {
    const codes = currencyCodes(ISO_CURRENCIES.length + 3);
    expect(codes.slice(-3)).toEqual(['AAA', 'AAB', 'AAC']);
    expect(new Set(currencyCodes(MAX_WALLETS)).size).toBe(MAX_WALLETS);
  });

  it('gives the same wallets for the same seed and different balances for another seed', () => {
    expect(generateWallets(12, 1)).toEqual(generateWallets(12, 1));
    expect(generateWallets(12, 2).map((w) => w.balance)).not.toEqual(generateWallets(12, 1).map((w) => w.balance));
    expect(generateWallets(12, 2).map((w) => w.currency)).toEqual(generateWallets(12, 1).map((w) => w.currency));
  });

  it('always includes 2^53 + 1 exactly, a zero and a negative balance', () => {
    for (let seed = 0; seed < 200; seed++) {
      const balances = generateWallets(3 + (seed % 20), seed).map((w) => w.balance);
      expect(balances).toContain(UNSAFE_BALANCE);
      expect(balances).toContain(0n);
      expect(balances.some((b) => b < 0n)).toBe(true);
    }
    expect(UNSAFE_BALANCE).toBe(2n ** 53n + 1n);
    expect(generateWallets(1, 7)).toEqual([{ currency: 'USD', balance: UNSAFE_BALANCE }]);
  });

  it('lists wallets sorted by currency code', () => {
    const currencies = generateWallets(40, 3).map((w) => w.currency);
    expect(currencies).toEqual([...currencies].sort());
  });

  it('scales to benchmark sizes', () => {
    const wallets = generateWallets(10_000, 1);
    expect(wallets).toHaveLength(10_000);
    expect(new Set(wallets.map((w) => w.currency)).size).toBe(10_000);
  });

  it('refuses a count it cannot satisfy', () => {
    expect(generateWallets(0, 1)).toEqual([]);
    expect(() => generateWallets(-1, 1)).toThrow(RangeError);
    expect(() => generateWallets(1.5, 1)).toThrow(/integer from 0 to 17576/);
    expect(() => generateWallets(MAX_WALLETS + 1, 1)).toThrow(RangeError);
  });

  it('recognises currency codes by shape only', () => {
    expect(isCurrencyCode('USD')).toBe(true);
    expect(isCurrencyCode('usd')).toBe(false);
    expect(isCurrencyCode('US')).toBe(false);
    expect(isCurrencyCode('USDT')).toBe(false);
  });
});

describe("a merchant's wallets (the demo)", () => {
  it("hold plausible positive balances in each currency's decimals, the same for a seed, with no edge-case figure", () => {
    const wallets = generateMerchantWallets(16, 1, currencyDecimals);
    expect(generateMerchantWallets(16, 1, currencyDecimals)).toEqual(wallets);
    for (const w of wallets) {
      const decimals = currencyDecimals(w.currency) ?? 2;
      const major = w.balance / 10n ** BigInt(decimals);
      expect(major >= 2_000n && major <= 2_500_000n * 150n, `${w.currency} ${major}`).toBe(true);
    }
    expect(wallets.some((w) => w.balance === UNSAFE_BALANCE)).toBe(false);
    // The tests' fixtures keep their big-number coverage.
    expect(generateWallets(16, 1).some((w) => w.balance === UNSAFE_BALANCE)).toBe(true);
  });
});
