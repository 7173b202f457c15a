import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { formatLocalTime, formatLocalTimeText, offsetText } from '../../src/business-date/local-time.js';
import { formatAmount, formatAmountCell } from '../../src/money/format-amount.js';
import { numberStyleOf } from '../../src/money/number-style.js';

describe('times as a person in the business zone reads them', () => {
  it('writes wall time with the zone: CET in winter, CEST in summer, an offset where the zone has no short name', () => {
    expect(formatLocalTime(new Date('2026-11-27T05:29:00Z'), 'Europe/Berlin')).toBe('2026-11-27 06:29 CET');
    expect(formatLocalTime(new Date('2026-07-27T05:29:00Z'), 'Europe/Berlin')).toBe('2026-07-27 07:29 CEST');
    expect(formatLocalTime(new Date('2026-11-27T05:29:00Z'), 'America/New_York')).toBe('2026-11-27 00:29 EST');
    expect(formatLocalTime(new Date('2026-11-27T05:29:00Z'), 'Asia/Kolkata')).toBe('2026-11-27 10:59 +05:30');
    expect(formatLocalTime(new Date('2026-11-27T05:29:00Z'), 'UTC')).toBe('2026-11-27 05:29 UTC');
    expect(offsetText(new Date('2026-11-27T05:29:00Z'), 'America/St_Johns')).toBe('-03:30');
  });

  it('crosses midnight into the local date, gives seconds or the time alone on request, and leaves text that is no instant alone', () => {
    expect(formatLocalTime(new Date('2026-11-27T23:30:15Z'), 'Europe/Berlin', { seconds: true })).toBe('2026-11-28 00:30:15 CET');
    expect(formatLocalTime(new Date('2026-11-27T23:30:15Z'), 'Europe/Berlin', { timeOnly: true })).toBe('00:30 CET');
    // The clocks go back at 03:00 CEST on 25 October 2026: the same wall time twice, told apart by the zone.
    expect(formatLocalTime(new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25 02:30 CEST');
    expect(formatLocalTime(new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25 02:30 CET');
    expect(formatLocalTimeText('2026-11-21T00:00:00.000Z', 'Europe/Berlin')).toBe('2026-11-21 01:00 CET');
    expect(formatLocalTimeText('', 'Europe/Berlin')).toBe('');
  });
});

describe('amounts as a locale writes them (RECON_LOCALE)', () => {
  it('groups and marks decimals the locale’s way, exactly beyond 2^53; without a locale as before', () => {
    const de = numberStyleOf('de-DE');
    expect(de).toMatchObject({ group: '.', decimal: ',', csvDelimiter: ';' });
    expect(numberStyleOf('en-GB')).toMatchObject({ group: ',', decimal: '.', csvDelimiter: ',' });
    expect(formatAmount(900_719_925_474_099_312n, 'EUR', undefined, de)).toBe('9.007.199.254.740.993,12');
    expect(formatAmount(-1_500n, 'JPY', undefined, de)).toBe('-1.500');
    expect(formatAmount(123_456n, 'EUR')).toBe('1,234.56');
  });

  it('writes spreadsheet cells without grouping and with the locale’s decimal mark', () => {
    const de = numberStyleOf('de-DE');
    expect(formatAmountCell(900_719_925_474_099_312n, 'EUR', undefined, de)).toBe('9007199254740993,12');
    expect(formatAmountCell(-5n, 'KWD', undefined, de)).toBe('-0,005');
    expect(formatAmountCell(1_500n, 'JPY', undefined, de)).toBe('1500');
    expect(formatAmountCell(1_500n, 'XAU', undefined, de)).toBe('1500 minor units');
  });
});

describe('RECON_LOCALE', () => {
  it('is read from the environment, and a tag the runtime cannot format numbers for is refused naming the variable', () => {
    expect(loadConfig({ env: { RECON_LOCALE: 'de-DE' }, cwd: tmpdir(), ignoreDotEnv: true }).locale).toBe('de-DE');
    expect(loadConfig({ env: {}, cwd: tmpdir(), ignoreDotEnv: true }).locale).toBeUndefined();
    expect(() => loadConfig({ env: { RECON_LOCALE: 'german!' }, cwd: tmpdir(), ignoreDotEnv: true })).toThrow(/RECON_LOCALE must be a BCP 47 locale such as en-US, en-GB or de-DE/);
  });
});
