import { UsageError } from '../errors.js';

/** The fields of a books row, as the default header names them. */
export const BOOKS_FIELDS = ['business_date', 'currency', 'balance', 'account'] as const;
export type BooksField = (typeof BOOKS_FIELDS)[number];
export const REQUIRED_FIELDS = ['business_date', 'currency', 'balance'] as const;

/** The fields of a books entries row (`ledger import --entries`), as the default header names them. */
export const ENTRY_FIELDS = ['account', 'booking_date', 'value_date', 'currency', 'amount', 'reference', 'description', 'entry_id'] as const;
export const REQUIRED_ENTRY_FIELDS = ['booking_date', 'currency', 'amount'] as const;

/** The fields a kind of file holds: every one it may name, those it must, and the one holding the amount. */
export interface FieldSet {
  all: readonly string[];
  required: readonly string[];
  amount: string;
}

export const BALANCE_FIELD_SET: FieldSet = { all: BOOKS_FIELDS, required: REQUIRED_FIELDS, amount: 'balance' };
export const ENTRY_FIELD_SET: FieldSet = { all: ENTRY_FIELDS, required: REQUIRED_ENTRY_FIELDS, amount: 'amount' };

/** Which header (or JSON key) holds each field, for exports whose columns have other names. */
export type ColumnMap = Partial<Record<BooksField, string>> & Partial<Record<string, string>>;

/**
 * Parses `--map business_date="Value date",currency=Curr,balance="Closing balance"`: pairs
 * separated by commas, a header in double quotes when it holds a comma or spaces at its ends.
 */
export function parseColumnMap(spec: string, fieldSet: FieldSet = BALANCE_FIELD_SET): ColumnMap {
  const map: ColumnMap = {};
  const known = fieldSet.all;
  for (const pair of splitOutsideQuotes(spec)) {
    const eq = pair.indexOf('=');
    const field = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    if (eq < 0 || !known.includes(field)) {
      throw new UsageError(`--map ${JSON.stringify(pair.trim())} must be FIELD=HEADER with FIELD one of ${known.join(', ')}, e.g. --map ${fieldSet === BALANCE_FIELD_SET ? 'business_date="Value date",balance="Closing balance"' : 'booking_date="Booking date",amount=Betrag'}`);
    }
    const raw = pair.slice(eq + 1).trim();
    const header = /^".*"$/s.test(raw) ? raw.slice(1, -1).replace(/""/g, '"') : raw;
    if (header === '') throw new UsageError(`--map ${field}= names no header; write ${field}="Header in the file"`);
    if (map[field] !== undefined) throw new UsageError(`--map names ${field} twice`);
    map[field] = header;
  }
  return map;
}

function splitOutsideQuotes(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    if (char === ',' && !quoted) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts.filter((p) => p.trim() !== '');
}

/**
 * The field each column of a header holds (undefined: a column the map leaves out). Without a
 * map every column must be a known field, so a misnamed column is an error, not silently
 * dropped; with a map, the columns it does not name are the export's others and are ignored.
 * Returns a problem (without the file name) when a required column cannot be found.
 */
export function resolveColumns(header: readonly string[], map: ColumnMap | undefined, fieldSet: FieldSet = BALANCE_FIELD_SET): { fields: Array<string | undefined> } | { problem: string } {
  const names = header.map((h) => h.trim().toLowerCase());
  if (map === undefined || Object.keys(map).length === 0) {
    const missing = fieldSet.required.filter((f) => !names.includes(f));
    const unknown = names.filter((c) => !fieldSet.all.includes(c));
    const repeated = names.filter((c, i) => names.indexOf(c) !== i);
    if (missing.length > 0 || unknown.length > 0 || repeated.length > 0) {
      const reasons = [
        missing.length > 0 ? `missing ${missing.join(', ')}` : '',
        unknown.length > 0 ? `unknown ${unknown.map((c) => `"${c}"`).join(', ')}` : '',
        repeated.length > 0 ? `repeated ${repeated.join(', ')}` : '',
      ].filter(Boolean);
      if (fieldSet !== BALANCE_FIELD_SET) {
        const optional = fieldSet.all.filter((f) => !fieldSet.required.includes(f));
        return { problem: `the header must name the columns ${fieldSet.required.join(', ')} and optionally ${optional.join(', ')} (${reasons.join('; ')}); for other headers pass a column map such as --map booking_date="Booking date",amount=Betrag` };
      }
      return {
        problem: `the header must name the columns business_date, currency, balance and optionally account (${reasons.join('; ')}); for other headers pass a column map such as --map business_date="Value date",balance="Closing balance"`,
      };
    }
    return { fields: names };
  }
  const fields: Array<string | undefined> = names.map(() => undefined);
  const problems: string[] = [];
  for (const field of fieldSet.all) {
    const wanted = (map[field] ?? field).trim().toLowerCase();
    const matches = names.flatMap((n, i) => (n === wanted ? [i] : []));
    if (matches.length > 1) problems.push(`the column "${map[field] ?? field}" (${field}) appears ${matches.length} times`);
    else if (matches.length === 1) fields[matches[0]!] = field;
    else if (fieldSet.required.includes(field)) problems.push(`no column "${map[field] ?? field}" for ${field}`);
  }
  if (problems.length > 0) return { problem: `${problems.join('; ')} (the header has: ${header.map((h) => JSON.stringify(h.trim())).join(', ')})` };
  return { fields };
}
