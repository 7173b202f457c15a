import { currencyDecimals, parseMajorAmount } from '../money/format-amount.js';

/**
 * A statement amount (a non-negative decimal, as the file writes it, with `.` or MT940's `,`)
 * in the currency's ISO 4217 minor units, exactly; undefined when it is not such a decimal or has
 * more decimals than the currency. Example: ("1234567890123456.78", "EUR") → 123456789012345678n.
 */
export function statementAmount(text: string, currency: string): bigint | undefined {
  const decimals = currencyDecimals(currency);
  if (decimals === null) return undefined;
  return parseMajorAmount(text.replace(',', '.').replace(/\.$/, ''), decimals);
}
