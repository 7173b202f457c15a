import { SaxesParser } from 'saxes';
import type { ParsedStatement, StatementBalance, StatementEntry, StatementPage } from './statement.js';
import { statementAmount } from './statement-amount.js';
import { StatementFileError } from './statement-file-error.js';

// camt.053 (end-of-day statements), camt.052 (intraday reports) and camt.054 (debit/credit
// notifications), versions .02 to .13: the elements read here kept their names and places across
// those versions, except the entry status, a text until .08 and a `Cd` inside it from .09, and the
// charges of an entry, `Chrgs` repeated with its own `Amt` until .02 and `Chrgs/Rcrd` from .03.
const NAMESPACE = /^urn:iso:std:iso:20022:tech:xsd:(camt\.05[234])\.001\.(\d{2})$/;
const REPEATED = new Set(['Stmt', 'Rpt', 'Ntfctn', 'Bal', 'Ntry', 'NtryDtls', 'TxDtls', 'Ustrd', 'AddtlNtryInf', 'Chrgs', 'Rcrd']);
const KINDS = {
  'camt.053': { message: 'BkToCstmrStmt', tag: 'Stmt', intraday: false },
  'camt.052': { message: 'BkToCstmrAcctRpt', tag: 'Rpt', intraday: true },
  'camt.054': { message: 'BkToCstmrDbtCdtNtfctn', tag: 'Ntfctn', intraday: true },
} as const;
type CamtKind = keyof typeof KINDS;

type Node = Record<string, unknown>;

/** Deeper than this, an XML file is refused: a camt statement is about 10 elements deep. */
const MAX_DEPTH = 64;

/** Whether a file's content is ISO 20022 XML (the reader then says whether it is a camt it knows). */
export function looksLikeXml(text: string): boolean {
  return /^\s*(?:\uFEFF)?</.test(text);
}

/** A statement of a camt file as read, without its entries (they are handed over one by one as they are read). */
export type CamtStatementHead = Omit<ParsedStatement, 'entries'>;

/** What a CamtStream hands over while it reads: each entry as it closes, each statement once it ends. */
export interface CamtHandlers {
  /** An entry of statement `index` (0-based, in the file's order). */
  entry?: (entry: StatementEntry, index: number) => void;
  /** A statement that ended, checked whole (its entries were handed over before). */
  statement?: (head: CamtStatementHead, index: number, entries: number) => void;
}

/**
 * Reads a camt.053, camt.052 or camt.054 file as it streams: text is written in chunks, and each
 * entry is handed over (then forgotten) as soon as its element closes, so a file of a million
 * entries is never held whole. Every number is read as the text the file holds, so no amount
 * passes through a float. Throws StatementFileError naming the file and the line (malformed XML)
 * or the element (a missing or wrong value).
 *
 * Refused, naming the file, the line and column and the element path: a DTD (`<!DOCTYPE`, so no
 * entity is ever declared, let alone expanded, and no external one fetched), an entity other than
 * XML's five and numeric character references (which are decoded), a character XML does not allow
 * (NUL and other control characters), nesting deeper than MAX_DEPTH, and anything not well-formed.
 */
export class CamtStream {
  private readonly parser = new SaxesParser({ position: true });
  private readonly stack: Array<{ node: Node; name: string }> = [{ node: {}, name: '' }];
  private kind: CamtKind | undefined;
  private header: Node = {};
  private messageSeen = false;
  private statements = 0;
  // The statement being read: its entries so far, the currencies they were in, the latest booking date.
  private entryCount = 0;
  private entryCurrencies = new Map<string, number>();
  private latestBooking: string | undefined;

  constructor(
    private readonly file: string,
    private readonly handlers: CamtHandlers,
  ) {
    const { parser, stack } = this;
    parser.on('error', (error) => this.refuse('not well-formed XML', error.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '')));
    parser.on('doctype', () => this.refuse('a document type declaration (<!DOCTYPE)', 'refused, a statement has none, and no entity it declares is ever expanded.'));
    parser.on('opentag', (tag) => {
      if (stack.length > MAX_DEPTH) this.refuse(`elements nested deeper than ${MAX_DEPTH} levels`, 'refused, a statement is about 10 deep.');
      const name = tag.name.replace(/^[^:]*:/, '');
      const attributes = tag.attributes as Record<string, string>;
      if (stack.length === 1) this.recognise(attributes);
      const node: Node = {};
      for (const [key, value] of Object.entries(attributes)) node[`@${key.replace(/^[^:]*:/, '')}`] = value;
      const parent = stack.at(-1)!.node;
      if (REPEATED.has(name)) ((parent[name] ??= []) as Node[]).push(node);
      else if (parent[name] === undefined) parent[name] = node;
      stack.push({ node, name });
      if (stack.length === 3 && name === KINDS[this.kind!].message) this.messageSeen = true;
    });
    parser.on('text', (value) => {
      if (stack.length <= 1) return;
      const node = stack.at(-1)!.node;
      // Whitespace between elements is not kept: a statement's own node would grow with every entry.
      if (node['#text'] === undefined && /^\s*$/.test(value)) return;
      node['#text'] = ((node['#text'] as string | undefined) ?? '') + value;
    });
    parser.on('cdata', (value) => {
      const node = stack.at(-1)!.node;
      node['#text'] = ((node['#text'] as string | undefined) ?? '') + value;
    });
    parser.on('closetag', () => this.closed());
  }

  /** Reads the next piece of the file's text. */
  write(text: string): void {
    this.parser.write(text);
  }

  /** The end of the file: refused if the document is incomplete or holds no statement. */
  close(): void {
    this.parser.close();
    if (this.kind === undefined) this.noNamespace();
    const { message, tag } = KINDS[this.kind!];
    if (!this.messageSeen) throw new StatementFileError(`${this.file}: no Document/${message} element.`);
    if (this.statements === 0) throw new StatementFileError(`${this.file}: no ${tag} element: the file holds no statement.`);
  }

  private refuse(what: string, detail?: string): never {
    const names = this.stack.slice(1).map((s) => s.name);
    const path = (names.length > 8 ? [...names.slice(0, 3), `… ${names.length - 5} more …`, ...names.slice(-2)] : names).join('/');
    throw new StatementFileError(`${this.file}: ${what} at line ${this.parser.line}, column ${this.parser.column}${path === '' ? '' : ` (${path})`}${detail === undefined ? '.' : `: ${detail}`}`);
  }

  private noNamespace(): never {
    throw new StatementFileError(`${this.file}: an XML file without an ISO 20022 camt.053, camt.052 or camt.054 namespace (urn:iso:std:iso:20022:tech:xsd:camt.053.001.02 to .13).`);
  }

  /** The root element says which camt it is, by its namespace. */
  private recognise(attributes: Record<string, string>): void {
    const names = Object.entries(attributes).filter(([key]) => key === 'xmlns' || key.startsWith('xmlns:'));
    const known = names.map(([, value]) => NAMESPACE.exec(value)).find((m) => m !== null);
    if (known === undefined || known === null) this.noNamespace();
    const version = Number(known[2]);
    if (version < 2 || version > 13) throw new StatementFileError(`${this.file}: namespace ${known[0]} is not read: versions 001.02 to 001.13 are.`);
    this.kind = known[1] as CamtKind;
  }

  private closed(): void {
    const { stack } = this;
    const depth = stack.length;
    const { node, name } = stack.pop()!;
    if (typeof node['#text'] === 'string') node['#text'] = node['#text'].trim();
    const kind = this.kind === undefined ? undefined : KINDS[this.kind];
    if (kind === undefined || !this.messageSeen) return;
    // Document/message/Stmt/Ntry: an entry, handed over and dropped from its statement.
    if (depth === 5 && name === 'Ntry' && stack[3]!.name === kind.tag && stack[2]!.name === kind.message) {
      const statement = stack[3]!.node;
      (statement.Ntry as Node[]).pop();
      this.entryCount += 1;
      const where = `${kind.tag}[${this.statements + 1}]/Ntry[${this.entryCount}]`;
      const { entry, currency } = readEntry(node, where, this.failAt(`${kind.tag}[${this.statements + 1}]`));
      if (!this.entryCurrencies.has(currency)) this.entryCurrencies.set(currency, this.entryCount);
      if (entry.bookingDate !== null && (this.latestBooking === undefined || entry.bookingDate > this.latestBooking)) this.latestBooking = entry.bookingDate;
      this.handlers.entry?.(entry, this.statements);
      return;
    }
    if (depth === 4 && name === kind.tag && stack[2]!.name === kind.message) {
      const message = stack[2]!.node;
      (message[kind.tag] as Node[]).pop();
      const path = `${kind.tag}[${this.statements + 1}]`;
      const fail = this.failAt(path);
      const head = readHead(node, path, this.file, this.kind!, this.latestBooking, fail);
      for (const [currency, index] of this.entryCurrencies) {
        if (currency !== head.currency) fail(`Ntry[${index}]/Amt`, `is in ${currency}, the statement in ${head.currency}.`);
      }
      const header = child(message, 'GrpHdr');
      const created = textOf(node, 'CreDtTm') ?? (header === undefined ? undefined : textOf(header, 'CreDtTm')) ?? null;
      this.handlers.statement?.({ ...head, createdAt: created }, this.statements, this.entryCount);
      this.statements += 1;
      this.entryCount = 0;
      this.entryCurrencies = new Map();
      this.latestBooking = undefined;
    }
  }

  private failAt(path: string): Fail {
    return (where, what) => {
      throw new StatementFileError(`${this.file}: ${path}/${where} ${what}`);
    };
  }
}

/**
 * Reads a whole camt.053, camt.052 or camt.054 text into its statements (reports, notifications),
 * entries included: for files read at once (tests, samples). `statements import` streams instead.
 */
export function readCamt(text: string, file: string): ParsedStatement[] {
  const statements: ParsedStatement[] = [];
  let entries: StatementEntry[] = [];
  const reader = new CamtStream(file, {
    entry: (entry) => entries.push(entry),
    statement: (head) => {
      statements.push({ ...head, entries });
      entries = [];
    },
  });
  reader.write(text);
  reader.close();
  return statements;
}

type Fail = (where: string, what: string) => never;

function readEntry(n: Node, where: string, fail: Fail): { entry: StatementEntry; currency: string } {
  const inner: Fail = (w, what) => fail(`${where.replace(/^[^/]*\//, '')}/${w}`, what);
  const { amount, currency } = amountOf(n, 'Amt', inner);
  const value = signed(amount, n, 'CdtDbtInd', inner);
  const stsNode = child(n, 'Sts');
  const status = stsNode === undefined ? undefined : (textOf(stsNode, 'Cd') ?? textOf(n, 'Sts'));
  if (status === undefined) inner('Sts', 'is missing.');
  const tx = child(((n.NtryDtls as Node[] | undefined) ?? [])[0] ?? {}, 'TxDtls');
  const refs = tx === undefined ? undefined : child(tx, 'Refs');
  const rmt = tx === undefined ? undefined : child(tx, 'RmtInf');
  const info = texts(n.AddtlNtryInf);
  const charges = chargesOf(n, currency, inner);
  return {
    currency,
    entry: {
      amount: value,
      creditDebit: value < 0n || textOf(n, 'CdtDbtInd') === 'DBIT' ? 'debit' : 'credit',
      status: status!,
      bookingDate: dateOf(n, 'BookgDt', 'BookgDt', inner) ?? null,
      valueDate: dateOf(n, 'ValDt', 'ValDt', inner) ?? null,
      reference: (refs === undefined ? undefined : textOf(refs, 'EndToEndId')) ?? textOf(n, 'NtryRef') ?? null,
      bankReference: textOf(n, 'AcctSvcrRef') ?? (refs === undefined ? undefined : textOf(refs, 'AcctSvcrRef')) ?? null,
      details: (rmt === undefined ? undefined : texts(rmt.Ustrd)) ?? info ?? null,
      reversal: textOf(n, 'RvslInd') === 'true',
      ...(charges === null ? {} : { charges }),
    },
  };
}

/**
 * The charges of an entry, kept apart from its amount (which is what was booked): the sum of its
 * charge records (`Chrgs/Rcrd`, from version .03; `Chrgs` itself before), a charge without a
 * credit/debit mark counting as a debit. Null when the entry names none.
 */
function chargesOf(n: Node, currency: string, fail: Fail): bigint | null {
  const groups = (n.Chrgs as Node[] | undefined) ?? [];
  if (groups.length === 0) return null;
  let total: bigint | null = null;
  groups.forEach((group, g) => {
    const records = (group.Rcrd as Node[] | undefined) ?? (group.Amt === undefined ? [] : [group]);
    records.forEach((record, r) => {
      const where = group.Rcrd === undefined ? `Chrgs[${g + 1}]` : `Chrgs[${g + 1}]/Rcrd[${r + 1}]`;
      const { amount, currency: chargeCurrency } = amountOf(record, `${where}/Amt`, fail);
      if (chargeCurrency !== currency) fail(`${where}/Amt`, `is in ${chargeCurrency}, the entry in ${currency}.`);
      const mark = textOf(record, 'CdtDbtInd');
      total = (total ?? 0n) + (mark === 'CRDT' ? amount : -amount);
    });
  });
  return total;
}

function readHead(s: Node, path: string, file: string, kind: CamtKind, latestBooking: string | undefined, fail: Fail): Omit<CamtStatementHead, 'createdAt'> {
  const { intraday } = KINDS[kind];
  const id = textOf(s, 'Id') ?? fail('Id', 'is missing: every statement needs its identification.');
  const acct = child(s, 'Acct') ?? fail('Acct', 'is missing.');
  const acctId = child(acct, 'Id') ?? fail('Acct/Id', 'is missing.');
  const iban = textOf(acctId, 'IBAN') ?? null;
  const other = child(acctId, 'Othr');
  const accountId = other === undefined ? null : (textOf(other, 'Id') ?? null);
  if (iban === null && accountId === null) fail('Acct/Id', 'names no IBAN nor Othr/Id.');
  const seqText = textOf(s, 'ElctrncSeqNb');
  if (seqText !== undefined && !/^\d{1,18}$/.test(seqText)) fail('ElctrncSeqNb', `${JSON.stringify(seqText)} is not a number.`);
  const accountCurrency = textOf(acct, 'Ccy');
  const page = pageOf(s, fail);

  const balances: StatementBalance[] = ((s.Bal as Node[] | undefined) ?? []).map((b, i) => {
    const where = `Bal[${i + 1}]`;
    const tp = child(b, 'Tp');
    const cdOrPrtry = tp === undefined ? undefined : child(tp, 'CdOrPrtry');
    const code = (cdOrPrtry === undefined ? undefined : (textOf(cdOrPrtry, 'Cd') ?? textOf(cdOrPrtry, 'Prtry'))) ?? fail(`${where}/Tp/CdOrPrtry/Cd`, 'is missing.');
    const { amount, currency } = amountOf(b, `${where}/Amt`, fail);
    if (accountCurrency !== undefined && currency !== accountCurrency) fail(`${where}/Amt`, `is in ${currency}, the account in ${accountCurrency}.`);
    return { code, amount: signed(amount, b, `${where}/CdtDbtInd`, fail), date: dateOf(b, 'Dt', `${where}/Dt`, fail) ?? fail(`${where}/Dt`, 'is missing.') };
  });
  // A notification (camt.054) carries no balance: its entries are told one by one.
  if (balances.length === 0 && kind !== 'camt.054') fail('Bal', 'is missing: a statement without balances proves nothing.');
  const currency = accountCurrency ?? (balances.length > 0 ? ((((s.Bal as Node[])[0]!.Amt as Node)['@Ccy'] as string) ?? '') : undefined) ?? fail('Acct/Ccy', 'is missing: a notification without balances names its currency there.');

  const closing = balances.find((b) => b.code === 'CLBD');
  // A page of a statement: the first carries the opening balance, the last the closing one.
  const first = page === null || page.number === 1;
  const last = page === null || page.last;
  if (!intraday && last && closing === undefined) fail('Bal', `has no closing booked balance (CLBD): ${page === null ? 'an end-of-day statement' : 'the last page of a statement'} must have one.`);
  if (!intraday && first && !balances.some((b) => b.code === 'OPBD' || b.code === 'PRCD')) fail('Bal', `has no opening booked balance (OPBD or PRCD)${page === null ? '' : ': the first page of a statement must have one'}.`);
  const latest = [...balances].sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0))[0];
  const period = child(s, 'FrToDt');
  const created = textOf(s, 'CreDtTm');
  const businessDate = closing?.date ?? latest?.date ?? latestBooking ?? (created !== undefined && /^\d{4}-\d{2}-\d{2}/.test(created) ? created.slice(0, 10) : undefined) ?? fail('Ntry/BookgDt', 'is missing on every entry, and the notification has no CreDtTm: its date is unknown.');
  return {
    format: kind,
    where: `${file} (${path})`,
    iban: iban === null ? null : iban.replace(/\s+/g, '').toUpperCase(),
    accountId,
    statementId: id,
    sequence: seqText === undefined ? null : BigInt(seqText),
    currency,
    intraday,
    businessDate: intraday || last ? businessDate : (latest?.date ?? businessDate),
    fromDate: period === undefined ? null : (textOf(period, 'FrDtTm')?.slice(0, 10) ?? null),
    toDate: period === undefined ? null : (textOf(period, 'ToDtTm')?.slice(0, 10) ?? null),
    balances,
    ...(page === null ? {} : { page }),
  };
}

/** `StmtPgntn`: the page's number and whether it is the last; null for a statement of one page. */
function pageOf(s: Node, fail: Fail): StatementPage | null {
  const pagination = child(s, 'StmtPgntn');
  if (pagination === undefined) return null;
  const numberText = textOf(pagination, 'PgNb');
  if (numberText === undefined || !/^\d{1,5}$/.test(numberText) || Number(numberText) < 1) fail('StmtPgntn/PgNb', `is ${numberText === undefined ? 'missing' : JSON.stringify(numberText)}: a page number from 1.`);
  const lastText = textOf(pagination, 'LastPgInd');
  if (lastText !== 'true' && lastText !== 'false' && lastText !== '1' && lastText !== '0') fail('StmtPgntn/LastPgInd', `is ${lastText === undefined ? 'missing' : JSON.stringify(lastText)}: true or false.`);
  const page = { number: Number(numberText), last: lastText === 'true' || lastText === '1' };
  // Page 1 of 1 is a whole statement.
  return page.number === 1 && page.last ? null : page;
}

/** The texts of repeated elements, joined by a space; undefined when there are none. */
function texts(nodes: unknown): string | undefined {
  if (!Array.isArray(nodes) || nodes.length === 0) return undefined;
  return (nodes as Node[]).map((n) => (typeof n['#text'] === 'string' ? n['#text'] : '')).join(' ');
}

function child(node: Node, name: string): Node | undefined {
  const value = node[name];
  if (Array.isArray(value)) return value[0] as Node | undefined;
  return value !== null && typeof value === 'object' ? (value as Node) : undefined;
}

function textOf(node: Node, name: string): string | undefined {
  const raw = node[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && typeof (value as Node)['#text'] === 'string') return (value as Node)['#text'] as string;
  return undefined;
}

function amountOf(node: Node, where: string, fail: Fail): { amount: bigint; currency: string } {
  const amt = node.Amt;
  if (amt === undefined || amt === null || typeof amt !== 'object') return fail(where, 'is missing or has no Ccy attribute.');
  const text = (amt as Node)['#text'];
  const currency = (amt as Node)['@Ccy'];
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return fail(where, 'has no three-letter Ccy attribute.');
  if (typeof text !== 'string') return fail(where, 'has no amount.');
  const amount = statementAmount(text, currency);
  if (amount === undefined) return fail(where, `${JSON.stringify(text)} is not an amount in ${currency} (a plain decimal with at most its ISO 4217 decimals).`);
  return { amount, currency };
}

function signed(amount: bigint, node: Node, where: string, fail: Fail): bigint {
  const mark = textOf(node, 'CdtDbtInd');
  if (mark === 'CRDT') return amount;
  if (mark === 'DBIT') return -amount;
  return fail(where, `is ${mark === undefined ? 'missing' : JSON.stringify(mark)}: CRDT or DBIT.`);
}

function dateOf(node: Node, name: string, where: string, fail: Fail): string | undefined {
  const holder = child(node, name);
  if (holder === undefined) return undefined;
  const text = textOf(holder, 'Dt') ?? textOf(holder, 'DtTm');
  if (text === undefined || !/^\d{4}-\d{2}-\d{2}/.test(text)) return fail(where, 'has no Dt or DtTm.');
  // The date as the bank wrote it: a DtTm's own offset already places it in the bank's day.
  return text.slice(0, 10);
}
