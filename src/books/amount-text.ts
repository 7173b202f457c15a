/**
 * Amounts as finance teams write them, read exactly into minor units: `1234.56`, `-1234.56`,
 * `1,234.56`, `(1,234.56)` (accounting negative) and, with a decimal comma, `1.234,56`. Pure
 * string work on the digits, never a float, so a 38-digit balance keeps its last cent.
 */

export interface AmountStyle {
  /** `1.234,56`: the comma separates decimals and `.` (or a space) groups thousands. */
  decimalComma: boolean;
}

export type AmountReading = { ok: true; minor: bigint } | { ok: false; problem: string };

// numeric(38,0) holds the stored minor units.
const MAX_DIGITS = 38;

/**
 * Reads a major-unit amount for a currency with `decimals` minor digits. More decimals than the
 * currency has are refused (never rounded); trailing zeros beyond them carry nothing and are
 * accepted (`1234.5600` from a numeric(18,4) ledger column is 1234.56).
 *
 * @example readMajorAmount('(1,234.56)', 2, { decimalComma: false }) // { ok: true, minor: -123456n }
 */
export function readMajorAmount(text: string, decimals: number, style: AmountStyle, currency: string): AmountReading {
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
  const point = style.decimalComma ? ',' : '.';
  const groupChars = style.decimalComma ? ['.', ' ', '\u00a0', '\u202f'] : [','];
  const [whole = '', fraction, extra] = body.split(point);
  if (extra !== undefined) return fail(text, `has more than one decimal ${style.decimalComma ? 'comma' : 'point'}`);
  if (fraction !== undefined && !/^\d+$/.test(fraction)) {
    if (!style.decimalComma && /^\d{1,3}(\.\d{3})*,\d+$/.test(body)) return fail(text, 'looks like a decimal comma; pass --decimal-comma (or set decimalComma in the accounts file)');
    return fail(text, 'is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)');
  }
  const wholeDigits = readGroupedDigits(whole, groupChars);
  if (wholeDigits === undefined) {
    if (!style.decimalComma && fraction === undefined && /^\d+,\d{1,2}$/.test(body)) return fail(text, 'looks like a decimal comma; pass --decimal-comma (or set decimalComma in the accounts file)');
    return fail(text, `is not an amount such as ${style.decimalComma ? '1234,56, -1.234,56 or (1.234,56)' : '1234.56, -1234.56, 1,234.56 or (1,234.56)'}`);
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
