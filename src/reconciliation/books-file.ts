import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BusinessToday } from './business-dates.js';
import { parse as parseCsv } from 'csv-parse/sync';
import { isCalendarDate } from '../clock.js';
import { InputFileError } from '../errors.js';
import { describeJsonValue, isJsonInteger, isLosslessNumber, parseJsonLosslessly } from '../lossless-json.js';

/** One validated row of a books (or statements) file. */
export interface BalanceFileRow {
  /** 1-based line in the file where the row ends. */
  line: number;
  account: string;
  businessDate: string;
  currency: string;
  balance: bigint;
}

export interface BalanceFileOptions {
  /** `--account`: the account of rows without an `account` column; a row naming another is an error. */
  account?: string;
  /** The configured account names; a row must name one of them. */
  knownAccounts: readonly string[];
  /** Today's business date: rows of later dates are refused. */
  notAfter?: BusinessToday;
}

export type BalanceFileFormat = 'csv' | 'jsonl';

const REQUIRED_FIELDS = ['business_date', 'currency', 'balance'] as const;
const ALLOWED_FIELDS = [...REQUIRED_FIELDS, 'account'];
// numeric(38,0): at most 38 digits, an optional minus, nothing else (no "1.00", "1e3", "+1", "1,000").
const BALANCE = /^-?(0|[1-9]\d{0,37})$/;
const CURRENCY = /^[A-Z]{3}$/;

interface RawRow {
  line: number;
  fields: Record<string, unknown>;
}

/** The format of a file: by its extension (.csv, .jsonl, .ndjson, .json), else by its first character. */
export function detectFormat(fileName: string, text: string): BalanceFileFormat {
  const ext = path.extname(fileName).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.jsonl' || ext === '.ndjson' || ext === '.json') return 'jsonl';
  return text.replace(/^\uFEFF/, '').trimStart().startsWith('{') ? 'jsonl' : 'csv';
}

/** Reads and validates a books or statements file; throws InputFileError naming every bad line. */
export async function readBalanceFile(filePath: string, options: BalanceFileOptions): Promise<BalanceFileRow[]> {
  let text: string;
  try {
    text = await readFile(filePath, 'utf8');
  } catch (error) {
    throw new InputFileError(`Could not read ${filePath}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'there is no such file' : (error as Error).message}.`, [], { cause: error });
  }
  return parseBalanceFile(text, filePath, options);
}

/**
 * Parses and validates a whole file: CSV with header `business_date,currency,balance[,account]`
 * or JSON lines with the same fields. All or nothing: any bad row fails the whole file with
 * one problem per bad line, so a half-imported file never exists.
 */
export function parseBalanceFile(text: string, fileName: string, options: BalanceFileOptions): BalanceFileRow[] {
  const name = path.basename(fileName);
  const problems: string[] = [];
  const raw = detectFormat(fileName, text) === 'csv' ? readCsvRows(text, name, problems) : readJsonLines(text, name, problems);

  const rows: BalanceFileRow[] = [];
  const firstLineOfKey = new Map<string, number>();
  for (const { line, fields } of raw) {
    const rowProblems: string[] = [];
    const at = `${name} line ${line}`;
    const unknown = Object.keys(fields).filter((f) => !ALLOWED_FIELDS.includes(f));
    if (unknown.length > 0) rowProblems.push(`${at}: unknown field ${unknown.map((f) => `"${f}"`).join(', ')} (allowed: ${ALLOWED_FIELDS.join(', ')})`);
    for (const field of REQUIRED_FIELDS) {
      if (fields[field] === undefined || fields[field] === '') rowProblems.push(`${at}: ${field} is missing`);
    }
    const date = fields.business_date;
    if (date !== undefined && date !== '' && !(typeof date === 'string' && isCalendarDate(date))) {
      rowProblems.push(`${at}: business_date ${show(date)} is not a real date in the form YYYY-MM-DD`);
    } else if (typeof date === 'string' && options.notAfter !== undefined && date > options.notAfter.date) {
      rowProblems.push(`${at}: business_date ${date} is after today (${options.notAfter.date} in ${options.notAfter.timezone}); books cannot hold a day that has not begun`);
    }
    const currency = fields.currency;
    if (currency !== undefined && currency !== '' && !(typeof currency === 'string' && CURRENCY.test(currency))) {
      rowProblems.push(`${at}: currency ${show(currency)} is not a three-letter upper-case code such as EUR`);
    }
    const balanceText = balanceTextOf(fields.balance);
    if (typeof fields.balance === 'string' && fields.balance !== fields.balance.trim() && fields.balance.trim() !== '') {
      // " 100" may be a column shifted by a stray separator: refused rather than guessed.
      rowProblems.push(`${at}: balance ${show(fields.balance)} has spaces around it; write the amount alone, e.g. ${fields.balance.trim()}`);
    } else if (fields.balance !== undefined && fields.balance !== '' && balanceText === undefined) {
      rowProblems.push(`${at}: balance ${show(fields.balance)} ${balanceProblem(fields.balance)}`);
    }
    const account = resolveAccount(fields.account, options, at, rowProblems);
    if (rowProblems.length > 0 || account === undefined) {
      problems.push(...rowProblems);
      continue;
    }
    const key = `${account}|${String(date)}|${String(currency)}`;
    const first = firstLineOfKey.get(key);
    if (first !== undefined) {
      problems.push(`${at}: duplicate of line ${first} (account ${account}, business_date ${String(date)}, currency ${String(currency)})`);
      continue;
    }
    firstLineOfKey.set(key, line);
    rows.push({ line, account, businessDate: date as string, currency: currency as string, balance: BigInt(balanceText!) });
  }

  if (problems.length > 0) {
    // One problem is one sentence on one line; several are listed, one per line.
    if (problems.length === 1) throw new InputFileError(`${problems[0]}; nothing was imported.`, problems);
    throw new InputFileError(`${name} has ${problems.length} problems; nothing was imported:\n${problems.map((p) => `  - ${p}`).join('\n')}`, problems);
  }
  if (rows.length === 0) throw new InputFileError(`${name} holds no rows: expected a header business_date,currency,balance[,account] and at least one row.`, [`${name}: no rows`]);
  return rows;
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

function balanceTextOf(value: unknown): string | undefined {
  if (typeof value === 'string') return BALANCE.test(value) ? value : undefined;
  if (isJsonInteger(value)) return BALANCE.test(value.value) ? value.value : undefined;
  return undefined;
}

/**
 * What is wrong with a refused balance, said as precisely as the text allows: "007" is an exact
 * integer to a person, so "not an exact integer" would send them looking for the wrong mistake.
 */
function balanceProblem(value: unknown): string {
  const general = 'is not an exact integer in minor units (digits with an optional minus, at most 38 digits; no decimal point, exponent or separators)';
  if (typeof value !== 'string') return general;
  // Leading zeros are refused rather than read: 007 may be a code, or a shifted or padded column.
  if (/^-?0+\d+$/.test(value)) return `has leading zeros; write the amount without them, e.g. ${BigInt(value).toString()}`;
  if (/^\+\d+$/.test(value)) return `has a plus sign; write the amount without it, e.g. ${value.slice(1)}`;
  if (/^-?\d{39,}$/.test(value)) return `has ${value.replace('-', '').length} digits, more than the 38 a balance can hold`;
  return general;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return `(${describeJsonValue(value)})`;
}

function readCsvRows(text: string, name: string, problems: string[]): RawRow[] {
  let records: Array<{ record: string[]; info: { lines: number } }>;
  try {
    // csv-parse handles RFC 4180 quoting, a UTF-8 BOM and CRLF; rows of the wrong width are
    // kept (relaxed) so they can be reported with the others instead of stopping at the first.
    records = parseCsv(text, { bom: true, info: true, relax_column_count: true, skip_empty_lines: true, trim: false }) as unknown as typeof records;
  } catch (error) {
    const e = error as Error & { lines?: number };
    problems.push(`${name}${e.lines === undefined ? '' : ` line ${e.lines}`}: not valid CSV: ${e.message}`);
    return [];
  }
  const [header, ...data] = records;
  if (header === undefined) return [];
  const columns = header.record.map((c) => c.trim().toLowerCase());
  const missing = REQUIRED_FIELDS.filter((f) => !columns.includes(f));
  const unknown = columns.filter((c) => !ALLOWED_FIELDS.includes(c));
  const repeated = columns.filter((c, i) => columns.indexOf(c) !== i);
  if (missing.length > 0 || unknown.length > 0 || repeated.length > 0) {
    const reasons = [
      missing.length > 0 ? `missing ${missing.join(', ')}` : '',
      unknown.length > 0 ? `unknown ${unknown.map((c) => `"${c}"`).join(', ')}` : '',
      repeated.length > 0 ? `repeated ${repeated.join(', ')}` : '',
    ].filter(Boolean);
    problems.push(`${name} line ${header.info.lines}: the header must name the columns business_date, currency, balance and optionally account (${reasons.join('; ')})`);
    return [];
  }
  const rows: RawRow[] = [];
  for (const { record, info } of data) {
    if (record.length !== columns.length) {
      problems.push(`${name} line ${info.lines}: has ${record.length} field${record.length === 1 ? '' : 's'}, the header has ${columns.length}`);
      continue;
    }
    // Every field but the balance is read without surrounding spaces; a balance with them is refused.
    rows.push({ line: info.lines, fields: Object.fromEntries(columns.map((c, i) => [c, c === 'balance' ? record[i] : record[i]?.trim()])) });
  }
  return rows;
}

function readJsonLines(text: string, name: string, problems: string[]): RawRow[] {
  const rows: RawRow[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((content, index) => {
    const line = index + 1;
    if (content.trim() === '') return;
    let value: unknown;
    try {
      value = parseJsonLosslessly(content);
    } catch (error) {
      problems.push(`${name} line ${line}: not valid JSON: ${(error as Error).message}`);
      return;
    }
    // A bare number parses to a LosslessNumber, an object too: it is not a row.
    if (value === null || typeof value !== 'object' || Array.isArray(value) || isLosslessNumber(value)) {
      problems.push(`${name} line ${line}: expected an object with business_date, currency, balance, got ${describeJsonValue(value)}`);
      return;
    }
    rows.push({ line, fields: value as Record<string, unknown> });
  });
  return rows;
}
