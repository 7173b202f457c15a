import type { ParsedStatement, StatementBalance, StatementEntry } from './statement.js';
import { statementAmount } from './statement-amount.js';
import { StatementFileError } from './statement-file-error.js';
import { calendarDate } from './statement-dates.js';

/** Whether a file's content is a SWIFT MT940/MT942 message (bare or in `{1:…}{4:` blocks). */
export function looksLikeMt940(text: string): boolean {
  return /^\s*(?:\{1:|:20:)/.test(text.replace(/^\uFEFF/, '')) || /^:20:.*$[\s\S]*^:60[FM]:/m.test(text);
}

/** One tag of the message: its name (`61`, `62F`), its text (continuation lines joined by `\n`), its line. */
interface Tag {
  name: string;
  text: string;
  line: number;
}

/** One page of a statement as written: the tags between one `:20:` and the next. */
interface Page {
  line: number;
  account: string;
  number: string;
  opening: { tag: Tag; balance: Balance; intermediate: boolean };
  closing: { tag: Tag; balance: Balance; intermediate: boolean };
  available: Array<{ code: 'CLAV' | 'FWAV'; balance: Balance }>;
  entries: StatementEntry[];
}

interface Balance {
  amount: bigint;
  date: string;
  currency: string;
}

/**
 * Reads an MT940 file (end-of-day statements) or an MT942 file (interim reports, whose
 * balances are never a closing): one or more statements, each of one or more pages
 * (`:28C:101/1`, `101/2`: one statement, opened by the first page's `:60F:`, closed by the last
 * one's `:62F:`; pages between close with `:62M:` and open with `:60M:`).
 *
 * Every amount is read from its tag's own text, exactly, in the statement currency's ISO 4217
 * minor units: more decimals than the currency has, a date that does not exist (31 November),
 * a balance in another currency than the statement's opening balance, or a tag that is not as
 * the standard writes it, refuse the file naming it and the line.
 */
export function readMt940(text: string, file: string): ParsedStatement[] {
  const tags = tagsOf(text, file);
  const messages: Tag[][] = [];
  for (const tag of tags) {
    if (tag.name === '20') messages.push([tag]);
    else if (messages.length === 0) throw new StatementFileError(`${file}, line ${tag.line}: :${tag.name}: comes before the first :20: (every statement starts with :20:).`);
    else messages.at(-1)!.push(tag);
  }
  if (messages.length === 0) throw new StatementFileError(`${file}: no MT940 statement (no :20: tag).`);
  if (messages.some((m) => m.some((t) => t.name === '34F' || t.name === '13D' || t.name === '13'))) return readMt942(messages, file);
  const pages = messages.map((m, i) => readPage(m, file, i + 1));

  const statements: ParsedStatement[] = [];
  let open: Page[] = [];
  for (const page of pages) {
    const first = open[0];
    if (first !== undefined && (first.number.split('/')[0] !== page.number.split('/')[0] || first.account !== page.account || !page.opening.intermediate)) {
      throw new StatementFileError(`${file}, line ${open.at(-1)!.closing.tag.line}: statement ${first.number.split('/')[0]} (line ${first.line}) ends with an intermediate :62M: balance but its next page is missing.`);
    }
    if (first === undefined && page.opening.intermediate) {
      throw new StatementFileError(`${file}, line ${page.opening.tag.line}: :60M: opens a continuation page of statement ${page.number.split('/')[0]} whose first page (with :60F:) is not before it.`);
    }
    open.push(page);
    if (page.closing.intermediate) continue;
    statements.push(assemble(open, file));
    open = [];
  }
  if (open.length > 0) {
    throw new StatementFileError(`${file}, line ${open.at(-1)!.closing.tag.line}: statement ${open[0]!.number.split('/')[0]} (line ${open[0]!.line}) ends with an intermediate :62M: balance but its next page is missing.`);
  }
  return statements;
}

// Characters a SWIFT message may hold (the X character set and what banks add: `?`-separated
// German :86: fields, `&`, `#`, `;`, accented letters): any control character other than a
// line break or tab refuses the file, naming the line.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

function tagsOf(text: string, file: string): Tag[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const tags: Tag[] = [];
  let current: Tag | null = null;
  for (const [index, raw] of lines.entries()) {
    const number = index + 1;
    const bad = CONTROL.exec(raw);
    if (bad !== null) throw new StatementFileError(`${file}, line ${number}: holds the control character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}, which no statement has.`);
    // Block wrappers: {1:…}{2:…}{3:…}{4: before the first tag, -} (or -}{5:…}) after the last.
    const line = raw.replace(/^(?:\{[1-3]:(?:[^{}]|\{[^{}]*\})*\})*(?:\{4:)?/, '').trimEnd();
    if (line === '' || /^-\}?(?:\{5:.*)?$/.test(line) || /^\}$/.test(line)) {
      if (line.startsWith('-')) current = null;
      continue;
    }
    const match = /^:(\d{2}[A-Z]?|NS):/.exec(line);
    if (match !== null) {
      current = { name: match[1]!, text: line.slice(match[0].length), line: number };
      tags.push(current);
    } else if (current !== null) {
      current.text += `\n${line}`;
    } else {
      throw new StatementFileError(`${file}, line ${number}: ${JSON.stringify(line.slice(0, 40))} is not inside a tag (a line must start with a tag such as :20:).`);
    }
  }
  return tags;
}

const BALANCE = /^([CD])(\d{6})([A-Z]{3})(\d{1,15},\d{0,14})$/;

function readBalance(tag: Tag, file: string, currency: string | null): Balance {
  const at = `${file}, line ${tag.line}: :${tag.name}:`;
  const match = BALANCE.exec(tag.text);
  if (match === null) throw new StatementFileError(`${at} ${JSON.stringify(tag.text)} is not a balance (C or D, date YYMMDD, currency, amount with a decimal comma such as 1234,56).`);
  const [, mark, yymmdd, ccy, text] = match as unknown as [string, string, string, string, string];
  if (currency !== null && ccy !== currency) throw new StatementFileError(`${at} is in ${ccy}, the statement (its opening balance) in ${currency}.`);
  const date = yymmddDate(yymmdd, `${at} date`);
  const amount = exactAmount(text, ccy, at);
  return { amount: mark === 'D' ? -amount : amount, date, currency: ccy };
}

function exactAmount(text: string, currency: string, at: string): bigint {
  const minor = statementAmount(text, currency);
  if (minor !== undefined) return minor;
  throw new StatementFileError(`${at} amount ${text} is not an amount in ${currency}: ${currency} has ${decimalsText(currency)}, and an amount is never rounded.`);
}

function decimalsText(currency: string): string {
  const probe = ['0', '0,0', '0,00', '0,000', '0,0000'].findLastIndex((t) => statementAmount(t.replace(/0$/, '1'), currency) !== undefined);
  return probe < 0 ? 'no ISO 4217 decimals known' : `${probe} decimal${probe === 1 ? '' : 's'} (ISO 4217)`;
}

/** `YYMMDD` as an ISO date of 20YY; a date that does not exist is refused. */
function yymmddDate(yymmdd: string, at: string): string {
  const iso = `20${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4, 6)}`;
  return calendarDate(iso) ?? fail(`${at} ${yymmdd} is not a date (${iso} does not exist).`);
}

function fail(message: string): never {
  throw new StatementFileError(message);
}

// :61: value date YYMMDD, [entry date MMDD], mark (C, D, RC, RD), [funds code], amount,
// transaction type (S/N/F + 3), reference for the account owner, [//bank reference],
// [\n supplementary details].
const ENTRY = /^(\d{6})(\d{4})?(RC|RD|C|D)([A-Z])?(\d{1,15},\d{0,14})([SNF][A-Z0-9]{3})([^\n]*?)(?:\/\/([^\n]*))?(?:\n([\s\S]*))?$/;

function readEntry(tag: Tag, details: Tag | undefined, file: string, currency: string): StatementEntry {
  const at = `${file}, line ${tag.line}: :61:`;
  const match = ENTRY.exec(tag.text);
  if (match === null) {
    throw new StatementFileError(`${at} ${JSON.stringify(tag.text.split('\n')[0])} is not a statement line (value date YYMMDD, [entry date MMDD], C/D/RC/RD, amount with a decimal comma, transaction type such as NTRF).`);
  }
  const [, value, entry, mark, , text, , reference, bankReference, supplementary] = match as unknown as [string, string, string | undefined, string, string | undefined, string, string, string, string | undefined, string | undefined];
  const valueDate = yymmddDate(value, `${at} value date`);
  const bookingDate = entry === undefined ? null : entryDate(valueDate, entry, `${at} entry date`);
  const amount = exactAmount(text, currency, at);
  // RC is the reversal of a credit (money out), RD of a debit (money in).
  const debit = mark === 'D' || mark === 'RC';
  const info = details?.text.replace(/\n/g, '') ?? (supplementary === undefined ? undefined : supplementary.replace(/\n/g, ' '));
  return {
    amount: debit ? -amount : amount,
    creditDebit: debit ? 'debit' : 'credit',
    status: 'BOOK',
    bookingDate,
    valueDate,
    reference: reference === '' ? null : reference,
    bankReference: bankReference === undefined || bankReference === '' ? null : bankReference,
    details: info === undefined || info === '' ? null : info,
    reversal: mark === 'RC' || mark === 'RD',
  };
}

/** The entry date (MMDD) in the year that puts it nearest the value date (a booking across New Year). */
function entryDate(valueDate: string, mmdd: string, at: string): string {
  const year = Number(valueDate.slice(0, 4));
  const month = Number(mmdd.slice(0, 2));
  const valueMonth = Number(valueDate.slice(5, 7));
  const entryYear = valueMonth === 12 && month === 1 ? year + 1 : valueMonth === 1 && month === 12 ? year - 1 : year;
  const iso = `${entryYear}-${mmdd.slice(0, 2)}-${mmdd.slice(2, 4)}`;
  return calendarDate(iso) ?? fail(`${at} ${mmdd} is not a date (${iso} does not exist).`);
}

function readPage(tags: Tag[], file: string, index: number): Page {
  const start = tags[0]!.line;
  const at = `${file}, line ${start} (statement ${index})`;
  const one = (names: string[], what: string): Tag => {
    const found = tags.filter((t) => names.includes(t.name));
    if (found.length === 0) throw new StatementFileError(`${at}: no ${what}.`);
    if (found.length > 1) throw new StatementFileError(`${file}, line ${found[1]!.line}: a second ${what} in the statement of line ${start}.`);
    return found[0]!;
  };
  const account = one(['25', '25P'], ':25: account identification');
  const number = one(['28C', '28'], ':28C: statement number');
  if (!/^\d{1,5}(?:\/\d{1,5})?$/.test(number.text)) throw new StatementFileError(`${file}, line ${number.line}: :28C: ${JSON.stringify(number.text)} is not a statement number (up to 5 digits, then /page).`);
  const openingTag = one(['60F', '60M'], ':60F: or :60M: opening balance');
  const closingTag = one(['62F', '62M'], ':62F: or :62M: closing balance');
  const opening = readBalance(openingTag, file, null);
  const currency = opening.currency;
  const closing = readBalance(closingTag, file, currency);
  const available: Page['available'] = [];
  const entries: StatementEntry[] = [];
  for (const [i, tag] of tags.entries()) {
    if (tag.name === '64') available.push({ code: 'CLAV', balance: readBalance(tag, file, currency) });
    else if (tag.name === '65') available.push({ code: 'FWAV', balance: readBalance(tag, file, currency) });
    else if (tag.name === '61') {
      const next = tags[i + 1];
      entries.push(readEntry(tag, next?.name === '86' ? next : undefined, file, currency));
    } else if (!['20', '21', '25', '25P', '28C', '28', '60F', '60M', '62F', '62M', '86', 'NS'].includes(tag.name)) {
      throw new StatementFileError(`${file}, line ${tag.line}: :${tag.name}: is not a tag of an MT940 statement.`);
    }
  }
  return {
    line: start,
    account: account.text.replace(/\s+/g, ''),
    number: number.text,
    opening: { tag: openingTag, balance: opening, intermediate: openingTag.name === '60M' },
    closing: { tag: closingTag, balance: closing, intermediate: closingTag.name === '62M' },
    available,
    entries,
  };
}

function assemble(pages: Page[], file: string): ParsedStatement {
  const first = pages[0]!;
  const last = pages.at(-1)!;
  const currency = first.opening.balance.currency;
  const closingDate = last.closing.balance.date;
  const balances: StatementBalance[] = [
    { code: 'OPBD', amount: first.opening.balance.amount, date: first.opening.balance.date },
    { code: 'CLBD', amount: last.closing.balance.amount, date: closingDate },
    ...last.available.map((a) => ({ code: a.code, amount: a.balance.amount, date: a.balance.date })),
  ];
  const statementNumber = first.number.split('/')[0]!;
  return {
    format: 'mt940',
    where: `${file}, line ${first.line} (statement ${statementNumber})`,
    ...accountOf(first.account),
    statementId: `${statementNumber}/${closingDate}`,
    sequence: BigInt(statementNumber),
    currency,
    intraday: false,
    businessDate: closingDate,
    fromDate: first.opening.balance.date,
    toDate: closingDate,
    balances,
    entries: pages.flatMap((p) => p.entries),
  };
}

function accountOf(account: string): { iban: string | null; accountId: string } {
  return { iban: /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(account.toUpperCase()) ? account.toUpperCase() : null, accountId: account };
}

/**
 * MT942 interim reports: `:34F:` floor limits, `:13D:` the date and time of the report, `:61:`
 * entries, `:90D:`/`:90C:` their counts and sums (checked), no opening nor closing balance. Each
 * is an intraday report: its entries are stored, its balances never taken as a closing.
 */
function readMt942(messages: Tag[][], file: string): ParsedStatement[] {
  return messages.map((tags, index) => {
    const start = tags[0]!.line;
    const at = `${file}, line ${start} (report ${index + 1})`;
    const get = (name: string) => tags.find((t) => t.name === name);
    const account = get('25') ?? get('25P') ?? fail(`${at}: no :25: account identification.`);
    const number = get('28C') ?? fail(`${at}: no :28C: statement number.`);
    if (!/^\d{1,5}(?:\/\d{1,5})?$/.test(number.text)) fail(`${file}, line ${number.line}: :28C: ${JSON.stringify(number.text)} is not a statement number.`);
    const floor = get('34F') ?? fail(`${at}: no :34F: floor limit (an MT942 names its currency there).`);
    const floorMatch = /^([A-Z]{3})[CD]?(\d{1,15},\d{0,14})$/.exec(floor.text) ?? fail(`${file}, line ${floor.line}: :34F: ${JSON.stringify(floor.text)} is not a floor limit (currency, [D or C], amount).`);
    const currency = floorMatch[1]!;
    exactAmount(floorMatch[2]!, currency, `${file}, line ${floor.line}: :34F:`);
    const stamp = get('13D') ?? get('13') ?? fail(`${at}: no :13D: date and time of the report.`);
    const stampMatch = /^(\d{6})(\d{4})?/.exec(stamp.text) ?? fail(`${file}, line ${stamp.line}: :13D: ${JSON.stringify(stamp.text)} is not a date and time (YYMMDDhhmm±hhmm).`);
    const date = yymmddDate(stampMatch[1]!, `${file}, line ${stamp.line}: :13D:`);
    const entries: StatementEntry[] = [];
    for (const [i, tag] of tags.entries()) {
      if (tag.name !== '61') continue;
      const next = tags[i + 1];
      entries.push(readEntry(tag, next?.name === '86' ? next : undefined, file, currency));
    }
    const totals: Array<['90D' | '90C', bigint]> = [
      ['90D', entries.filter((e) => e.creditDebit === 'debit').reduce((s, e) => s - e.amount, 0n)],
      ['90C', entries.filter((e) => e.creditDebit === 'credit').reduce((s, e) => s + e.amount, 0n)],
    ];
    for (const [name, sum] of totals) {
      const tag = get(name);
      if (tag === undefined) continue;
      const m = /^(\d{1,5})([A-Z]{3})(\d{1,15},\d{0,14})$/.exec(tag.text) ?? fail(`${file}, line ${tag.line}: :${name}: ${JSON.stringify(tag.text)} is not a count, currency and sum.`);
      if (m[2] !== currency) fail(`${file}, line ${tag.line}: :${name}: is in ${m[2]}, the report (its :34F:) in ${currency}.`);
      const count = entries.filter((e) => (name === '90D' ? e.creditDebit === 'debit' : e.creditDebit === 'credit')).length;
      const written = exactAmount(m[3]!, currency, `${file}, line ${tag.line}: :${name}:`);
      if (Number(m[1]) !== count || written !== sum) fail(`${file}, line ${tag.line}: :${name}: says ${Number(m[1])} entries of ${m[3]}, the report's :61: lines are ${count} (sum in minor units ${sum}).`);
    }
    const statementNumber = number.text.split('/')[0]!;
    return {
      format: 'mt942',
      where: `${file}, line ${start} (report ${statementNumber})`,
      ...accountOf(account.text.replace(/\s+/g, '')),
      statementId: `${statementNumber}/${date}/${stamp.text}`,
      sequence: null,
      currency,
      intraday: true,
      businessDate: date,
      fromDate: date,
      toDate: date,
      balances: [],
      entries,
    } satisfies ParsedStatement;
  });
}
