import { UsageError } from '../errors.js';

/** The fields of a books row, as the default header names them. */
export const BOOKS_FIELDS = ['business_date', 'currency', 'balance', 'account'] as const;
export type BooksField = (typeof BOOKS_FIELDS)[number];
export const REQUIRED_FIELDS = ['business_date', 'currency', 'balance'] as const;

/** Which header (or JSON key) holds each field, for exports whose columns have other names. */
export type ColumnMap = Partial<Record<BooksField, string>>;

/**
 * Parses `--map business_date="Value date",currency=Curr,balance="Closing balance"`: pairs
 * separated by commas, a header in double quotes when it holds a comma or spaces at its ends.
 */
export function parseColumnMap(spec: string): ColumnMap {
  const map: ColumnMap = {};
  for (const pair of splitOutsideQuotes(spec)) {
    const eq = pair.indexOf('=');
    const field = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    if (eq < 0 || !(BOOKS_FIELDS as readonly string[]).includes(field)) {
      throw new UsageError(`--map ${JSON.stringify(pair.trim())} must be FIELD=HEADER with FIELD one of ${BOOKS_FIELDS.join(', ')}, e.g. --map business_date="Value date",balance="Closing balance"`);
    }
    const raw = pair.slice(eq + 1).trim();
    const header = /^".*"$/s.test(raw) ? raw.slice(1, -1).replace(/""/g, '"') : raw;
    if (header === '') throw new UsageError(`--map ${field}= names no header; write ${field}="Header in the file"`);
    if (map[field as BooksField] !== undefined) throw new UsageError(`--map names ${field} twice`);
    map[field as BooksField] = header;
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
export function resolveColumns(header: readonly string[], map: ColumnMap | undefined): { fields: Array<BooksField | undefined> } | { problem: string } {
  const names = header.map((h) => h.trim().toLowerCase());
  if (map === undefined || Object.keys(map).length === 0) {
    const missing = REQUIRED_FIELDS.filter((f) => !names.includes(f));
    const unknown = names.filter((c) => !(BOOKS_FIELDS as readonly string[]).includes(c));
    const repeated = names.filter((c, i) => names.indexOf(c) !== i);
    if (missing.length > 0 || unknown.length > 0 || repeated.length > 0) {
      const reasons = [
        missing.length > 0 ? `missing ${missing.join(', ')}` : '',
        unknown.length > 0 ? `unknown ${unknown.map((c) => `"${c}"`).join(', ')}` : '',
        repeated.length > 0 ? `repeated ${repeated.join(', ')}` : '',
      ].filter(Boolean);
      return {
        problem: `the header must name the columns business_date, currency, balance and optionally account (${reasons.join('; ')}); for other headers pass a column map such as --map business_date="Value date",balance="Closing balance"`,
      };
    }
    return { fields: names as BooksField[] };
  }
  const fields: Array<BooksField | undefined> = names.map(() => undefined);
  const problems: string[] = [];
  for (const field of BOOKS_FIELDS) {
    const wanted = (map[field] ?? field).trim().toLowerCase();
    const matches = names.flatMap((n, i) => (n === wanted ? [i] : []));
    if (matches.length > 1) problems.push(`the column "${map[field] ?? field}" (${field}) appears ${matches.length} times`);
    else if (matches.length === 1) fields[matches[0]!] = field;
    else if ((REQUIRED_FIELDS as readonly string[]).includes(field)) problems.push(`no column "${map[field] ?? field}" for ${field}`);
  }
  if (problems.length > 0) return { problem: `${problems.join('; ')} (the header has: ${header.map((h) => JSON.stringify(h.trim())).join(', ')})` };
  return { fields };
}
