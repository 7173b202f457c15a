import { open } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { isCalendarDate } from '../clock.js';
import { InputFileError, UsageError } from '../errors.js';
import { describeJsonValue, isJsonInteger, isLosslessNumber, parseJsonLosslessly } from '../lossless-json.js';
import { currencyDecimals } from '../money/format-amount.js';
import type { BusinessToday } from '../reconciliation/business-dates.js';
import { readMajorAmount } from './amount-text.js';
import { BALANCE_FIELD_SET, BOOKS_FIELDS, REQUIRED_FIELDS, type ColumnMap, type FieldSet } from './column-map.js';
import { readCsvRecords, streamCsvRecords } from './csv-table.js';
import { readDate, type DateFormat } from './date-text.js';
import { decodeFileStream, decodeHead, type TextEncodingName } from '../text-encoding.js';
import { FooterFilter, TableShaper, type RawRow, type SkippedRow, type TableRow } from './table.js';
import { CellDate, streamXlsxRecords } from './xlsx-table.js';

export type { RawRow } from './table.js';

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
  /**
   * The decimal mark of text amounts (spreadsheet and JSON numbers are numbers): `comma` for
   * `1.234,56`, `point` for `1,234.56`; `unstated` refuses an amount that reads both ways. Absent:
   * `point`, the machine text of a ledger query's numeric.
   */
  decimalMark?: 'comma' | 'point' | 'unstated';
  /** How text dates are written; ISO YYYY-MM-DD when absent. */
  dateFormat?: DateFormat;
  /** Headers (or JSON keys) of the fields, when not the default names. */
  map?: ColumnMap;
  /** Lines (spreadsheet rows) above the header to leave unread: a title, an export date. */
  skipRows?: number;
  /** Rows at the end to leave out (a footer); total rows at the end ("Summe", "Total") are left out anyway. */
  skipFooter?: number;
  /** The text encoding of a CSV or JSON lines file without a byte order mark; absent: UTF-8, strictly. */
  encoding?: TextEncodingName;
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

// numeric(38,0): at most 38 digits, an optional minus, nothing else (no "1.00", "1e3", "+1", "1,000").
const MINOR_BALANCE = /^-?(0|[1-9]\d{0,37})$/;
const CURRENCY = /^[A-Z]{3}$/;

// A file with a million bad lines is told by its first problems and a count, not a million lines.
const LISTED_PROBLEMS = 1000;

/** The format of a file: by its extension (.csv, .xlsx, .jsonl, .ndjson, .json), else by its first bytes. */
export function detectFormat(fileName: string, content: string | Buffer): BalanceFileFormat {
  const ext = path.extname(fileName).toLowerCase();
  if (ext === '.csv' || ext === '.tsv' || ext === '.txt') return 'csv';
  if (ext === '.xlsx') return 'xlsx';
  if (ext === '.jsonl' || ext === '.ndjson' || ext === '.json') return 'jsonl';
  // An .xlsx is a zip archive: "PK\x03\x04".
  if (Buffer.isBuffer(content) && content.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) return 'xlsx';
  const text = Buffer.isBuffer(content) ? decodeHead(content.subarray(0, 64)) : content;
  return text.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

/** The problems found in a file: the first ones listed, all of them counted. */
export class ProblemList {
  readonly listed: string[] = [];
  count = 0;

  add(problem: string): void {
    this.count++;
    if (this.listed.length < LISTED_PROBLEMS) this.listed.push(problem);
  }

  /** Throws one InputFileError listing the problems in line order, if there are any. */
  throwIfAny(name: string): void {
    if (this.count === 0) return;
    // Duplicates are found after the rows are read: the list is put back in the file's order.
    const lineOf = (p: string) => Number(/ (?:line|row) (\d+)[:,]/.exec(p)?.[1] ?? 0);
    this.listed.sort((a, b) => lineOf(a) - lineOf(b));
    // One problem is one sentence on one line; several are listed, one per line.
    if (this.count === 1) throw new InputFileError(`${this.listed[0]}; nothing was imported.`, this.listed);
    const more = this.count > this.listed.length ? `\n  … and ${this.count - this.listed.length} more` : '';
    throw new InputFileError(`${name} has ${this.count} problems; nothing was imported:\n${this.listed.map((p) => `  - ${p}`).join('\n')}${more}`, this.listed);
  }
}

/** A books file opened for streaming: its validated rows come in batches; problems and skipped rows gather as they are read. */
export interface BalanceFileStream {
  name: string;
  format: BalanceFileFormat;
  unit: 'line' | 'row';
  /** Valid rows in batches of at most `batchRows`; bad rows go to `problems` (duplicates are found by the caller). */
  batches: AsyncGenerator<BalanceFileRow[]>;
  problems: ProblemList;
  skipped: SkippedRow[];
}

/**
 * Opens a books or statements file (CSV, .xlsx or JSON lines) for reading in batches: memory is
 * bounded by the batch, not the file. A file that does not exist is a usage error (exit 2).
 */
export async function openBalanceFile(filePath: string, options: BalanceFileOptions, batchRows = 5_000): Promise<BalanceFileStream> {
  const { name, format, unit, rows, problems, skipped } = await openRawRows(filePath, options, BALANCE_FIELD_SET);
  return { name, format, unit, batches: validBatches(rows, name, options, problems, batchRows), problems, skipped };
}

/** A books file opened for streaming its rows as read (named fields, not yet validated). */
export interface RawRowStream {
  name: string;
  format: BalanceFileFormat;
  unit: 'line' | 'row';
  rows: AsyncGenerator<RawRow>;
  problems: ProblemList;
  skipped: SkippedRow[];
}

/**
 * Opens a CSV, .xlsx or JSON lines file of the given fields (balances or entries) and streams its
 * rows as read. A file that does not exist is a usage error (exit 2).
 */
export async function openRawRows(filePath: string, options: BooksFormat, fieldSet: FieldSet): Promise<RawRowStream> {
  let head: Buffer;
  try {
    const handle = await open(filePath, 'r');
    try {
      const buffer = Buffer.alloc(64);
      const { bytesRead } = await handle.read(buffer, 0, 64, 0);
      head = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    // A file name that names no file is a mistyped command line (exit 2), not a file with bad rows.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`Could not read ${filePath}: there is no such file.`, { cause: error });
    throw new InputFileError(`Could not read ${filePath}: ${(error as Error).message}.`, [], { cause: error });
  }
  const format = detectFormat(filePath, head);
  const name = path.basename(filePath);
  const unit = format === 'xlsx' ? 'row' : 'line';
  const problems = new ProblemList();
  const skipped: SkippedRow[] = [];
  const problem = (text: string) => problems.add(text);
  const raw = format === 'jsonl' ? streamJsonLines(filePath, name, head, options, problem, skipped) : streamTableRows(format === 'csv' ? streamCsvRecords(filePath, name, problem, options.skipRows ?? 0, options.encoding) : streamXlsxRecords(filePath, name, problem, options.skipRows ?? 0), name, unit, options, problem, skipped, fieldSet);
  return { name, format, unit, rows: raw, problems, skipped };
}

async function* validBatches(raw: AsyncIterable<RawRow>, name: string, options: BalanceFileOptions, problems: ProblemList, batchRows: number): AsyncGenerator<BalanceFileRow[]> {
  let batch: BalanceFileRow[] = [];
  for await (const row of raw) {
    const checked = validateRow(row, name, options);
    if ('row' in checked) batch.push(checked.row);
    else for (const p of checked.problems) problems.add(p);
    if (batch.length >= batchRows) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

async function* streamTableRows(records: AsyncIterable<TableRow>, name: string, unit: 'line' | 'row', options: BooksFormat, problem: (text: string) => void, skipped: SkippedRow[], fieldSet: FieldSet): AsyncGenerator<RawRow> {
  const shaper = new TableShaper(name, unit, options.map, options.skipFooter ?? 0, skipped, problem, fieldSet);
  for await (const { line, cells } of records) yield* shaper.push(line, cells);
  shaper.end();
}

async function* streamJsonLines(filePath: string, name: string, head: Buffer, options: BooksFormat, problem: (text: string) => void, skipped: SkippedRow[]): AsyncGenerator<RawRow> {
  const rename = jsonRenames(options.map);
  // JSON lines have no header and no total rows: only --skip-rows and --skip-footer apply.
  const footer = new FooterFilter(options.skipFooter ?? 0, 'line', skipped, false);
  const lines = createInterface({ input: Readable.from(decodeFileStream(filePath, name, head, options.encoding)), crlfDelay: Infinity });
  let line = 0;
  for await (const text of lines) {
    line++;
    if (line <= (options.skipRows ?? 0) || text.trim() === '') continue;
    for (const released of footer.push({ line, cells: [line === 1 ? text.replace(/^\uFEFF/, '') : text] })) {
      const row = jsonLineRow(released.cells[0] as string, released.line, name, rename, problem);
      if (row !== undefined) yield row;
    }
  }
  footer.end();
}

/**
 * Reads and validates a whole books or statements file into memory (statements for a backfill;
 * imports stream with openBalanceFile instead); throws InputFileError naming every bad line.
 */
export async function readBalanceFile(filePath: string, options: BalanceFileOptions): Promise<{ rows: BalanceFileRow[]; format: BalanceFileFormat; skipped: SkippedRow[] }> {
  const opened = await openBalanceFile(filePath, options);
  const rows: BalanceFileRow[] = [];
  for await (const batch of opened.batches) rows.push(...batch);
  checkDuplicates(rows, opened.name, opened.unit, opened.problems);
  opened.problems.throwIfAny(opened.name);
  if (rows.length === 0) throw noRows(opened.name);
  return { rows, format: opened.format, skipped: opened.skipped };
}

/**
 * Parses and validates a whole text file: CSV (comma, semicolon or tab) with a header line, or
 * JSON lines. All or nothing: any bad row fails the whole file with one problem per bad line,
 * so a half-imported file never exists.
 */
export function parseBalanceFile(text: string, fileName: string, options: BalanceFileOptions): BalanceFileRow[] {
  const name = path.basename(fileName);
  const problems: string[] = [];
  const skipped: SkippedRow[] = [];
  const problem = (p: string) => problems.push(p);
  const raw: RawRow[] = [];
  if (detectFormat(fileName, text) === 'csv') {
    const shaper = new TableShaper(name, 'line', options.map, options.skipFooter ?? 0, skipped, problem);
    for (const { line, cells } of readCsvRecords(text, name, problem, options.skipRows ?? 0)) raw.push(...shaper.push(line, cells));
    shaper.end();
  } else {
    const rename = jsonRenames(options.map);
    const footer = new FooterFilter(options.skipFooter ?? 0, 'line', skipped, false);
    text
      .replace(/^\uFEFF/, '')
      .split(/\r?\n/)
      .forEach((content, index) => {
        if (index < (options.skipRows ?? 0) || content.trim() === '') return;
        for (const released of footer.push({ line: index + 1, cells: [content] })) {
          const row = jsonLineRow(released.cells[0] as string, released.line, name, rename, problem);
          if (row !== undefined) raw.push(row);
        }
      });
    footer.end();
  }
  return validateRows(raw, name, options, problems);
}

/**
 * Validates rows from any source (a file or a ledger query) into books rows, or throws one
 * InputFileError listing every problem (with those already found while reading).
 */
export function validateRows(raw: readonly RawRow[], name: string, options: BalanceFileOptions, problems: string[] = []): BalanceFileRow[] {
  const list = new ProblemList();
  for (const p of problems) list.add(p);
  const rows: BalanceFileRow[] = [];
  for (const r of raw) {
    const checked = validateRow(r, name, options);
    if ('row' in checked) rows.push(checked.row);
    else for (const p of checked.problems) list.add(p);
  }
  checkDuplicates(rows, name, raw[0]?.unit ?? 'line', list);
  list.throwIfAny(name);
  if (rows.length === 0) throw noRows(name);
  return rows;
}

/** The refusal of a file without a single row. */
export function noRows(name: string): InputFileError {
  return new InputFileError(`${name} holds no rows: expected a header business_date,currency,balance[,account] and at least one row.`, [`${name}: no rows`]);
}

/** The problem of a row repeating an earlier row's key. */
export function duplicateProblem(name: string, unit: 'line' | 'row', line: number, first: number, key: { account: string; businessDate: string; currency: string }): string {
  return `${name} ${unit} ${line}: duplicate of ${unit} ${first} (account ${key.account}, business_date ${key.businessDate}, currency ${key.currency})`;
}

/** Rows of one key after its first, as problems (in memory: for files read whole). */
function checkDuplicates(rows: BalanceFileRow[], name: string, unit: 'line' | 'row', problems: ProblemList): void {
  const firstLineOfKey = new Map<string, number>();
  const unique: BalanceFileRow[] = [];
  for (const row of rows) {
    const key = `${row.account}|${row.businessDate}|${row.currency}`;
    const first = firstLineOfKey.get(key);
    if (first === undefined) {
      firstLineOfKey.set(key, row.line);
      unique.push(row);
    } else problems.add(duplicateProblem(name, unit, row.line, first, row));
  }
  rows.splice(0, rows.length, ...unique);
}

/** Validates one row: the books row it makes, or every problem it has. Duplicates are checked by the caller. */
export function validateRow({ line, unit, fields, balanceColumn }: RawRow, name: string, options: BalanceFileOptions): { row: BalanceFileRow } | { problems: string[] } {
  const at = `${name} ${unit} ${line}`;
  const rowProblems: string[] = [];
  const unknown = Object.keys(fields).filter((f) => !(BOOKS_FIELDS as readonly string[]).includes(f));
  if (unknown.length > 0) rowProblems.push(`${at}: unknown field ${unknown.map((f) => `"${f}"`).join(', ')} (allowed: ${BOOKS_FIELDS.join(', ')})`);
  for (const field of REQUIRED_FIELDS) {
    if (fields[field] === undefined || fields[field] === '' || fields[field] === null) rowProblems.push(`${at}: ${field} is missing`);
  }
  const date = readDateField(fields.business_date, options.dateFormat ?? 'YYYY-MM-DD', at, rowProblems);
  if (date !== undefined && options.notAfter !== undefined && date > options.notAfter.date) {
    rowProblems.push(`${at}: business_date ${date} is after the current business date (${options.notAfter.date} in ${options.notAfter.timezone}); books cannot hold a day that has not begun`);
  }
  const currency = readCurrency(fields.currency, at, rowProblems);
  const balance = readBalance(fields.balance, currency, options, at, rowProblems, balanceColumn ?? 'balance');
  const account = resolveAccount(fields.account, options, at, rowProblems);
  if (rowProblems.length > 0 || account === undefined || date === undefined || currency === undefined || balance === undefined) return { problems: rowProblems };
  return { row: { line, account, businessDate: date, currency, balance } };
}

export function readDateField(value: unknown, format: DateFormat, at: string, problems: string[], field = 'business_date'): string | undefined {
  if (value === undefined || value === '' || value === null) return undefined;
  // A spreadsheet's date cell is a date whatever the text format says.
  if (value instanceof CellDate) return value.iso;
  const iso = typeof value === 'string' ? (format === 'YYYY-MM-DD' ? (isCalendarDate(value) ? value : undefined) : readDate(value, format)) : undefined;
  if (iso === undefined) {
    const hint = format === 'YYYY-MM-DD' && typeof value === 'string' ? dateFormatHint(value) : '';
    problems.push(`${at}: ${field} ${show(value)} is not a real date in the form ${format}${hint}`);
  }
  return iso;
}

/** The --date-format a date written another way fits: the separator it is written with decides. */
function dateFormatHint(value: string): string {
  const match = /^(\d{1,2})([./-])(\d{1,2})\2\d{4}$/.exec(value);
  if (match === null) return '';
  const [, first, separator, second] = match;
  const suggested = separator === '.' ? 'DD.MM.YYYY' : separator === '-' ? 'DD-MM-YYYY' : Number(second) > 12 && Number(first) <= 12 ? 'MM/DD/YYYY' : 'DD/MM/YYYY';
  return `; pass --date-format, e.g. --date-format ${suggested}`;
}

export function readCurrency(value: unknown, at: string, problems: string[]): string | undefined {
  if (value === undefined || value === '' || value === null) return undefined;
  // Exports write codes in any case ("eur"); the code itself is upper case.
  const code = typeof value === 'string' ? value.toUpperCase() : undefined;
  if (code === undefined || !CURRENCY.test(code)) {
    problems.push(`${at}: currency ${show(value)} is not a three-letter currency code such as EUR`);
    return undefined;
  }
  return code;
}

export function readBalance(value: unknown, currency: string | undefined, options: BooksFormat, at: string, problems: string[], column: string, field = 'balance'): bigint | undefined {
  if (value === undefined || value === '' || value === null) return undefined;
  if (typeof value === 'string' && value !== value.trim()) {
    // " 100" may be a column shifted by a stray separator: refused rather than guessed. Only
    // spaces is no balance: said so, never a row dropped without a word.
    problems.push(value.trim() === '' ? `${at}: ${field} is missing` : `${at}: ${field} ${show(value)} has spaces around it; write the amount alone, e.g. ${value.trim()}`);
    return undefined;
  }
  if (options.amounts === 'minor') {
    const text = typeof value === 'string' ? value : isJsonInteger(value) ? value.value : undefined;
    if (text === undefined || !MINOR_BALANCE.test(text)) {
      problems.push(`${at}: ${field} ${show(value)} ${minorBalanceProblem(value)}`);
      return undefined;
    }
    return BigInt(text);
  }
  // A number (JSON or a spreadsheet cell) is written with a decimal point whatever the locale.
  const text = typeof value === 'string' ? value : isLosslessNumber(value) ? value.value : undefined;
  if (text === undefined) {
    problems.push(`${at}: ${field} ${show(value)} is not an amount such as 1234.56`);
    return undefined;
  }
  if (currency === undefined) return undefined;
  const decimals = currencyDecimals(currency);
  if (decimals === null) {
    problems.push(`${at}: currency ${currency} is not an ISO 4217 currency, so its decimals are unknown; write its books in minor units with --amounts minor`);
    return undefined;
  }
  const reading = readMajorAmount(text, decimals, { decimalMark: typeof value === 'string' ? (options.decimalMark ?? 'point') : 'point' }, currency);
  if (!reading.ok) {
    // An ambiguous amount is fixed in the file or by a flag: the message points at the very cell.
    // The reader words its problem for a balance; an entry's amount is named as such.
    problems.push(`${at}${reading.ambiguous === true ? `, column ${JSON.stringify(column)}` : ''}: ${field === 'balance' ? reading.problem : reading.problem.replace(/^balance /, `${field} `)}`);
    return undefined;
  }
  return reading.minor;
}

export function resolveAccount(value: unknown, options: BalanceFileOptions, at: string, problems: string[]): string | undefined {
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

export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (value instanceof CellDate) return value.iso;
  return `(${describeJsonValue(value)})`;
}

/** The map names JSON keys as it names headers: key → field. */
function jsonRenames(map: ColumnMap | undefined): Map<string, string> {
  return new Map(Object.entries(map ?? {}).flatMap(([field, key]) => (key === undefined ? [] : [[key, field] as [string, string]])));
}

function jsonLineRow(content: string, line: number, name: string, rename: Map<string, string>, problem: (text: string) => void): RawRow | undefined {
  const at = `${name} line ${line}`;
  let value: unknown;
  try {
    value = parseJsonLosslessly(content);
  } catch (error) {
    problem(`${at}: not valid JSON: ${(error as Error).message}`);
    return undefined;
  }
  // A bare number parses to a LosslessNumber, an object too: it is not a row.
  if (value === null || typeof value !== 'object' || Array.isArray(value) || isLosslessNumber(value)) {
    problem(`${at}: expected an object with business_date, currency, balance, got ${describeJsonValue(value)}`);
    return undefined;
  }
  const fields = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [rename.get(k) ?? k, v]));
  return { line, unit: 'line', fields };
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
