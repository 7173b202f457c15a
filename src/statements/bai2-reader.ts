import { currencyDecimals } from '../money/format-amount.js';
import type { ParsedStatement, StatementBalance, StatementEntry } from './statement.js';
import { StatementFileError } from './statement-file-error.js';
import { calendarDate } from './statement-dates.js';

/** Whether a file's content is a BAI2 file: its first record is a file header (`01,`). `\s` takes a byte order mark too. */
export function looksLikeBai2(text: string): boolean {
  return /^\s*01,/.test(text);
}

/**
 * One logical record: its code, the line it starts on, and its physical parts (the record's own
 * line, then each `88` continuation), each part the text after the record code (or `88,`).
 */
interface Bai2Record {
  code: string;
  line: number;
  parts: Array<{ text: string; line: number }>;
}

// The status (balance) type codes this tool keeps, as the ISO 20022 codes the other formats use.
const BALANCE_CODES: Readonly<Record<string, string>> = { '010': 'OPBD', '015': 'CLBD', '040': 'OPAV', '045': 'CLAV' };

// Any control character other than a line break or tab refuses the file, naming the line.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/**
 * Reads a BAI2 file (Cash Management Balance Reporting, version 2): a file header (01), groups
 * (02 … 98) of one as-of date each, accounts (03 … 49) in them, transaction details (16), and
 * continuations (88) of any record. Each account of a group is one statement: its business date
 * is the group's as-of date, its balances the 03 record's opening and closing ledger (010, 015)
 * and opening and closing available (040, 045), its entries the 16 records (type codes 100–399
 * credits, 400–699 debits). Amounts are whole numbers of the currency's minor units (ISO 4217
 * decimals: cents for USD, yen for JPY, fils for KWD).
 *
 * Checked as the specification defines them, each refusing the file naming it and the line:
 * the account control total (49: the sum of every amount of the account's 03 and 16 records) and
 * its record count (03 to 49, continuations included); the group control total (98: the sum of
 * its accounts' totals), its number of accounts and records (02 to 98); the file control total
 * (99), its number of groups and records (01 to 99).
 */
export function readBai2(text: string, file: string): ParsedStatement[] {
  const records = recordsOf(text, file);
  const reader = new Bai2Reader(records, file);
  return reader.read();
}

function fail(message: string): never {
  throw new StatementFileError(message);
}

function recordsOf(text: string, file: string): Bai2Record[] {
  const records: Bai2Record[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (const [index, raw] of lines.entries()) {
    const number = index + 1;
    const bad = CONTROL.exec(raw);
    if (bad !== null) fail(`${file}, line ${number}: holds the control character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}, which no statement has.`);
    // Fixed-length files pad their records with spaces.
    const line = raw.trimEnd();
    if (line === '') continue;
    const match = /^(\d{2}),/.exec(line);
    if (match === null) fail(`${file}, line ${number}: ${JSON.stringify(line.slice(0, 40))} is not a BAI2 record (a record starts with its two-digit code and a comma, such as 16,).`);
    const code = match[1]!;
    const body = line.slice(match[0].length);
    if (code === '88') {
      const previous = records.at(-1) ?? fail(`${file}, line ${number}: a continuation (88) before any record.`);
      previous.parts.push({ text: body, line: number });
      continue;
    }
    if (!['01', '02', '03', '16', '49', '98', '99'].includes(code)) fail(`${file}, line ${number}: record code ${code} is not one of BAI2's (01, 02, 03, 16, 88, 49, 98, 99).`);
    records.push({ code, line: number, parts: [{ text: body, line: number }] });
  }
  return records;
}

/** A record's fields up to its `/` terminator, each part (line and continuations) on its own; at least one, maybe empty. */
function fieldsOf(part: string): string[] {
  const end = part.indexOf('/');
  return (end < 0 ? part : part.slice(0, end)).split(',');
}

/** All fields of a record that has no text field: its parts' fields one after the other. */
function allFields(record: Bai2Record): string[] {
  return record.parts.flatMap((p) => fieldsOf(p.text));
}

const YYMMDD = /^\d{6}$/;

function dateOf(yymmdd: string, at: string, what: string): string {
  if (!YYMMDD.test(yymmdd)) fail(`${at}: ${what} ${JSON.stringify(yymmdd)} is not a date (YYMMDD).`);
  const iso = `20${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
  return calendarDate(iso) ?? fail(`${at}: ${what} ${yymmdd} is not a date (${iso} does not exist).`);
}

/** `HHMM` as `HH:MM:SS`; 2400 and 9999 are the end of the day, as the specification allows. */
function timeOf(hhmm: string, at: string, what: string): string | null {
  if (hhmm === '') return null;
  if (hhmm === '2400' || hhmm === '9999') return '23:59:59';
  const match = /^([01]\d|2[0-3])([0-5]\d)$/.exec(hhmm) ?? fail(`${at}: ${what} ${JSON.stringify(hhmm)} is not a time (HHMM, 0000 to 2400).`);
  return `${match[1]}:${match[2]}:00`;
}

function countOf(text: string, at: string, what: string): number {
  if (!/^\d{1,9}$/.test(text)) fail(`${at}: ${what} ${JSON.stringify(text)} is not a number.`);
  return Number(text);
}

/** A control total: a whole number of minor units, optionally signed. */
function totalOf(text: string, at: string, what: string): bigint {
  if (!/^[+-]?\d{1,20}$/.test(text)) fail(`${at}: ${what} ${JSON.stringify(text)} is not an amount (whole minor units, optionally signed).`);
  return BigInt(text);
}

interface Group {
  asOfDate: string;
  asOfTime: string | null;
  currency: string;
  interim: boolean;
  line: number;
}

interface AccountAmounts {
  balances: StatementBalance[];
  total: bigint;
}

class Bai2Reader {
  #index = 0;
  readonly #records: Bai2Record[];
  readonly #file: string;

  constructor(records: Bai2Record[], file: string) {
    this.#records = records;
    this.#file = file;
  }

  #at(line: number): string {
    return `${this.#file}, line ${line}`;
  }

  #next(expected: string, what: string): Bai2Record {
    const record = this.#records[this.#index];
    if (record === undefined) fail(`${this.#file}: ends before its ${what} (${expected}).`);
    if (record.code !== expected) fail(`${this.#at(record.line)}: a ${record.code} record where the ${what} (${expected}) belongs.`);
    this.#index++;
    return record;
  }

  #peek(): string | undefined {
    return this.#records[this.#index]?.code;
  }

  /** How many physical records (lines) a logical one spans: itself and its continuations. */
  static lines(record: Bai2Record): number {
    return record.parts.length;
  }

  read(): ParsedStatement[] {
    if (this.#records.length === 0) fail(`${this.#file}: no BAI2 record.`);
    const header = this.#next('01', 'file header');
    const fields = allFields(header);
    const at = this.#at(header.line);
    if (fields.length < 5) fail(`${at}: the file header has ${fields.length} fields, at least 5 are needed (sender, receiver, creation date, creation time, file id).`);
    const created = dateOf(fields[2]!, at, 'file creation date');
    const createdTime = timeOf(fields[3]!, at, 'file creation time');
    const fileId = fields[4]!.trim();
    if (fileId === '') fail(`${at}: the file header has no file identification number.`);
    if (fields[7] !== undefined && fields[7] !== '' && fields[7] !== '2') fail(`${at}: version ${JSON.stringify(fields[7])} is not BAI version 2.`);
    const createdAt = createdTime === null ? null : `${created}T${createdTime}`;
    let records = Bai2Reader.lines(header);
    let total = 0n;
    let groups = 0;
    const statements: ParsedStatement[] = [];
    while (this.#peek() === '02') {
      const group = this.#group(fileId, createdAt);
      statements.push(...group.statements);
      records += group.records;
      total += group.total;
      groups++;
    }
    const trailer = this.#next('99', groups === 0 ? 'first group header (02)' : 'file trailer');
    const t = allFields(trailer);
    const tat = this.#at(trailer.line);
    records += Bai2Reader.lines(trailer);
    const writtenTotal = totalOf(t[0]!, tat, 'file control total');
    const writtenGroups = countOf(t[1] ?? '', tat, 'number of groups');
    const writtenRecords = countOf(t[2] ?? '', tat, 'number of records');
    if (writtenTotal !== total) fail(`${tat}: the file control total is ${writtenTotal}, its groups' control totals add up to ${total}.`);
    if (writtenGroups !== groups) fail(`${tat}: the file trailer says ${writtenGroups} groups, the file has ${groups}.`);
    if (writtenRecords !== records) fail(`${tat}: the file trailer says ${writtenRecords} records, the file has ${records} (01 to 99, continuations included).`);
    const extra = this.#records[this.#index];
    if (extra !== undefined) fail(`${this.#at(extra.line)}: a ${extra.code} record after the file trailer (99).`);
    return statements;
  }

  #group(fileId: string, createdAt: string | null): { statements: ParsedStatement[]; records: number; total: bigint } {
    const header = this.#next('02', 'group header');
    const fields = allFields(header);
    const at = this.#at(header.line);
    const status = fields[2] ?? '';
    if (!['1', '2', '3', '4'].includes(status)) fail(`${at}: group status ${JSON.stringify(status)} is not 1 (update), 2 (deletion), 3 (correction) or 4 (test only).`);
    if (status !== '1') fail(`${at}: group status ${status} (${status === '2' ? 'deletion' : status === '3' ? 'correction' : 'test only'}) is not imported: only a group of status 1 (update) is a statement of the account.`);
    const asOfDate = dateOf(fields[3] ?? '', at, 'as-of date');
    const asOfTime = timeOf(fields[4] ?? '', at, 'as-of time');
    const currency = (fields[5] ?? '') === '' ? 'USD' : fields[5]!;
    const modifier = fields[6] ?? '';
    if (!['', '1', '2', '3', '4'].includes(modifier)) fail(`${at}: as-of date modifier ${JSON.stringify(modifier)} is not 1 to 4.`);
    const group: Group = { asOfDate, asOfTime, currency, interim: modifier === '1' || modifier === '3', line: header.line };
    let records = Bai2Reader.lines(header);
    let total = 0n;
    const statements: ParsedStatement[] = [];
    while (this.#peek() === '03') {
      const account = this.#account(group, fileId, createdAt);
      statements.push(account.statement);
      records += account.records;
      total += account.total;
    }
    const trailer = this.#next('98', statements.length === 0 ? 'first account identifier (03)' : 'group trailer');
    const t = allFields(trailer);
    const tat = this.#at(trailer.line);
    records += Bai2Reader.lines(trailer);
    const writtenTotal = totalOf(t[0]!, tat, 'group control total');
    const writtenAccounts = countOf(t[1] ?? '', tat, 'number of accounts');
    const writtenRecords = countOf(t[2] ?? '', tat, 'number of records');
    if (writtenTotal !== total) fail(`${tat}: the group control total is ${writtenTotal}, its accounts' control totals add up to ${total}.`);
    if (writtenAccounts !== statements.length) fail(`${tat}: the group trailer says ${writtenAccounts} accounts, the group (line ${header.line}) has ${statements.length}.`);
    if (writtenRecords !== records) fail(`${tat}: the group trailer says ${writtenRecords} records, the group (line ${header.line}) has ${records} (02 to 98, continuations included).`);
    return { statements, records, total };
  }

  #account(group: Group, fileId: string, createdAt: string | null): { statement: ParsedStatement; records: number; total: bigint } {
    const header = this.#next('03', 'account identifier');
    const at = this.#at(header.line);
    const first = fieldsOf(header.parts[0]!.text);
    const accountNumber = first[0]!.trim();
    if (accountNumber === '') fail(`${at}: the account identifier has no account number.`);
    const currency = (first[1] ?? '') === '' ? group.currency : first[1]!;
    if (!/^[A-Z]{3}$/.test(currency) || currencyDecimals(currency) === null) fail(`${at}: currency ${JSON.stringify(currency)} is not an ISO 4217 currency with known minor units.`);
    const amounts = this.#summary(header, group.asOfDate);
    let records = Bai2Reader.lines(header);
    let total = amounts.total;
    const entries: StatementEntry[] = [];
    while (this.#peek() === '16') {
      const detail = this.#next('16', 'transaction detail');
      const entry = this.#detail(detail, group.asOfDate);
      entries.push(entry);
      records += Bai2Reader.lines(detail);
      // The control total adds the amount as written: a debit's, stored negative, unsigned.
      total += entry.creditDebit === 'debit' ? -entry.amount : entry.amount;
    }
    const trailer = this.#next('49', 'account trailer');
    const t = allFields(trailer);
    const tat = this.#at(trailer.line);
    records += Bai2Reader.lines(trailer);
    const writtenTotal = totalOf(t[0]!, tat, 'account control total');
    const writtenRecords = countOf(t[1] ?? '', tat, 'number of records');
    if (writtenTotal !== total) fail(`${tat}: the account control total of account ${accountNumber} is ${writtenTotal}, the amounts of its 03 and 16 records (line ${header.line} on) add up to ${total}.`);
    if (writtenRecords !== records) fail(`${tat}: the account trailer of account ${accountNumber} says ${writtenRecords} records, the account (line ${header.line}) has ${records} (03 to 49, continuations included).`);
    const hasClosing = amounts.balances.some((b) => b.code === 'CLBD');
    const statement: ParsedStatement = {
      format: 'bai2',
      where: `${this.#file}, line ${header.line} (account ${accountNumber})`,
      iban: null,
      accountId: accountNumber,
      statementId: `${group.asOfDate}/${fileId}`,
      sequence: null,
      currency,
      // A report without a closing ledger, or of an interim as-of date, is never a closing.
      intraday: group.interim || !hasClosing,
      businessDate: group.asOfDate,
      fromDate: group.asOfDate,
      toDate: group.asOfDate,
      balances: amounts.balances,
      entries,
      createdAt,
    };
    return { statement, records, total };
  }

  /**
   * The 03 record's summary and status fields after account number and currency: groups of type
   * code, amount, item count and funds type (with the funds type's own fields). Each physical
   * part is read on its own: a part that ends (`/`) inside a group leaves the rest of it defaulted.
   */
  #summary(record: Bai2Record, asOfDate: string): AccountAmounts {
    const balances: StatementBalance[] = [];
    let total = 0n;
    const seen = new Map<string, number>();
    for (const [p, part] of record.parts.entries()) {
      const fields = new FieldCursor(part.text);
      const at = this.#at(part.line);
      if (p === 0) fields.skip(2);
      while (!fields.done()) {
        const typeCode = fields.next();
        if (!/^\d{3}$/.test(typeCode)) fail(`${at}: type code ${JSON.stringify(typeCode)} is not three digits.`);
        const amountText = fields.next();
        const count = fields.next();
        if (count !== '' && !/^\d{1,9}$/.test(count)) fail(`${at}: item count ${JSON.stringify(count)} of type code ${typeCode} is not a number.`);
        readFunds(fields, at, asOfDate);
        if (amountText === '') continue;
        const status = Number(typeCode) < 100;
        // Status (balance) amounts may carry a sign; summary amounts are unsigned.
        if (!(status ? /^[+-]?\d{1,20}$/ : /^\d{1,20}$/).test(amountText)) {
          fail(`${at}: amount ${JSON.stringify(amountText)} of type code ${typeCode} is not ${status ? 'a whole number of minor units (a sign allowed)' : 'an unsigned whole number of minor units'}.`);
        }
        const amount = BigInt(amountText);
        total += amount;
        const code = BALANCE_CODES[typeCode];
        if (code === undefined) continue;
        const first = seen.get(typeCode);
        if (first !== undefined) fail(`${at}: type code ${typeCode} a second time for the account (first on line ${first}).`);
        seen.set(typeCode, part.line);
        balances.push({ code, amount, date: asOfDate });
      }
    }
    return { balances, total };
  }

  /** A 16 record: type code, amount, funds type (and its fields), bank and customer references, text. */
  #detail(record: Bai2Record, asOfDate: string): StatementEntry {
    const at = this.#at(record.line);
    const fields = new FieldCursor(record.parts[0]!.text);
    const typeCode = fields.next();
    if (!/^\d{3}$/.test(typeCode)) fail(`${at}: transaction type code ${JSON.stringify(typeCode)} is not three digits.`);
    const code = Number(typeCode);
    if (code < 100 || code >= 700) fail(`${at}: transaction type code ${typeCode} is neither a credit (100 to 399) nor a debit (400 to 699): its direction is not defined, and an amount's sign is never guessed.`);
    const amountText = fields.next();
    if (!/^\d{1,20}$/.test(amountText)) fail(`${at}: amount ${JSON.stringify(amountText)} of the transaction is not an unsigned whole number of minor units.`);
    const valueDate = readFunds(fields, at, asOfDate);
    const bankReference = fields.next();
    const reference = fields.next();
    // The text is the rest of the record (commas and slashes included), continued by its 88s.
    const texts = [fields.rest(), ...record.parts.slice(1).map((p) => p.text)].map((t) => t.replace(/\/\s*$/, '').trim()).filter((t) => t !== '');
    const amount = BigInt(amountText);
    const debit = code >= 400;
    return {
      amount: debit ? -amount : amount,
      creditDebit: debit ? 'debit' : 'credit',
      status: 'BOOK',
      bookingDate: asOfDate,
      valueDate,
      reference: reference === '' ? null : reference,
      bankReference: bankReference === '' ? null : bankReference,
      details: texts.length === 0 ? null : texts.join(' '),
      reversal: false,
    };
  }
}

/**
 * The comma-separated fields of one physical record, read in turn. A `/` ends the fields: every
 * field after it is defaulted (empty).
 */
class FieldCursor {
  readonly #text: string;
  #at = 0;
  #ended = false;

  constructor(text: string) {
    this.#text = text;
  }

  /** Whether no field is left (the text or its `/` reached). */
  done(): boolean {
    return this.#ended || this.#at >= this.#text.length;
  }

  next(): string {
    if (this.done()) return '';
    const comma = this.#text.indexOf(',', this.#at);
    const end = comma < 0 ? this.#text.length : comma;
    const field = this.#text.slice(this.#at, end);
    const slash = field.indexOf('/');
    if (slash >= 0) {
      this.#ended = true;
      return field.slice(0, slash);
    }
    // Past the last field (no comma after it), #at is beyond the text: done.
    this.#at = end + 1;
    return field;
  }

  skip(count: number): void {
    for (let i = 0; i < count; i++) this.next();
  }

  /** The text after the fields read: a 16 record's text field, whatever it holds. */
  rest(): string {
    return this.done() ? '' : this.#text.slice(this.#at);
  }
}

/**
 * Reads a funds type and its own fields: blank, Z, 0, 1 or 2 alone; S three amounts (immediate,
 * one day, two or more days); V a value date and time; D a count of distributions, then that many
 * days and amounts. Their amounts are availability, not money moved: they count in no control
 * total. Returns the value date: the V date, the as-of date for 0 (immediate), else none.
 */
function readFunds(fields: FieldCursor, at: string, asOfDate: string): string | null {
  const type = fields.next();
  switch (type) {
    case '':
    case 'Z':
    case '1':
    case '2':
      return null;
    case '0':
      return asOfDate;
    case 'S':
      for (let i = 0; i < 3; i++) availability(fields.next(), at);
      return null;
    case 'V': {
      const date = dateOf(fields.next(), at, 'value date');
      timeOf(fields.next(), at, 'value time');
      return date;
    }
    case 'D': {
      const count = countOf(fields.next(), at, 'number of distributions');
      for (let i = 0; i < count; i++) {
        countOf(fields.next(), at, 'days of a distribution');
        availability(fields.next(), at);
      }
      return null;
    }
    default:
      return fail(`${at}: funds type ${JSON.stringify(type)} is not one of 0, 1, 2, S, V, D, Z.`);
  }
}

function availability(text: string, at: string): void {
  if (text !== '' && !/^[+-]?\d{1,20}$/.test(text)) fail(`${at}: availability amount ${JSON.stringify(text)} is not a whole number of minor units.`);
}
