import { describe, expect, it } from 'vitest';
import { localizeAmounts } from '../../src/money/localize-amounts.js';
import { DEFAULT_NUMBER_STYLE, numberStyleOf } from '../../src/money/number-style.js';

describe('amounts in stored sentences, shown in the locale', () => {
  const de = numberStyleOf('de-DE');

  it('rewrites canonical amounts with their currency in the locale', () => {
    expect(localizeAmounts('#3 default EUR break first seen on 2026-11-16: difference EUR 12,500,125.00.', de)).toBe('#3 default EUR break first seen on 2026-11-16: difference EUR 12.500.125,00.');
    expect(localizeAmounts('reconciled again: difference JPY -5,000 (was difference KWD 1.500).', de)).toBe('reconciled again: difference JPY -5.000 (was difference KWD 1,500).');
  });

  it('leaves the default style, typed text and unknown codes as written', () => {
    expect(localizeAmounts('difference EUR 1,234.56', DEFAULT_NUMBER_STYLE)).toBe('difference EUR 1,234.56');
    expect(localizeAmounts('Kunde sagt EUR 125,00', de)).toBe('Kunde sagt EUR 125,00');
    expect(localizeAmounts('ticket ABC 1,234.5 and EUR 12.5', de)).toBe('ticket ABC 1,234.5 and EUR 12.5');
    expect(localizeAmounts('EUR 1,234.567', de)).toBe('EUR 1,234.567');
  });
});
