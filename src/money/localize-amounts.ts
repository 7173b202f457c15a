import { currencyDecimals } from './format-amount.js';
import { DEFAULT_NUMBER_STYLE, type NumberStyle } from './number-style.js';

// A currency code, a space and an amount as formatMoney writes it without a locale ("EUR 1,234.56",
// "JPY -5,000"), not followed by more digits: "EUR 125,00" (already German) is left alone.
const CANONICAL_MONEY = /\b([A-Z]{3}) (-?\d{1,3}(?:,\d{3})*)(?:\.(\d+))?(?![\d.,]*\d)/g;

/**
 * Stored sentences (a case's history notes, written once in the canonical style so that JSON and
 * the audit trail never depend on who read them) shown in RECON_LOCALE's number style: "difference
 * EUR 125.00" reads "difference EUR 125,00" in de-DE. Only an ISO 4217 amount written with exactly
 * its currency's decimals is rewritten, so free text a person typed ("EUR 125,00", "ABC 12.5") stays
 * as it was written.
 */
export function localizeAmounts(text: string, style: NumberStyle): string {
  if (style.group === DEFAULT_NUMBER_STYLE.group && style.decimal === DEFAULT_NUMBER_STYLE.decimal) return text;
  return text.replace(CANONICAL_MONEY, (whole: string, currency: string, integer: string, fraction: string | undefined) => {
    const decimals = currencyDecimals(currency);
    if (decimals === null || (fraction?.length ?? 0) !== decimals) return whole;
    return `${currency} ${integer.replaceAll(',', style.group)}${fraction === undefined ? '' : `${style.decimal}${fraction}`}`;
  });
}
