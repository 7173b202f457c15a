import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isCalendarDate } from '../clock.js';
import { InputFileError } from '../errors.js';
import { describeJsonValue, isJsonInteger, isLosslessNumber, parseJsonLosslessly } from '../lossless-json.js';
import { currencyDecimals } from '../money/format-amount.js';
import type { BusinessToday } from '../reconciliation/business-dates.js';
import { readMajorAmount } from './amount-text.js';
import { BOOKS_FIELDS, REQUIRED_FIELDS, resolveColumns, type ColumnMap } from './column-map.js';
import { readCsvTable } from './csv-table.js';
import { readDate, type DateFormat } from './date-text.js';
import { CellDate, readXlsxTable } from './xlsx-table.js';

/** One validated row of a books (or statements) file. */
export interface BalanceFileRow {
  /** 1-based line (or spreadsheet row) where the row ends. */
  line: number;
  account: string;
  businessDate: string;
  currency: string;
  /** Minor units. */
  balance: bigint;
}

/** How a books source writes its amounts and dates. */
export interface BooksFormat {
  /** `major` (default for books): 1234.56 with the currency's decimals; `minor`: the integer 123456. */
  amounts: 'major' | 'minor';
  /** `1.234,56`: decimals after a comma (text amounts only; spreadsheet numbers are numbers). */
  decimalComma?: boolean;
  /** How text dates are written; ISO YYYY-MM-DD when absent. */
  dateFormat?: DateFormat;
  /** Headers (or JSON keys) of the fields, when not the default names. */
  map?: ColumnMap;
}

export interface BalanceFileOptions extends BooksFormat {
  /** `--account`: the account of rows without an `account` column; a row naming another is an error. */
  account?: string;
  /** The configured account names; a row must name one of them. */
  knownAccounts: readonly string[];
  /** Today's business date: rows of later dates are refused. */
  notAfter?: BusinessToday;
}

export type BalanceFileFormat = 'csv' | 'jsonl' | 'xlsx';

/** A row as read, before validation; messages name it by its unit ("books.csv line 3", "books.xlsx row 3"). */
export interface RawRow {
  line: number;
  unit: 'line' | 'row';
  fields: Record<string, unknown>;
}

// numeric(38,0): at most 38 digits, an optional minus, nothing else (no "1.00", "1e3", "+1", "1,000").
const MINOR_BALANCE = /^-?(0|[1-9]\d{0,37})$/;
const CURRENCY = /^[A-Z]{3}$/;

/** The format of a file: by its extension (.csv, .xlsx, .jsonl, .ndjson, .json), else by its first bytes. */
export function detectFormat(fileName: string, content: string | Buffer): BalanceFileFormat {
  const ext = path.extname(fileName).toLowerCase();
  if (ext === '.csv' || ext === '.tsv' || ext === '.txt') return 'csv';
  if (ext === '.xlsx') return 'xlsx';
  if (ext === '.jsonl' || ext === '.ndjson' || ext === '.json') return 'jsonl';
  // An .xlsx is a zip archive: "PK\x03\x04".
  if (Buffer.isBuffer(content) && content.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) return 'xlsx';
  const text = Buffer.isBuffer(content) ? content.subarray(0, 64).toString('utf8') : content;
  return text.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

/** Reads and validates a books or statements file (CSV, .xlsx or JSON lines); throws InputFileError naming every bad line. */
export async function readBalanceFile(filePath: string, options: BalanceFileOptions): Promise<{ rows: BalanceFileRow[]; format: BalanceFileFormat }> {
  let content: Buffer;
  try {
    content = await readFile(filePath);
  } catch (error) {
    throw new InputFileError(`Could not read ${filePath}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is no such file' : (error as Error).message}.`, [], { cause: error });
  }
  const format = detectFormat(filePath, content);
  if (format !== 'xlsx') return { rows: parseBalanceFile(content.toString('utf8'), filePath, options), format };
  const name = path.basename(filePath);
  const problems: string[] = [];
  const table = await readXlsxTable(content, name, problems);
  const raw = table === undefined ? [] : tableRows(table, name, 'row', options.map, problems);
  return { rows: validateRows(raw, name, options, problems), format };
}

/**
 * Parses and validates a whole text file: CSV (comma, semicolon or tab) with a header line, or
 * JSON lines. All or nothing: any bad row fails the whole file with one problem per bad line,
 * so a half-imported file never exists.
 */
export function parseBalanceFile(text: string, fileName: string, options: BalanceFileOptions): BalanceFileRow[] {
  const name = path.basename(fileName);
  const problems: string[] = [];
  let raw: RawRow[];
  if (detectFormat(fileName, text) === 'csv') {
    const table = readCsvTable(text, name, problems);
    raw = table === undefined ? [] : tableRows(table, name, 'line', options.map, problems);
  } else {
    raw = readJsonLines(text, name, options.map, problems);
  }
  return validateRows(raw, name, options, problems);
}

/** A header and its data rows, as the CSV and spreadsheet readers give them. */
export interface Table {
  header: { line: number; cells: string[] };
  rows: Array<{ line: number; cells: unknown[] }>;
}

function tableRows(table: Table, name: string, unit: 'line' | 'row', map: ColumnMap | undefined, problems: string[]): RawRow[] {
  const columns = resolveColumns(table.header.cells, map);
  if ('problem' in columns) {
    problems.push(`${name} ${unit} ${table.header.line}: ${columns.problem}`);
    return [];
  }
  const rows: RawRow[] = [];
  for (const { line, cells } of table.rows) {
    const at = `${name} ${unit} ${line}`;
    if (cells.length !== columns.fields.length) {
      problems.push(`${at}: has ${cells.length} field${cells.length === 1 ? '' : 's'}, the header has ${columns.fields.length}`);
      continue;
    }
    const fields: Record<string, unknown> = {};
    columns.fields.forEach((field, i) => {
      if (field === undefined) return;
      const cell = cells[i];
      // Every text field but the balance is read without surrounding spaces; a balance with them is refused.
      fields[field] = typeof cell === 'string' && field !== 'balance' ? cell.trim() : cell;
    });
    rows.push({ line, unit, fields });
  }
  return rows;
}

/**
 * Validates rows from any source (a file or a ledger query) into books rows, or throws one
 * InputFileError listing every problem (with those already found while reading).
 */
export function validateRows(raw: readonly RawRow[], name: string, options: BalanceFileOptions, problems: string[] = []): BalanceFileRow[] {
  const rows: BalanceFileRow[] = [];
  const firstLineOfKey = new Map<string, number>();
  const dateFormat = options.dateFormat ?? 'YYYY-MM-DD';
  for (const { line, unit, fields } of raw) {
    const at = `${name} ${unit} ${line}`;
    const rowProblems: string[] = [];
    const unknown = Object.keys(fields).filter((f) => !(BOOKS_FIELDS as readonly string[]).includes(f));
    if (unknown.length > 0) rowProblems.push(`${at}: unknown field ${unknown.map((f) => `"${f}"`).join(', ')} (allowed: ${BOOKS_FIELDS.join(', ')})`);
    for (const field of REQUIRED_FIELDS) {
      if (fields[field] === undefined || fields[field] === '' || fields[field] === null) rowProblems.push(`${at}: ${field} is missing`);
    }
    const date = readDateField(fields.business_date, dateFormat, at, rowProblems);
    if (date !== undefined && options.notAfter !== undefined && date > options.notAfter.date) {
      rowProblems.push(`${at}: business_date ${date} is after the current business date (${options.notAfter.date} in ${options.notAfter.timezone}); books cannot hold a day that has not begun`);
    }
    const currency = readCurrency(fields.currency, at, rowProblems);
    const balance = readBalance(fields.balance, currency, options, at, rowProblems);
    const account = resolveAccount(fields.account, options, at, rowProblems);
    if (rowProblems.length > 0 || account === undefined || date === undefined || currency === undefined || balance === undefined) {
      problems.push(...rowProblems);
      continue;
    }
    const key = `${account}|${date}|${currency}`;
    const first = firstLineOfKey.get(key);
    if (first !== undefined) {
      problems.push(`${at}: duplicate of ${unit} ${first} (account ${account}, business_date ${date}, currency ${currency})`);
      continue;
    }
    firstLineOfKey.set(key, line);
    rows.push({ line, account, businessDate: date, currency, balance });
  }

  if (problems.length > 0) {
    // One problem is one sentence on one line; several are listed, one per line.
    if (problems.length === 1) throw new InputFileError(`${problems[0]}; nothing was imported.`, problems);
    throw new InputFileError(`${name} has ${problems.length} problems; nothing was imported:\n${problems.map((p) => `  - ${p}`).join('\n')}`, problems);
  }
  if (rows.length === 0) throw new InputFileError(`${name} holds no rows: expected a header business_date,currency,balance[,account] and at least one row.`, [`${name}: no rows`]);
  return rows;
}

function readDateField(value: unknown, format: DateFormat, at: string, problems: string[]): string | undefined {
  if (value === undefined || value === '' || value === null) return undefined;
  // A spreadsheet's date cell is a date whatever the text format says.
  if (value instanceof CellDate) return value.iso;
  const iso = typeof value === 'string' ? (format === 'YYYY-MM-DD' ? (isCalendarDate(value) ? value : undefined) : readDate(value, format)) : undefined;
  if (iso === undefined) {
    const hint = format === 'YYYY-MM-DD' && typeof value === 'string' && /^\d{1,2}[./-]\d{1,2}[./-]\d{4}$/.test(value) ? '; pass --date-format, e.g. --date-format DD/MM/YYYY' : '';
    problems.push(`${at}: business_date ${show(value)} is not a real date in the form ${format}${hint}`);
  }
  return iso;
}

function readCurrency(value: unknown, at: string, problems: string[]): string | undefined {
  if (value === undefined || value === '' || value === null) return undefined;
  // Exports write codes in any case ("eur"); the code itself is upper case.
  const code = typeof value === 'string' ? value.toUpperCase() : undefined;
  if (code === undefined || !CURRENCY.test(code)) {
    problems.push(`${at}: currency ${show(value)} is not a three-letter currency code such as EUR`);
    return undefined;
  }
  return code;
}

function readBalance(value: unknown, currency: string | undefined, options: BalanceFileOptions, at: string, problems: string[]): bigint | undefined {
  if (value === undefined || value === '' || value === null) return undefined;
  if (typeof value === 'string' && value !== value.trim()) {
    // " 100" may be a column shifted by a stray separator: refused rather than guessed.
    if (value.trim() !== '') problems.push(`${at}: balance ${show(value)} has spaces around it; write the amount alone, e.g. ${value.trim()}`);
    return undefined;
  }
  if (options.amounts === 'minor') {
    const text = typeof value === 'string' ? value : isJsonInteger(value) ? value.value : undefined;
    if (text === undefined || !MINOR_BALANCE.test(text)) {
      problems.push(`${at}: balance ${show(value)} ${minorBalanceProblem(value)}`);
      return undefined;
    }
    return BigInt(text);
  }
  // A number (JSON or a spreadsheet cell) is written with a decimal point whatever the locale.
  const text = typeof value === 'string' ? value : isLosslessNumber(value) ? value.value : undefined;
  if (text === undefined) {
    problems.push(`${at}: balance ${show(value)} is not an amount such as 1234.56`);
    return undefined;
  }
  if (currency === undefined) return undefined;
  const decimals = currencyDecimals(currency);
  if (decimals === null) {
    problems.push(`${at}: currency ${currency} is not an ISO 4217 currency, so its decimals are unknown; write its books in minor units with --amounts minor`);
    return undefined;
  }
  const reading = readMajorAmount(text, decimals, { decimalComma: typeof value === 'string' && options.decimalComma === true }, currency);
  if (!reading.ok) {
    problems.push(`${at}: ${reading.problem}`);
    return undefined;
  }
  return reading.minor;
}

function resolveAccount(value: unknown, options: BalanceFileOptions, at: string, problems: string[]): string | undefined {
  const named = value === undefined || value === '' ? undefined : value;
  if (named !== undefined && typeof named !== 'string') {
    problems.push(`${at}: account ${show(named)} must be a name such as ${options.knownAccounts[0] ?? 'default'}`);
    return undefined;
  }
  if (named !== undefined && options.account !== undefined && named !== options.account) {
    problems.push(`${at}: account "${named}" contradicts --account ${options.account}`);
    return undefined;
  }
  const account = named ?? options.account ?? (options.knownAccounts.length === 1 ? options.knownAccounts[0] : undefined);
  if (account === undefined) {
    problems.push(`${at}: no account: add an account column or pass --account (configured: ${options.knownAccounts.join(', ')})`);
    return undefined;
  }
  if (!options.knownAccounts.includes(account)) {
    problems.push(`${at}: account "${account}" is not configured (configured: ${options.knownAccounts.join(', ')})`);
    return undefined;
  }
  return account;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (value instanceof CellDate) return value.iso;
  return `(${describeJsonValue(value)})`;
}

function readJsonLines(text: string, name: string, map: ColumnMap | undefined, problems: string[]): RawRow[] {
  const rows: RawRow[] = [];
  // The map names JSON keys as it names headers: key → field.
  const rename = new Map(Object.entries(map ?? {}).map(([field, key]) => [key, field]));
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((content, index) => {
    const line = index + 1;
    const at = `${name} line ${line}`;
    if (content.trim() === '') return;
    let value: unknown;
    try {
      value = parseJsonLosslessly(content);
    } catch (error) {
      problems.push(`${at}: not valid JSON: ${(error as Error).message}`);
      return;
    }
    // A bare number parses to a LosslessNumber, an object too: it is not a row.
    if (value === null || typeof value !== 'object' || Array.isArray(value) || isLosslessNumber(value)) {
      problems.push(`${at}: expected an object with business_date, currency, balance, got ${describeJsonValue(value)}`);
      return;
    }
    const fields = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [rename.get(k) ?? k, v]));
    rows.push({ line, unit: 'line', fields });
  });
  return rows;
}

/**
 * What is wrong with a refused minor-unit balance, said as precisely as the text allows: "007" is
 * an exact integer to a person, so "not an exact integer" would send them looking for the wrong mistake.
 */
function minorBalanceProblem(value: unknown): string {
  const general = 'is not an exact integer in minor units (digits with an optional minus, at most 38 digits; no decimal point, exponent or separators)';
  if (typeof value !== 'string') return general;
  // Leading zeros are refused rather than read: 007 may be a code, or a shifted or padded column.
  if (/^-?0+\d+$/.test(value)) return `has leading zeros; write the amount without them, e.g. ${BigInt(value).toString()}`;
  if (/^\+\d+$/.test(value)) return `has a plus sign; write the amount without it, e.g. ${value.slice(1)}`;
  if (/^-?\d{39,}$/.test(value)) return `has ${value.replace('-', '').length} digits, more than the 38 a balance can hold`;
  return general;
}
