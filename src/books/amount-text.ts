/**
 * Amounts as finance teams write them, read exactly into minor units: `1234.56`, `-1234.56`,
 * `1,234.56`, `(1,234.56)` (accounting negative) and, with a decimal comma, `1.234,56`. Pure
 * string work on the digits, never a float, so a 38-digit balance keeps its last cent.
 */

export interface AmountStyle {
  /**
   * `comma`: `1.234,56` (a comma before the decimals, `.` or a space groups thousands); `point`:
   * `1,234.56`; `unstated`: nobody said, so an amount whose separator could be read either way
   * for its currency (`250.000` for JPY, `1.500` for EUR, `1,234` for KWD) is refused, not guessed.
   */
  decimalMark: 'comma' | 'point' | 'unstated';
}

export type AmountReading = { ok: true; minor: bigint } | { ok: false; problem: string; ambiguous?: true };

// numeric(38,0) holds the stored minor units.
const MAX_DIGITS = 38;

const DECIMAL_COMMA_HINT = 'looks like a decimal comma; pass --decimal-comma (or set books.decimalMark: comma for the account)';

/**
 * Reads a major-unit amount for a currency with `decimals` minor digits. More decimals than the
 * currency has are refused (never rounded); trailing zeros beyond them carry nothing and are
 * accepted (`1234.5600` from a numeric(18,4) ledger column is 1234.56). With the decimal mark
 * unstated, an amount that reads as two different valid amounts (one per mark) is refused.
 *
 * @example readMajorAmount('(1,234.56)', 2, { decimalMark: 'point' }, 'EUR') // { ok: true, minor: -123456n }
 */
export function readMajorAmount(text: string, decimals: number, style: AmountStyle, currency: string): AmountReading {
  if (style.decimalMark !== 'unstated') return readWithMark(text, decimals, style.decimalMark === 'comma', currency);
  const asPoint = readWithMark(text, decimals, false, currency);
  const asComma = readWithMark(text, decimals, true, currency);
  if (asPoint.ok && asComma.ok && asPoint.minor !== asComma.minor) {
    // The reading where the separator is the decimal mark: the point reading for ".", the comma reading for ",".
    const separator = separatorOf(text);
    const [asMark, asGroup] = separator === '.' ? [asPoint.minor, asComma.minor] : [asComma.minor, asPoint.minor];
    return {
      ok: false,
      ambiguous: true,
      problem:
        `balance ${JSON.stringify(text)} is ambiguous for ${currency}: ${formatMinor(asMark, decimals)} if "${separator}" is the decimal mark, ` +
        `${formatMinor(asGroup, decimals)} if it groups thousands; say which with --decimal-point or --decimal-comma (or books.decimalMark: point|comma for the account)`,
    };
  }
  // One reading (or none): the point reading and its messages, as before a mark was required.
  return asPoint;
}

function readWithMark(text: string, decimals: number, decimalComma: boolean, currency: string): AmountReading {
  let body = text;
  let negative = false;
  if (/^\(.*\)$/.test(body)) {
    negative = true;
    body = body.slice(1, -1);
  }
  if (body.startsWith('-')) {
    if (negative) return fail(text, 'has both a minus and parentheses');
    negative = true;
    body = body.slice(1);
  }
  const point = decimalComma ? ',' : '.';
  const groupChars = decimalComma ? ['.', ' ', '\u00a0', '\u202f'] : [','];
  // The examples are written with the mark the amount was read with.
  const notAnAmount = `is not an amount such as ${decimalComma ? '1234,56, -1.234,56 or (1.234,56)' : '1234.56, -1234.56, 1,234.56 or (1,234.56)'}`;
  const [whole = '', fraction, extra] = body.split(point);
  // 12.845.500,75: points grouping thousands before a decimal comma.
  if (extra !== undefined && !decimalComma && /^\d{1,3}(\.\d{3})+,\d+$/.test(body)) return fail(text, DECIMAL_COMMA_HINT);
  if (extra !== undefined) return fail(text, `has more than one decimal ${decimalComma ? 'comma' : 'point'}`);
  if (fraction !== undefined && !/^\d+$/.test(fraction)) {
    if (!decimalComma && /^\d{1,3}(\.\d{3})*,\d+$/.test(body)) return fail(text, DECIMAL_COMMA_HINT);
    return fail(text, notAnAmount);
  }
  const wholeDigits = readGroupedDigits(whole, groupChars);
  if (wholeDigits === undefined) {
    if (!decimalComma && fraction === undefined && /^\d+,\d{1,2}$/.test(body)) return fail(text, DECIMAL_COMMA_HINT);
    return fail(text, notAnAmount);
  }
  const significant = (fraction ?? '').replace(/0+$/, '');
  if (significant.length > decimals) {
    return { ok: false, problem: `balance ${text} has ${significant.length} decimal${significant.length === 1 ? '' : 's'} but ${currency} has ${decimals}` };
  }
  const digits = `${wholeDigits}${significant.padEnd(decimals, '0')}`.replace(/^0+(?=\d)/, '');
  if (digits.length > MAX_DIGITS) return fail(text, `is too large (at most ${MAX_DIGITS} digits in minor units)`);
  const minor = BigInt(digits);
  return { ok: true, minor: negative ? -minor : minor };
}

/** The separator an ambiguous amount holds (it holds only one kind: two kinds decide the mark). */
function separatorOf(text: string): string {
  return text.includes(',') ? ',' : '.';
}

/** Minor units written plainly in major units with a decimal point (`250000`, `1.50`), for messages. */
function formatMinor(minor: bigint, decimals: number): string {
  const sign = minor < 0n ? '-' : '';
  const digits = (minor < 0n ? -minor : minor).toString().padStart(decimals + 1, '0');
  return decimals === 0 ? `${sign}${digits}` : `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

/** `1,234,567` → `1234567`; groups of three after the first, one separator throughout; undefined when not digits. */
function readGroupedDigits(text: string, groupChars: readonly string[]): string | undefined {
  if (/^\d+$/.test(text)) return text;
  for (const separator of groupChars) {
    const parts = text.split(separator);
    if (parts.length > 1 && /^\d{1,3}$/.test(parts[0]!) && parts.slice(1).every((p) => /^\d{3}$/.test(p))) return parts.join('');
  }
  return undefined;
}

function fail(text: string, why: string): AmountReading {
  return { ok: false, problem: `balance ${JSON.stringify(text)} ${why}` };
}
