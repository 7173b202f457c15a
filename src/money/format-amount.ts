import currencyCodes from 'currency-codes';
import { DEFAULT_NUMBER_STYLE, type NumberStyle } from './number-style.js';

/**
 * Amounts for people: integers at a scale (minor units: EUR 2 decimals, JPY 0, KWD 3) shown in
 * major units, grouped in threes, computed exactly on the digits of the integer — never through a
 * float, so a 38-digit balance keeps its last cent. Shared by every human-facing format: the
 * table and HTML reports, the demo, snapshot output, cases and notifications.
 *
 * A currency's decimals are ISO 4217's (the `currency-codes` table), not the runtime's `Intl`
 * data: Intl gives IDR, HUF, PKR, COP, LAK and MGA 0 decimals and IQD 0 where ISO 4217 says 2
 * and 3, which showed amounts 100× or 1000× off.
 */

// ISO 4217 gives these codes no minor unit at all ("N.A.": metals, bond units, SDR, testing and
// "no currency"); the package writes 0 for them. They have no decimals to trust: such a wallet
// must be configured (GATEWAY_AMOUNT_DECIMALS_XAU) like an unknown code.
const NO_MINOR_UNIT = new Set(['XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XPD', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX']);

// Codes ISO 4217 published after the package's data date (currency-codes 2.2.0: 2024-06-25).
// XCG, the Caribbean guilder (amendment 176), replaces ANG with 2 decimals.
// A Map, not an object: a code such as "constructor" must find nothing, not Object's own members.
const PUBLISHED_SINCE_PACKAGE: ReadonlyMap<string, number> = new Map([['XCG', 2]]);

const decimalsCache = new Map<string, number | null>();

/**
 * The number of minor-unit digits of an ISO 4217 currency (EUR 2, JPY 0, KWD 3, IDR 2, IQD 3,
 * CLF 4), or null for a code ISO 4217 does not list or gives no minor unit (XAU): such amounts
 * stay in minor units unless a scale is given.
 */
export function currencyDecimals(currency: string | null | undefined): number | null {
  if (currency === null || currency === undefined) return null;
  const cached = decimalsCache.get(currency);
  if (cached !== undefined) return cached;
  let decimals: number | null = PUBLISHED_SINCE_PACKAGE.get(currency) ?? null;
  if (decimals === null && /^[A-Z]{3}$/.test(currency) && !NO_MINOR_UNIT.has(currency)) {
    const entry = currencyCodes.code(currency);
    decimals = entry === undefined ? null : entry.digits;
  }
  decimalsCache.set(currency, decimals);
  return decimals;
}

/** Digits grouped in threes with commas (or `separator`), exactly: 9007199254740993n → "9,007,199,254,740,993". */
export function groupDigits(value: bigint, separator = ','): string {
  const digits = (value < 0n ? -value : value).toString().replace(/\B(?=(\d{3})+(?!\d))/g, separator);
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
 * (1500n, 'JPY') → "1,500". `scale` says how many decimals the integer has when it is not the
 * currency's own (a wallet captured in whole rupiah: (1500000n, 'IDR', 0) → "1,500,000").
 * An unknown code without a scale keeps its minor units and says so: "1,500 minor units".
 * `style` (RECON_LOCALE) chooses the marks: de-DE writes "2.674.944.142.140.371,99".
 */
export function formatAmount(minor: bigint, currency: string | null | undefined, scale?: number | null, style: NumberStyle = DEFAULT_NUMBER_STYLE): string {
  const decimals = scale ?? currencyDecimals(currency);
  if (decimals === null) return `${groupDigits(minor, style.group)} minor units`;
  const sign = minor < 0n ? '-' : '';
  const [whole, fraction] = toMajorUnits(minor < 0n ? -minor : minor, decimals).split('.');
  return `${sign}${groupDigits(BigInt(whole!), style.group)}${fraction === undefined ? '' : `${style.decimal}${fraction}`}`;
}

/**
 * An amount as a spreadsheet cell of the locale reads a number: major units, the locale's decimal
 * mark, no grouping (de-DE: (123456n, 'EUR') → "1234,56"). An unknown code keeps its minor units.
 */
export function formatAmountCell(minor: bigint, currency: string | null | undefined, scale: number | null | undefined, style: NumberStyle): string {
  const decimals = scale ?? currencyDecimals(currency);
  if (decimals === null) return `${minor} minor units`;
  return toMajorUnits(minor, decimals).replace('.', style.decimal);
}

/** formatAmount for nullable amounts: null stays the empty string (a side that does not exist). */
export function formatOptionalAmount(minor: bigint | null | undefined, currency: string | null | undefined, scale?: number | null, style?: NumberStyle): string {
  return minor === null || minor === undefined ? '' : formatAmount(minor, currency, scale, style);
}

/** An amount with its currency code in front, as written in a sentence: "EUR 2,674,944,142,140,371.99". */
export function formatMoney(minor: bigint, currency: string, scale?: number | null, style?: NumberStyle): string {
  return `${currency} ${formatAmount(minor, currency, scale, style)}`;
}

/** The forms machines get beside the exact minor units: the formatted text and the decimals used (null: unknown currency, minor units). */
export function describeAmount(minor: bigint | null, currency: string | null, scale?: number | null): { formatted: string | null; decimals: number | null } {
  return { formatted: minor === null ? null : formatAmount(minor, currency, scale), decimals: scale ?? currencyDecimals(currency) };
}

/**
 * An integer at scale `from` written at scale `to` (`to` ≥ `from`), exactly: (1500000n, 0, 2) →
 * 150000000n, whole rupiah as ISO minor units. Scaling down could drop digits, so it is refused.
 */
export function rescaleAmount(amount: bigint, from: number, to: number): bigint {
  if (to < from) throw new RangeError(`an amount with ${from} decimals cannot be written with ${to} without losing digits`);
  return amount * 10n ** BigInt(to - from);
}

/**
 * A major-unit decimal as an integer at `decimals` places, exactly: ("0.01", 2) → 1n, ("1", 0)
 * → 1n, ("12.5", 2) → 1250n. Returns undefined for anything that is not a plain non-negative
 * decimal, or that has more decimals than `decimals` (it would have to be rounded).
 */
export function parseMajorAmount(text: string, decimals: number): bigint | undefined {
  const match = /^(\d{1,30})(?:\.(\d{1,18}))?$/.exec(text.trim());
  if (!match) return undefined;
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > decimals) return undefined;
  return BigInt(match[1]!) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
}
