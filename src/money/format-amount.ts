/**
 * Amounts for people: minor units (the integers stored everywhere) shown in major units with the
 * currency's own number of decimals (EUR 2, JPY 0, KWD 3), grouped in threes, computed exactly on
 * the digits of the integer — never through a float, so a 38-digit balance keeps its last cent.
 * Shared by every human-facing format: the table and HTML reports, the demo, snapshot output and
 * notification digests.
 */

// Intl answers for any well-formed code (an unknown "AAB" gets 2 decimals): only the codes it
// lists as supported currencies are trusted with a decimal point.
const KNOWN_CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const decimalsCache = new Map<string, number | null>();

/**
 * The number of minor-unit digits of an ISO 4217 currency as `Intl.NumberFormat` knows it
 * (EUR 2, JPY 0, KWD 3), or null for a code it does not know: such amounts stay in minor units.
 */
export function currencyDecimals(currency: string | null | undefined): number | null {
  if (currency === null || currency === undefined) return null;
  const cached = decimalsCache.get(currency);
  if (cached !== undefined) return cached;
  const decimals = KNOWN_CURRENCIES.has(currency)
    ? (new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? null)
    : null;
  decimalsCache.set(currency, decimals);
  return decimals;
}

/** Digits grouped in threes with commas, exactly: 9007199254740993n → "9,007,199,254,740,993". */
export function groupDigits(value: bigint): string {
  const digits = (value < 0n ? -value : value).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return value < 0n ? `-${digits}` : digits;
}

/**
 * Minor units as a major-unit number without grouping, exactly: (123456n, 2) → "1234.56",
 * (-5n, 3) → "-0.005", (42n, 0) → "42". For machines that want a decimal, not a string of cents.
 */
export function toMajorUnits(minor: bigint, decimals: number): string {
  const sign = minor < 0n ? '-' : '';
  const digits = (minor < 0n ? -minor : minor).toString();
  if (decimals === 0) return `${sign}${digits}`;
  const padded = digits.padStart(decimals + 1, '0');
  return `${sign}${padded.slice(0, -decimals)}.${padded.slice(-decimals)}`;
}

/**
 * An amount as people read it, without the currency code: major units, grouped, with the
 * currency's decimals: (267494414214037199n, 'EUR') → "2,674,944,142,140,371.99",
 * (1500n, 'JPY') → "1,500". An unknown code keeps its minor units and says so: "1,500 minor units".
 */
export function formatAmount(minor: bigint, currency: string | null | undefined): string {
  const decimals = currencyDecimals(currency);
  if (decimals === null) return `${groupDigits(minor)} minor units`;
  const sign = minor < 0n ? '-' : '';
  const [whole, fraction] = toMajorUnits(minor < 0n ? -minor : minor, decimals).split('.');
  return `${sign}${groupDigits(BigInt(whole!))}${fraction === undefined ? '' : `.${fraction}`}`;
}

/** formatAmount for nullable amounts: null stays the empty string (a side that does not exist). */
export function formatOptionalAmount(minor: bigint | null | undefined, currency: string | null | undefined): string {
  return minor === null || minor === undefined ? '' : formatAmount(minor, currency);
}

/** An amount with its currency code in front, as written in a sentence: "EUR 2,674,944,142,140,371.99". */
export function formatMoney(minor: bigint, currency: string): string {
  return `${currency} ${formatAmount(minor, currency)}`;
}

/** The forms machines get beside the exact minor units: the formatted text and the decimals used (null: unknown currency, minor units). */
export function describeAmount(minor: bigint | null, currency: string | null): { formatted: string | null; decimals: number | null } {
  return { formatted: minor === null ? null : formatAmount(minor, currency), decimals: currencyDecimals(currency) };
}
