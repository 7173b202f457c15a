import { createRequire } from 'node:module';
import type { ParsedStatement, StatementBalance, StatementEntry } from './statement.js';
import { statementAmount } from './statement-amount.js';
import { StatementFileError } from './statement-file-error.js';

// The parser's own types: only what is read here. Its amounts are bignumber.js decimals (exact).
interface Decimal {
  toFixed(): string;
  isNegative(): boolean;
}
interface SwiftTransaction {
  date?: Date;
  entryDate?: Date;
  amount: Decimal;
  reversal?: boolean;
  reference?: string;
  bankReference?: string;
  details?: string;
  transactionType?: string;
}
interface SwiftStatement {
  accountIdentification?: string;
  number?: { statement?: string; sequence?: string };
  currency?: string;
  openingBalance?: Decimal;
  openingBalanceDate?: Date;
  closingBalance?: Decimal;
  closingBalanceDate?: Date;
  closingAvailableBalance?: Decimal;
  closingAvailableBalanceDate?: Date;
  forwardAvailableBalance?: Decimal;
  forwardAvailableBalanceDate?: Date;
  transactions: SwiftTransaction[];
}
type SwiftParser = { parse(options: { type: 'mt940'; data: string; validate?: boolean }): SwiftStatement[] };

/** Whether a file's content is a SWIFT MT940 message (bare or in `{1:…}{4:` blocks). */
export function looksLikeMt940(text: string): boolean {
  return /^\s*(?:\{1:|:20:)/.test(text.replace(/^\uFEFF/, '')) || /^:20:.*$[\s\S]*^:60[FM]:/m.test(text);
}

/**
 * Reads an MT940 file: one or more statements, each of one or more pages (`:28C:101/1`,
 * `101/2`: one statement, opened by the first page's `:60F:`, closed by the last one's
 * `:62F:`). Throws StatementFileError naming the file and the line.
 */
export function readMt940(text: string, file: string): ParsedStatement[] {
  const parser = createRequire(import.meta.url)('@centrapay/swift-parser') as SwiftParser;
  const lines = text.split(/\r?\n/);
  // Line numbers of each :20: (the parser groups a file by them, in order), for messages.
  const starts = lines.flatMap((line, i) => (/^(?:\{[^}]*\}|\{4:)*:20:/.test(line) ? [i + 1] : []));
  checkAmountTags(lines, file);
  let pages: SwiftStatement[];
  try {
    pages = parser.parse({ type: 'mt940', data: text });
  } catch (error) {
    const found = locateBadTag(lines);
    if (found !== undefined) throw new StatementFileError(`${file}, line ${found.line}: ${found.tag} cannot be read: ${found.message}.`);
    throw new StatementFileError(`${file}: not a readable MT940 message: ${(error as Error).message}.`);
  }
  if (pages.length === 0) throw new StatementFileError(`${file}: no MT940 statement (no :20: tag).`);
  const statements: ParsedStatement[] = [];
  let open: { first: SwiftStatement; pages: SwiftStatement[]; line: number } | null = null;
  pages.forEach((page, index) => {
    const line = starts[index] ?? 1;
    const at = `${file}, line ${line}`;
    const fail = (what: string): never => {
      throw new StatementFileError(`${at} (statement ${index + 1}): ${what}`);
    };
    if (page.accountIdentification === undefined) fail('no :25: account identification.');
    if (page.number?.statement === undefined || !/^\d{1,5}$/.test(page.number.statement)) fail('no :28C: statement number.');
    if (page.openingBalance === undefined || page.currency === undefined) fail('no :60F: or :60M: opening balance.');
    if (page.closingBalance === undefined) fail('no :62F: or :62M: closing balance.');
    if (open !== null && (open.first.number!.statement !== page.number!.statement || open.first.accountIdentification !== page.accountIdentification)) {
      fail(`statement ${open.first.number!.statement} (line ${open.line}) ends with an intermediate :62M: balance but its next page is missing.`);
    }
    open ??= { first: page, pages: [], line };
    open.pages.push(page);
    // The last page closes with :62F:; the parser reads both :62F: and :62M: into the same field,
    // so a page is the last when the next one is another statement or the file ends.
    const next = pages[index + 1];
    const continues = next !== undefined && next.number?.statement === page.number!.statement && next.accountIdentification === page.accountIdentification && sameDay(next.openingBalanceDate, page.closingBalanceDate) && isIntermediate(lines, starts[index + 1]);
    if (continues) return;
    statements.push(assemble(open, file, at));
    open = null;
  });
  return statements;
}

// The parser reads a balance's amount as the digits and commas it finds and ignores what
// follows (`12474;50` would be 12474): balance and entry tags are checked whole first.
const BALANCE_TAG = /^:(60[FM]|62[FM]|64|65):(.*)$/;
const BALANCE_BODY = /^[CD]\d{6}[A-Z]{3}\d{1,15},\d{0,14}$/;
const ENTRY_TAG = /^:61:(.*)$/;
const ENTRY_START = /^\d{6}(?:\d{4})?R?[CD][A-Z]?\d{1,15},\d{0,14}[A-Z][A-Z0-9]{3}/;

function checkAmountTags(lines: readonly string[], file: string): void {
  for (const [index, raw] of lines.entries()) {
    const line = raw.trimEnd();
    const balance = BALANCE_TAG.exec(line);
    if (balance !== null && !BALANCE_BODY.test(balance[2]!)) {
      throw new StatementFileError(`${file}, line ${index + 1}: :${balance[1]}: ${JSON.stringify(balance[2])} is not a balance (C or D, date YYMMDD, currency, amount with a decimal comma such as 1234,56).`);
    }
    const entry = ENTRY_TAG.exec(line);
    if (entry !== null && !ENTRY_START.test(entry[1]!)) {
      throw new StatementFileError(`${file}, line ${index + 1}: :61: ${JSON.stringify(entry[1])} is not a statement line (value date YYMMDD, [entry date MMDD], C/D/RC/RD, amount with a decimal comma, transaction type such as NTRF).`);
    }
  }
}

/**
 * The first tag the parser refuses, with its line: the parser's own messages name the tag but
 * not where it is. Each tag (with its continuation lines) is given to the parser's tag factory,
 * the step that failed, one at a time.
 */
function locateBadTag(lines: readonly string[]): { line: number; tag: string; message: string } | undefined {
  const { TagFactory } = createRequire(import.meta.url)('@centrapay/swift-parser/lib/tags.js') as { TagFactory: new () => { createTag(id: string, subId: string, data: string): unknown } };
  const factory = new TagFactory();
  let current: { line: number; id: string; subId: string; data: string[] } | null = null;
  const check = (tag: typeof current) => {
    if (tag === null) return undefined;
    try {
      factory.createTag(tag.id, tag.subId, tag.data.join('\n'));
      return undefined;
    } catch (error) {
      return { line: tag.line, tag: `:${tag.id}${tag.subId}:`, message: (error as Error).message };
    }
  };
  for (const [index, raw] of lines.entries()) {
    const line = raw.replace(/^(?:\{[^}]*\})*(?:\{4:)?/, '');
    if (line === '' || line === '-' || line.startsWith('-}')) continue;
    const match = /^:([0-9]{2}|NS)([A-Z])?:/.exec(line);
    if (match !== null) {
      const problem = check(current);
      if (problem !== undefined) return problem;
      current = { line: index + 1, id: match[1]!, subId: match[2] ?? '', data: [line.slice(match[0].length)] };
    } else if (current !== null) {
      current.data.push(line);
    } else {
      return { line: index + 1, tag: 'the text', message: 'it is not inside a tag (a line must start with a tag such as :20:)' };
    }
  }
  return check(current);
}

/** Whether the page starting at `line` opens with an intermediate :60M: balance. */
function isIntermediate(lines: string[], line: number | undefined): boolean {
  if (line === undefined) return false;
  for (let i = line; i < lines.length; i++) {
    if (/^:60M:/.test(lines[i]!)) return true;
    if (/^:60F:/.test(lines[i]!) || /^:20:/.test(lines[i]!)) return false;
  }
  return false;
}

function sameDay(a: Date | undefined, b: Date | undefined): boolean {
  return a !== undefined && b !== undefined && day(a) === day(b);
}

function day(date: Date): string {
  // The parser builds dates at UTC midnight of the day written.
  return date.toISOString().slice(0, 10);
}

function assemble(open: { first: SwiftStatement; pages: SwiftStatement[]; line: number }, file: string, at: string): ParsedStatement {
  const first = open.first;
  const last = open.pages.at(-1)!;
  const currency = first.currency!;
  const amount = (value: Decimal, tag: string): bigint => {
    const text = value.toFixed();
    const minor = statementAmount(text.replace(/^-/, ''), currency);
    if (minor === undefined) throw new StatementFileError(`${at}: ${tag} amount ${text} is not an amount in ${currency} (at most its ISO 4217 decimals).`);
    return text.startsWith('-') ? -minor : minor;
  };
  const closingDate = day(last.closingBalanceDate!);
  const balances: StatementBalance[] = [
    { code: 'OPBD', amount: amount(first.openingBalance!, ':60F:'), date: day(first.openingBalanceDate!) },
    { code: 'CLBD', amount: amount(last.closingBalance!, ':62F:'), date: closingDate },
  ];
  // The parser defaults :64: and :65: to the closing balance when absent: only those written are kept.
  if (last.closingAvailableBalance !== undefined && last.closingAvailableBalance !== last.closingBalance) {
    balances.push({ code: 'CLAV', amount: amount(last.closingAvailableBalance, ':64:'), date: day(last.closingAvailableBalanceDate ?? last.closingBalanceDate!) });
  }
  if (last.forwardAvailableBalance !== undefined && last.forwardAvailableBalance !== last.closingAvailableBalance) {
    balances.push({ code: 'FWAV', amount: amount(last.forwardAvailableBalance, ':65:'), date: day(last.forwardAvailableBalanceDate ?? last.closingBalanceDate!) });
  }
  const entries: StatementEntry[] = open.pages.flatMap((page) =>
    page.transactions.map((t) => {
      const value = amount(t.amount, ':61:');
      return {
        amount: value,
        creditDebit: value < 0n ? 'debit' : 'credit',
        status: 'BOOK',
        bookingDate: t.entryDate === undefined ? null : day(t.entryDate),
        valueDate: t.date === undefined ? null : day(t.date),
        reference: t.reference === undefined || t.reference === '' ? null : t.reference,
        bankReference: t.bankReference === undefined || t.bankReference === '' ? null : t.bankReference,
        details: t.details === undefined || t.details === '' ? null : t.details,
        reversal: t.reversal === true,
      } satisfies StatementEntry;
    }),
  );
  const account = first.accountIdentification!.replace(/\s+/g, '');
  const statementNumber = first.number!.statement!;
  return {
    format: 'mt940',
    where: `${file}, line ${open.line} (statement ${statementNumber})`,
    iban: /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(account.toUpperCase()) ? account.toUpperCase() : null,
    accountId: account,
    statementId: `${statementNumber}/${closingDate}`,
    sequence: BigInt(statementNumber),
    currency,
    intraday: false,
    businessDate: closingDate,
    fromDate: day(first.openingBalanceDate!),
    toDate: closingDate,
    balances,
    entries,
  };
}
