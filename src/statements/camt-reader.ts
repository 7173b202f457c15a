import { SaxesParser } from 'saxes';
import type { ParsedStatement, StatementBalance, StatementEntry } from './statement.js';
import { statementAmount } from './statement-amount.js';
import { StatementFileError } from './statement-file-error.js';

// camt.053 (end-of-day statements) and camt.052 (intraday reports), versions .02 to .13: the
// elements read here kept their names and places across those versions, except the entry
// status, a text until .08 and a `Cd` inside it from .09.
const NAMESPACE = /xmlns(?::[\w.-]+)?\s*=\s*["'](urn:iso:std:iso:20022:tech:xsd:(camt\.05[23])\.001\.(\d{2}))["']/;
const REPEATED = new Set(['Stmt', 'Rpt', 'Bal', 'Ntry', 'NtryDtls', 'TxDtls', 'Ustrd', 'AddtlNtryInf']);

type Node = Record<string, unknown>;

/** Whether a file's content is ISO 20022 XML (the reader then says whether it is a camt it knows). */
export function looksLikeXml(text: string): boolean {
  return /^\s*(?:\uFEFF)?</.test(text);
}

/**
 * Reads a camt.053 or camt.052 file into its statements (reports). Every number is read as the
 * text the file holds, so no amount passes through a float. Throws StatementFileError naming
 * the file and the line (malformed XML) or the element (a missing or wrong value).
 */
export function readCamt(text: string, file: string): ParsedStatement[] {
  const ns = NAMESPACE.exec(text.slice(0, 4096)) ?? NAMESPACE.exec(text);
  if (ns === null) {
    // A file that is not even XML says so first, with where.
    parseXml(text, file);
    throw new StatementFileError(`${file}: an XML file without an ISO 20022 camt.053 or camt.052 namespace (urn:iso:std:iso:20022:tech:xsd:camt.053.001.02 to .13).`);
  }
  const version = Number(ns[3]);
  if (version < 2 || version > 13) throw new StatementFileError(`${file}: namespace ${ns[1]} is not read: versions 001.02 to 001.13 are.`);
  const intraday = ns[2] === 'camt.052';
  const doc = parseXml(text, file);
  const root = child(doc, 'Document');
  const message = root === undefined ? undefined : child(root, intraday ? 'BkToCstmrAcctRpt' : 'BkToCstmrStmt');
  if (message === undefined) throw new StatementFileError(`${file}: no Document/${intraday ? 'BkToCstmrAcctRpt' : 'BkToCstmrStmt'} element.`);
  const tag = intraday ? 'Rpt' : 'Stmt';
  const statements = (message[tag] as Node[] | undefined) ?? [];
  if (statements.length === 0) throw new StatementFileError(`${file}: no ${tag} element: the file holds no statement.`);
  const header = child(message, 'GrpHdr');
  const created = header === undefined ? undefined : textOf(header, 'CreDtTm');
  return statements.map((s, i) => ({ ...readStatement(s, `${tag}[${i + 1}]`, file, intraday), createdAt: textOf(s, 'CreDtTm') ?? created ?? null }));
}

/** Deeper than this, an XML file is refused: a camt statement is about 10 elements deep. */
const MAX_DEPTH = 64;

/**
 * The XML as nested nodes (element names without their namespace prefix; attributes as `@Name`,
 * text as `#text`, the elements of REPEATED as arrays), read by a non-validating SAX parser.
 * Refused, naming the file, the line and column and the element path: a DTD (`<!DOCTYPE`, so no
 * entity is ever declared, let alone expanded, and no external one fetched), an entity other
 * than XML's five and numeric character references (which are decoded), a character XML does
 * not allow (NUL and other control characters), nesting deeper than MAX_DEPTH, and anything
 * not well-formed.
 */
function parseXml(text: string, file: string): Node {
  const parser = new SaxesParser({ position: true });
  const doc: Node = {};
  const stack: Array<{ node: Node; name: string }> = [{ node: doc, name: '' }];
  const refuse = (what: string, detail?: string): never => {
    const names = stack.slice(1).map((s) => s.name);
    const path = (names.length > 8 ? [...names.slice(0, 3), `… ${names.length - 5} more …`, ...names.slice(-2)] : names).join('/');
    throw new StatementFileError(`${file}: ${what} at line ${parser.line}, column ${parser.column}${path === '' ? '' : ` (${path})`}${detail === undefined ? '.' : `: ${detail}`}`);
  };
  parser.on('error', (error) => refuse('not well-formed XML', error.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '')));
  parser.on('doctype', () => refuse('a document type declaration (<!DOCTYPE)', 'refused, a statement has none, and no entity it declares is ever expanded.'));
  parser.on('opentag', (tag) => {
    if (stack.length > MAX_DEPTH) refuse(`elements nested deeper than ${MAX_DEPTH} levels`, 'refused, a statement is about 10 deep.');
    const name = tag.name.replace(/^[^:]*:/, '');
    const node: Node = {};
    for (const [key, value] of Object.entries(tag.attributes as Record<string, string>)) node[`@${key.replace(/^[^:]*:/, '')}`] = value;
    const parent = stack.at(-1)!.node;
    if (REPEATED.has(name)) ((parent[name] ??= []) as Node[]).push(node);
    else if (parent[name] === undefined) parent[name] = node;
    stack.push({ node, name });
  });
  parser.on('text', (value) => {
    if (stack.length > 1) {
      const node = stack.at(-1)!.node;
      node['#text'] = ((node['#text'] as string | undefined) ?? '') + value;
    }
  });
  parser.on('cdata', (value) => {
    const node = stack.at(-1)!.node;
    node['#text'] = ((node['#text'] as string | undefined) ?? '') + value;
  });
  parser.on('closetag', () => {
    const { node } = stack.pop()!;
    if (typeof node['#text'] === 'string') node['#text'] = node['#text'].trim();
  });
  parser.write(text).close();
  return doc;
}

function readStatement(s: Node, path: string, file: string, intraday: boolean): ParsedStatement {
  const fail = (where: string, what: string): never => {
    throw new StatementFileError(`${file}: ${path}/${where} ${what}`);
  };
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

  const balances: StatementBalance[] = ((s.Bal as Node[] | undefined) ?? []).map((b, i) => {
    const where = `Bal[${i + 1}]`;
    const tp = child(b, 'Tp');
    const cdOrPrtry = tp === undefined ? undefined : child(tp, 'CdOrPrtry');
    const code = (cdOrPrtry === undefined ? undefined : (textOf(cdOrPrtry, 'Cd') ?? textOf(cdOrPrtry, 'Prtry'))) ?? fail(`${where}/Tp/CdOrPrtry/Cd`, 'is missing.');
    const { amount, currency } = amountOf(b, `${where}/Amt`, fail);
    if (accountCurrency !== undefined && currency !== accountCurrency) fail(`${where}/Amt`, `is in ${currency}, the account in ${accountCurrency}.`);
    return { code, amount: signed(amount, b, `${where}/CdtDbtInd`, fail), date: dateOf(b, 'Dt', `${where}/Dt`, fail) ?? fail(`${where}/Dt`, 'is missing.'), currency };
  }).map(({ code, amount, date }) => ({ code, amount, date }));
  if (balances.length === 0) fail('Bal', 'is missing: a statement without balances proves nothing.');
  const currency = accountCurrency ?? currencyOfFirst(s.Bal as Node[]);

  const entries: StatementEntry[] = ((s.Ntry as Node[] | undefined) ?? []).map((n, i) => {
    const where = `Ntry[${i + 1}]`;
    const { amount, currency: entryCurrency } = amountOf(n, `${where}/Amt`, fail);
    if (entryCurrency !== currency) fail(`${where}/Amt`, `is in ${entryCurrency}, the statement in ${currency}.`);
    const value = signed(amount, n, `${where}/CdtDbtInd`, fail);
    const stsNode = child(n, 'Sts');
    const status = stsNode === undefined ? undefined : (textOf(stsNode, 'Cd') ?? textOf(n, 'Sts'));
    if (status === undefined) fail(`${where}/Sts`, 'is missing.');
    const tx = child(((n.NtryDtls as Node[] | undefined) ?? [])[0] ?? {}, 'TxDtls');
    const refs = tx === undefined ? undefined : child(tx, 'Refs');
    const rmt = tx === undefined ? undefined : child(tx, 'RmtInf');
    const info = texts(n.AddtlNtryInf);
    return {
      amount: value,
      creditDebit: value < 0n || textOf(n, 'CdtDbtInd') === 'DBIT' ? 'debit' : 'credit',
      status: status!,
      bookingDate: dateOf(n, 'BookgDt', `${where}/BookgDt`, fail) ?? null,
      valueDate: dateOf(n, 'ValDt', `${where}/ValDt`, fail) ?? null,
      reference: (refs === undefined ? undefined : textOf(refs, 'EndToEndId')) ?? textOf(n, 'NtryRef') ?? null,
      bankReference: textOf(n, 'AcctSvcrRef') ?? (refs === undefined ? undefined : textOf(refs, 'AcctSvcrRef')) ?? null,
      details: (rmt === undefined ? undefined : texts(rmt.Ustrd)) ?? info ?? null,
      reversal: textOf(n, 'RvslInd') === 'true',
    } satisfies StatementEntry;
  });

  const closing = balances.find((b) => b.code === 'CLBD');
  if (!intraday && closing === undefined) fail('Bal', 'has no closing booked balance (CLBD): an end-of-day statement must have one.');
  if (!intraday && !balances.some((b) => b.code === 'OPBD' || b.code === 'PRCD')) fail('Bal', 'has no opening booked balance (OPBD or PRCD).');
  const latest = [...balances].sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0))[0]!;
  const period = child(s, 'FrToDt');
  return {
    format: intraday ? 'camt.052' : 'camt.053',
    where: `${file} (${path})`,
    iban: iban === null ? null : iban.replace(/\s+/g, '').toUpperCase(),
    accountId,
    statementId: id,
    sequence: seqText === undefined ? null : BigInt(seqText),
    currency,
    intraday,
    businessDate: intraday ? latest.date : closing!.date,
    fromDate: period === undefined ? null : (textOf(period, 'FrDtTm')?.slice(0, 10) ?? null),
    toDate: period === undefined ? null : (textOf(period, 'ToDtTm')?.slice(0, 10) ?? null),
    balances,
    entries,
  };
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

type Fail = (where: string, what: string) => never;

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

function currencyOfFirst(bals: Node[]): string {
  return ((bals[0]!.Amt as Node)['@Ccy'] as string) ?? '';
}
