import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CamtStream, looksLikeXml, readCamt, type CamtStatementHead } from '../../src/statements/camt-reader.js';
import type { StatementEntry } from '../../src/statements/statement.js';
import { StatementFileError } from '../../src/statements/statement-file-error.js';

// Every camt text here is built by this file: a document around statements, a statement around
// its parts, so each test shows the one element it is about.
const NS = (kind = '053', version = '08') => `urn:iso:std:iso:20022:tech:xsd:camt.${kind}.001.${version}`;
const MESSAGE = { '053': ['BkToCstmrStmt', 'Stmt'], '052': ['BkToCstmrAcctRpt', 'Rpt'], '054': ['BkToCstmrDbtCdtNtfctn', 'Ntfctn'] } as const;

function doc(statements: string[], { kind = '053', version = '08', header = '<GrpHdr><MsgId>M</MsgId><CreDtTm>2026-11-30T23:00:00Z</CreDtTm></GrpHdr>' }: { kind?: '053' | '052' | '054'; version?: string; header?: string } = {}): string {
  const [message, tag] = MESSAGE[kind];
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="${NS(kind, version)}">\n<${message}>\n${header}\n${statements.map((s) => `<${tag}>\n${s}\n</${tag}>`).join('\n')}\n</${message}>\n</Document>\n`;
}

const bal = (code: string, amount: string, mark = 'CRDT', date = '<Dt>2026-11-30</Dt>', ccy = 'EUR') => `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp><Amt Ccy="${ccy}">${amount}</Amt><CdtDbtInd>${mark}</CdtDbtInd><Dt>${date}</Dt></Bal>`;
const ntry = (amount: string, mark = 'CRDT', rest = '<Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2026-11-30</Dt></BookgDt>', ccy = 'EUR') => `<Ntry><Amt Ccy="${ccy}">${amount}</Amt><CdtDbtInd>${mark}</CdtDbtInd>${rest}</Ntry>`;
const acct = (id = '<IBAN>DE89370400440532013000</IBAN>', ccy = '<Ccy>EUR</Ccy>') => `<Acct><Id>${id}</Id>${ccy}</Acct>`;

/** A whole end-of-day statement: Id, account, OPBD and CLBD, then `more` (entries, pagination…). */
const stmt = (more: string[] = [], { id = 'S-1', balances = [bal('OPBD', '100.00', 'CRDT', '<Dt>2026-11-29</Dt>'), bal('CLBD', '100.00')], account = acct() } = {}) => [`<Id>${id}</Id>`, account, ...balances, ...more].join('\n');

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StatementFileError);
    expect((error as StatementFileError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

const read = (xml: string, file = 'c.xml') => readCamt(xml, file);
const entriesOf = (...entries: string[]) => read(doc([stmt(entries)]))[0]!.entries;

describe('telling XML from other files', () => {
  it('takes text starting with < (after blanks or a byte order mark) for XML, nothing else', () => {
    expect(looksLikeXml('<?xml version="1.0"?>')).toBe(true);
    expect(looksLikeXml(' \r\n<Document/>')).toBe(true);
    expect(looksLikeXml('\uFEFF<Document/>')).toBe(true);
    expect(looksLikeXml(' \uFEFF<Document/>')).toBe(true);
    expect(looksLikeXml(':20:STARTUMS')).toBe(false);
    expect(looksLikeXml('x<Document/>')).toBe(false);
    expect(looksLikeXml('')).toBe(false);
  });
});

describe('camt.053 statements read element by element', () => {
  it('reads a statement whole: head, balances, entries, created time', () => {
    const xml = doc([
      [
        '<Id>STMT-41</Id>',
        '<ElctrncSeqNb>41</ElctrncSeqNb>',
        '<CreDtTm>2026-12-01T06:10:00+01:00</CreDtTm>',
        '<FrToDt><FrDtTm>2026-11-30T00:00:00+01:00</FrDtTm><ToDtTm>2026-11-30T23:59:59+01:00</ToDtTm></FrToDt>',
        acct('<IBAN>de89 3704 0044 0532 0130 00</IBAN>'),
        bal('PRCD', '10.00', 'DBIT', '<Dt>2026-11-29</Dt>'),
        bal('OPBD', '10.00', 'DBIT', '<DtTm>2026-11-30T00:00:00+01:00</DtTm>'),
        bal('CLBD', '15.5'),
        ntry('25.50', 'CRDT', '<Sts>BOOK</Sts><BookgDt><Dt>2026-11-30</Dt></BookgDt><ValDt><DtTm>2026-11-29T23:00:00-05:00</DtTm></ValDt>'),
      ].join('\n'),
    ]);
    expect(read(xml, 'eod.xml')).toEqual([
      {
        format: 'camt.053',
        where: 'eod.xml (Stmt[1])',
        iban: 'DE89370400440532013000',
        accountId: null,
        statementId: 'STMT-41',
        sequence: 41n,
        currency: 'EUR',
        intraday: false,
        businessDate: '2026-11-30',
        fromDate: '2026-11-30',
        toDate: '2026-11-30',
        balances: [
          { code: 'PRCD', amount: -1_000n, date: '2026-11-29' },
          { code: 'OPBD', amount: -1_000n, date: '2026-11-30' },
          { code: 'CLBD', amount: 1_550n, date: '2026-11-30' },
        ],
        createdAt: '2026-12-01T06:10:00+01:00',
        entries: [{ amount: 2_550n, creditDebit: 'credit', status: 'BOOK', bookingDate: '2026-11-30', valueDate: '2026-11-29', reference: null, bankReference: null, details: null, reversal: false }],
      },
    ]);
  });

  it('names an account by Othr/Id, with or without an IBAN; takes the creation time of the message when the statement has none', () => {
    const [other, both] = read(
      doc([stmt([], { account: acct('<Othr><Id>0532013000</Id></Othr>') }), stmt([], { id: 'S-2', account: acct('<IBAN>DE89370400440532013000</IBAN><Othr><Id>ACC-9</Id></Othr>') })]),
    );
    expect([other!.iban, other!.accountId, other!.createdAt, other!.sequence, other!.fromDate, other!.toDate]).toEqual([null, '0532013000', '2026-11-30T23:00:00Z', null, null, null]);
    expect([both!.iban, both!.accountId, both!.where]).toEqual(['DE89370400440532013000', 'ACC-9', 'c.xml (Stmt[2])']);
    const [bare] = read(doc([stmt()], { header: '<GrpHdr><MsgId>M</MsgId></GrpHdr>' }));
    expect(bare!.createdAt).toBeNull();
    const [noHeader] = read(doc([stmt()], { header: '' }));
    expect(noHeader!.createdAt).toBeNull();
  });

  it('reads the period: missing FrDtTm or ToDtTm is null', () => {
    const [from] = read(doc([stmt(['<FrToDt><FrDtTm>2026-11-01T00:00:00Z</FrDtTm></FrToDt>'])]));
    expect([from!.fromDate, from!.toDate]).toEqual(['2026-11-01', null]);
    const [to] = read(doc([stmt(['<FrToDt><ToDtTm>2026-11-30T23:00:00Z</ToDtTm></FrToDt>'])]));
    expect([to!.fromDate, to!.toDate]).toEqual([null, '2026-11-30']);
  });

  it('reads a balance code given as Prtry, and takes the currency of the first balance when the account names none', () => {
    const [statement] = read(doc([stmt([], { account: acct(undefined, ''), balances: [bal('OPBD', '1', 'CRDT', undefined, 'JPY'), '<Bal><Tp><CdOrPrtry><Prtry>CLBD</Prtry></CdOrPrtry></Tp><Amt Ccy="JPY">1</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-30</Dt></Dt></Bal>'] })]));
    expect([statement!.currency, statement!.balances]).toEqual([
      'JPY',
      [
        { code: 'OPBD', amount: 1n, date: '2026-11-30' },
        { code: 'CLBD', amount: 1n, date: '2026-11-30' },
      ],
    ]);
  });

  it('reads references, details and the reversal flag of an entry from where each version puts them', () => {
    const entries = entriesOf(
      ntry('1', 'CRDT', '<RvslInd>true</RvslInd><Sts>BOOK</Sts><AcctSvcrRef>BANK-1</AcctSvcrRef><NtryDtls><TxDtls><Refs><AcctSvcrRef>TX-1</AcctSvcrRef><EndToEndId>E2E-1</EndToEndId></Refs><RmtInf><Ustrd>one</Ustrd><Ustrd>two</Ustrd></RmtInf></TxDtls><TxDtls><Refs><EndToEndId>E2E-2</EndToEndId></Refs></TxDtls></NtryDtls><AddtlNtryInf>info</AddtlNtryInf>'),
      ntry('2', 'DBIT', '<NtryRef>N-2</NtryRef><RvslInd>false</RvslInd><Sts>PDNG</Sts><NtryDtls><TxDtls><Refs><AcctSvcrRef>TX-2</AcctSvcrRef></Refs></TxDtls></NtryDtls><AddtlNtryInf>first</AddtlNtryInf><AddtlNtryInf/><AddtlNtryInf>third</AddtlNtryInf>'),
      ntry('0', 'DBIT', '<NtryRef>N-3</NtryRef><Sts><Cd>INFO</Cd></Sts><NtryDtls><TxDtls><RmtInf><Ustrd>  padded  </Ustrd></RmtInf></TxDtls></NtryDtls>'),
      ntry('0.00', 'CRDT', '<Sts><Cd>BOOK</Cd></Sts><NtryDtls></NtryDtls><AddtlNtryInf>only</AddtlNtryInf>'),
    );
    expect(entries.map((e) => [e.amount, e.creditDebit, e.status, e.reference, e.bankReference, e.details, e.reversal, e.bookingDate, e.valueDate])).toEqual([
      [100n, 'credit', 'BOOK', 'E2E-1', 'BANK-1', 'one two', true, null, null],
      [-200n, 'debit', 'PDNG', 'N-2', 'TX-2', 'first  third', false, null, null],
      [0n, 'debit', 'INFO', 'N-3', null, 'padded', false, null, null],
      [0n, 'credit', 'BOOK', null, null, 'only', false, null, null],
    ]);
    expect(entries.every((e) => !('charges' in e))).toBe(true);
  });

  it('reads text split by character references, entities and CDATA as one text', () => {
    const [entry] = entriesOf(ntry('&#49;&#x32;.&#x33;4', 'CRDT', '<Sts>BOOK</Sts><AddtlNtryInf>a &amp; b<![CDATA[ <c> ]]>d &#x263A;</AddtlNtryInf>'));
    expect([entry!.amount, entry!.details]).toEqual([1_234n, 'a & b <c> d ☺']);
    const [cdata] = entriesOf(ntry('1', 'CRDT', '<Sts><![CDATA[BOOK]]></Sts><AddtlNtryInf><![CDATA[x]]>y</AddtlNtryInf>'));
    expect([cdata!.status, cdata!.details]).toEqual(['BOOK', 'xy']);
  });

  it('hands each entry and each statement over as it is read, also when the file comes in pieces of any size', () => {
    const xml = doc([stmt([ntry('1'), ntry('2', 'DBIT')]), stmt([ntry('3')], { id: 'S-2' })]);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 30 }), (sizes) => {
        const seen: string[] = [];
        const stream = new CamtStream('p.xml', {
          entry: (entry: StatementEntry, index: number) => seen.push(`entry ${index} ${entry.amount}`),
          statement: (head: CamtStatementHead, index: number, entries: number) => seen.push(`statement ${index} ${head.statementId} ${entries} ${'entries' in head}`),
        });
        let at = 0;
        for (let i = 0; at < xml.length; i = (i + 1) % sizes.length) {
          stream.write(xml.slice(at, at + sizes[i]!));
          at += sizes[i]!;
        }
        stream.close();
        expect(seen).toEqual(['entry 0 100', 'entry 0 -200', 'statement 0 S-1 2 false', 'entry 1 300', 'statement 1 S-2 1 false']);
      }),
      { numRuns: 25 },
    );
  });

  it('reads a file without handlers, and an entry nested elsewhere is no entry of the statement', () => {
    const stream = new CamtStream('n.xml', {});
    stream.write(doc([stmt([ntry('1')])]));
    expect(() => stream.close()).not.toThrow();
    const nested = read(doc([stmt(['<Ntfctn><Ntry><Amt Ccy="EUR">5</Amt></Ntry></Ntfctn>', '<TxsSummry><Ntry><Amt Ccy="EUR">5</Amt></Ntry></TxsSummry>', ntry('1')])]));
    expect(nested[0]!.entries.map((e) => e.amount)).toEqual([100n]);
  });

  it('reads a namespace given with a prefix, prefixed elements and attributes', () => {
    const xml = doc([stmt([ntry('1')])]).replace(/<(\/?)([A-Za-z])/g, '<$1c:$2').replace('xmlns=', 'xmlns:x="urn:other" xmlns:c=').replace(/Ccy="/g, 'c:Ccy="').replace('<c:?xml', '<?xml');
    const [statement] = read(xml);
    expect([statement!.statementId, statement!.currency, statement!.entries[0]!.amount]).toEqual(['S-1', 'EUR', 100n]);
  });

  it('reads every version from .02 to .13 and refuses .01 and .14', () => {
    for (const version of ['02', '09', '13']) expect(read(doc([stmt()], { version }))[0]!.format).toBe('camt.053');
    for (const version of ['01', '14', '99']) {
      expect(refusal(() => read(doc([stmt()], { version }), 'v.xml'))).toBe(`v.xml: namespace ${NS('053', version)} is not read: versions 001.02 to 001.13 are.`);
    }
  });
});

describe('camt.053 statements in pages (StmtPgntn)', () => {
  const pgntn = (number: string, last: string) => `<StmtPgntn><PgNb>${number}</PgNb><LastPgInd>${last}</LastPgInd></StmtPgntn>`;
  const pageOf = (balances: string[], pagination: string, more: string[] = []) => stmt([pagination, ...more], { balances });
  const opening = bal('OPBD', '100.00', 'CRDT', '<Dt>2026-11-29</Dt>');
  const closing = bal('CLBD', '130.00');

  it('reads the first page with its opening balance, a middle page with none, the last with its closing balance', () => {
    const [first, middle, last] = read(
      doc([
        pageOf([opening], pgntn('1', 'false'), [ntry('10')]),
        pageOf([bal('ITBD', '110.00', 'CRDT', '<Dt>2026-11-30</Dt>')], pgntn('2', '0'), [ntry('10')]),
        pageOf([bal('PRCD', '100.00', 'CRDT', '<Dt>2026-11-28</Dt>'), closing], pgntn('3', '1'), [ntry('10')]),
      ]),
    );
    expect([first!.page, middle!.page, last!.page]).toEqual([
      { number: 1, last: false },
      { number: 2, last: false },
      { number: 3, last: true },
    ]);
    // A page that is not the last one is dated by its latest balance; the last by its closing one.
    expect([first!.businessDate, middle!.businessDate, last!.businessDate]).toEqual(['2026-11-29', '2026-11-30', '2026-11-30']);
  });

  it('reads page 1 of 1 as a whole statement, with PRCD as its opening', () => {
    const [whole] = read(doc([pageOf([bal('PRCD', '100.00'), closing], pgntn('1', 'true'))]));
    expect('page' in whole!).toBe(false);
    expect(whole!.balances.map((b) => b.code)).toEqual(['PRCD', 'CLBD']);
  });

  it('dates a page before the last by its latest balance, whatever their order', () => {
    const [page] = read(doc([pageOf([bal('OPBD', '1', 'CRDT', '<Dt>2026-11-29</Dt>'), bal('ITBD', '1', 'CRDT', '<Dt>2026-12-02</Dt>'), bal('ITBD', '1', 'CRDT', '<Dt>2026-12-01</Dt>')], pgntn('1', 'false'))]));
    expect(page!.businessDate).toBe('2026-12-02');
    const [reversed] = read(doc([pageOf([bal('ITBD', '1', 'CRDT', '<Dt>2026-12-01</Dt>'), bal('OPBD', '1', 'CRDT', '<Dt>2026-12-02</Dt>'), bal('ITBD', '1', 'CRDT', '<Dt>2026-11-29</Dt>')], pgntn('1', 'false'))]));
    expect(reversed!.businessDate).toBe('2026-12-02');
  });

  it('refuses a first page without OPBD or PRCD and a last page without CLBD, naming the statement', () => {
    expect(refusal(() => read(doc([pageOf([closing], pgntn('1', 'false'))]), 'p.xml'))).toBe('p.xml: Stmt[1]/Bal has no opening booked balance (OPBD or PRCD): the first page of a statement must have one.');
    expect(refusal(() => read(doc([pageOf([opening], pgntn('2', 'true'))]), 'p.xml'))).toBe('p.xml: Stmt[1]/Bal has no closing booked balance (CLBD): the last page of a statement must have one.');
    expect(refusal(() => read(doc([stmt([], { balances: [closing] })]), 'p.xml'))).toBe('p.xml: Stmt[1]/Bal has no opening booked balance (OPBD or PRCD).');
    expect(refusal(() => read(doc([stmt([], { balances: [opening] })]), 'p.xml'))).toBe('p.xml: Stmt[1]/Bal has no closing booked balance (CLBD): an end-of-day statement must have one.');
  });

  it('refuses a page number or last-page mark that is not one, naming it', () => {
    for (const [number, shown] of [['0', '"0"'], ['123456', '"123456"'], ['x', '"x"'], ['-1', '"-1"']] as const) {
      expect(refusal(() => read(doc([pageOf([opening, closing], pgntn(number, 'true'))]), 'p.xml'))).toBe(`p.xml: Stmt[1]/StmtPgntn/PgNb is ${shown}: a page number from 1.`);
    }
    expect(refusal(() => read(doc([pageOf([opening, closing], '<StmtPgntn><LastPgInd>true</LastPgInd></StmtPgntn>')]), 'p.xml'))).toBe('p.xml: Stmt[1]/StmtPgntn/PgNb is missing: a page number from 1.');
    expect(refusal(() => read(doc([pageOf([opening, closing], pgntn('1', 'yes'))]), 'p.xml'))).toBe('p.xml: Stmt[1]/StmtPgntn/LastPgInd is "yes": true or false.');
    expect(refusal(() => read(doc([pageOf([opening, closing], '<StmtPgntn><PgNb>1</PgNb></StmtPgntn>')]), 'p.xml'))).toBe('p.xml: Stmt[1]/StmtPgntn/LastPgInd is missing: true or false.');
    expect(read(doc([pageOf([opening, closing], pgntn('99999', 'true'))]))[0]!.page).toEqual({ number: 99_999, last: true });
  });
});

describe('camt.052 reports and camt.054 notifications', () => {
  it('reads a camt.052 report as intraday, dated by its latest balance, with no opening nor closing needed', () => {
    const [report] = read(doc([stmt([ntry('1')], { balances: [bal('ITBD', '1', 'CRDT', '<Dt>2026-11-29</Dt>'), bal('ITAV', '2', 'CRDT', '<Dt>2026-11-30</Dt>')] })], { kind: '052' }));
    expect([report!.format, report!.intraday, report!.businessDate, report!.where]).toEqual(['camt.052', true, '2026-11-30', 'c.xml (Rpt[1])']);
    expect(refusal(() => read(doc([stmt([], { balances: [] })], { kind: '052' }), 'r.xml'))).toBe('r.xml: Rpt[1]/Bal is missing: a statement without balances proves nothing.');
  });

  it('reads a camt.054 notification without balances, dated by its latest booking date, else its creation time', () => {
    const account = acct(undefined, '<Ccy>EUR</Ccy>');
    const xml = doc(
      [
        stmt([ntry('1', 'CRDT', '<Sts>BOOK</Sts><BookgDt><Dt>2026-11-28</Dt></BookgDt>'), ntry('2', 'CRDT', '<Sts>BOOK</Sts><BookgDt><Dt>2026-11-30</Dt></BookgDt>'), ntry('3', 'CRDT', '<Sts>BOOK</Sts><BookgDt><Dt>2026-11-29</Dt></BookgDt>'), ntry('4', 'CRDT', '<Sts>PDNG</Sts>')], { balances: [], account }),
        stmt(['<CreDtTm>2026-12-01T08:00:00Z</CreDtTm>', ntry('5', 'CRDT', '<Sts>BOOK</Sts>')], { id: 'N-2', balances: [], account }),
      ],
      { kind: '054' },
    );
    const notifications = read(xml, 'n.xml');
    expect(notifications.map((n) => [n.format, n.intraday, n.where, n.businessDate, n.currency, n.balances, n.createdAt, n.entries.length])).toEqual([
      ['camt.054', true, 'n.xml (Ntfctn[1])', '2026-11-30', 'EUR', [], '2026-11-30T23:00:00Z', 4],
      ['camt.054', true, 'n.xml (Ntfctn[2])', '2026-12-01', 'EUR', [], '2026-12-01T08:00:00Z', 1],
    ]);
  });

  it('refuses a notification whose date or currency is unknown', () => {
    const noDate = doc([stmt([ntry('1', 'CRDT', '<Sts>BOOK</Sts>')], { balances: [], account: acct() })], { kind: '054' });
    expect(refusal(() => read(noDate, 'n.xml'))).toBe('n.xml: Ntfctn[1]/Ntry/BookgDt is missing on every entry, and the notification has no CreDtTm: its date is unknown.');
    const badCreated = doc([stmt(['<CreDtTm>1.12.2026</CreDtTm>', ntry('1', 'CRDT', '<Sts>BOOK</Sts>')], { balances: [], account: acct() })], { kind: '054' });
    expect(refusal(() => read(badCreated, 'n.xml'))).toMatch(/^n\.xml: Ntfctn\[1\]\/Ntry\/BookgDt is missing on every entry/);
    const noCurrency = doc([stmt([ntry('1')], { balances: [], account: acct(undefined, '') })], { kind: '054' });
    expect(refusal(() => read(noCurrency, 'n.xml'))).toBe('n.xml: Ntfctn[1]/Acct/Ccy is missing: a notification without balances names its currency there.');
  });

  it('keeps the charges of an entry apart from its amount: Chrgs/Rcrd from .03, Chrgs/Amt in .02, a charge without mark a debit', () => {
    const v03 = ntry(
      '100.00',
      'CRDT',
      '<Sts>BOOK</Sts><Chrgs><TtlChrgsAndTaxAmt Ccy="EUR">9</TtlChrgsAndTaxAmt><Rcrd><Amt Ccy="EUR">1.50</Amt><CdtDbtInd>DBIT</CdtDbtInd></Rcrd><Rcrd><Amt Ccy="EUR">0.25</Amt></Rcrd><Rcrd><Amt Ccy="EUR">0.05</Amt><CdtDbtInd>CRDT</CdtDbtInd></Rcrd></Chrgs>',
    );
    const v02 = ntry('100.00', 'DBIT', '<Sts>BOOK</Sts><Chrgs><Amt Ccy="EUR">2.00</Amt></Chrgs><Chrgs><Amt Ccy="EUR">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd></Chrgs>');
    const empty = ntry('1', 'CRDT', '<Sts>BOOK</Sts><Chrgs><TtlChrgsAndTaxAmt Ccy="EUR">1</TtlChrgsAndTaxAmt></Chrgs>');
    const zero = ntry('1', 'CRDT', '<Sts>BOOK</Sts><Chrgs><Rcrd><Amt Ccy="EUR">0</Amt><CdtDbtInd>CRDT</CdtDbtInd></Rcrd></Chrgs>');
    const entries = read(doc([stmt(['<CreDtTm>2026-11-30T10:00:00Z</CreDtTm>', v03, v02, empty, zero], { balances: [], account: acct() })], { kind: '054' }))[0]!.entries;
    expect(entries.map((e) => [e.amount, e.charges])).toEqual([
      [10_000n, -170n],
      [-10_000n, -100n],
      [100n, undefined],
      [100n, 0n],
    ]);
    expect('charges' in entries[2]!).toBe(false);
  });

  it('refuses a charge in another currency or without an amount, naming its record', () => {
    const charge = (chrgs: string) => doc([stmt([ntry('1'), ntry('1', 'CRDT', `<Sts>BOOK</Sts>${chrgs}`)], { balances: [], account: acct() })], { kind: '054' });
    expect(refusal(() => read(charge('<Chrgs><Rcrd><Amt Ccy="EUR">1</Amt></Rcrd><Rcrd><Amt Ccy="USD">1</Amt></Rcrd></Chrgs>'), 'x.xml'))).toBe('x.xml: Ntfctn[1]/Ntry[2]/Chrgs[1]/Rcrd[2]/Amt is in USD, the entry in EUR.');
    expect(refusal(() => read(charge('<Chrgs><Amt Ccy="EUR">1</Amt></Chrgs><Chrgs><Amt Ccy="CHF">1</Amt></Chrgs>'), 'x.xml'))).toBe('x.xml: Ntfctn[1]/Ntry[2]/Chrgs[2]/Amt is in CHF, the entry in EUR.');
    expect(refusal(() => read(charge('<Chrgs><Rcrd><CdtDbtInd>DBIT</CdtDbtInd></Rcrd></Chrgs>'), 'x.xml'))).toBe('x.xml: Ntfctn[1]/Ntry[2]/Chrgs[1]/Rcrd[1]/Amt is missing or has no Ccy attribute.');
    expect(refusal(() => read(charge('<Chrgs><Rcrd><Amt Ccy="EUR">1.001</Amt></Rcrd></Chrgs>'), 'x.xml'))).toBe('x.xml: Ntfctn[1]/Ntry[2]/Chrgs[1]/Rcrd[1]/Amt "1.001" is not an amount in EUR (a plain decimal with at most its ISO 4217 decimals).');
  });
});

describe('camt values refused, naming the file and the element', () => {
  it('refuses a statement without Id, account or account identification', () => {
    expect(refusal(() => read(doc([stmt().replace('<Id>S-1</Id>', '')]), 'h.xml'))).toBe('h.xml: Stmt[1]/Id is missing: every statement needs its identification.');
    expect(refusal(() => read(doc([stmt([], { account: '' })]), 'h.xml'))).toBe('h.xml: Stmt[1]/Acct is missing.');
    expect(refusal(() => read(doc([stmt([], { account: '<Acct><Ccy>EUR</Ccy></Acct>' })]), 'h.xml'))).toBe('h.xml: Stmt[1]/Acct/Id is missing.');
    expect(refusal(() => read(doc([stmt([], { account: acct('<Othr><SchmeNm>X</SchmeNm></Othr>') })]), 'h.xml'))).toBe('h.xml: Stmt[1]/Acct/Id names no IBAN nor Othr/Id.');
    expect(refusal(() => read(doc([stmt(), stmt([], { account: acct('') })]), 'h.xml'))).toBe('h.xml: Stmt[2]/Acct/Id names no IBAN nor Othr/Id.');
  });

  it('refuses an electronic sequence number that is no number of up to 18 digits', () => {
    for (const number of ['x', '1234567890123456789', '-1', '1.0', '']) {
      const text = doc([stmt([`<ElctrncSeqNb>${number}</ElctrncSeqNb>`])]);
      if (number === '') expect(read(text)[0]!.sequence).toBeNull();
      else expect(refusal(() => read(text, 's.xml'))).toBe(`s.xml: Stmt[1]/ElctrncSeqNb ${JSON.stringify(number)} is not a number.`);
    }
    expect(read(doc([stmt(['<ElctrncSeqNb>123456789012345678</ElctrncSeqNb>'])]))[0]!.sequence).toBe(123_456_789_012_345_678n);
  });

  it('refuses a balance without code, date, mark or valid amount, or in another currency than the account', () => {
    const withBalance = (b: string) => doc([stmt([], { balances: [bal('OPBD', '1'), b, bal('CLBD', '1')] })]);
    expect(refusal(() => read(withBalance('<Bal><Amt Ccy="EUR">1</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-30</Dt></Dt></Bal>'), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/Tp/CdOrPrtry/Cd is missing.');
    expect(refusal(() => read(withBalance('<Bal><Tp/><Amt Ccy="EUR">1</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-30</Dt></Dt></Bal>'), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/Tp/CdOrPrtry/Cd is missing.');
    expect(refusal(() => read(withBalance('<Bal><Tp><CdOrPrtry/></Tp><Amt Ccy="EUR">1</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-30</Dt></Dt></Bal>'), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/Tp/CdOrPrtry/Cd is missing.');
    expect(refusal(() => read(withBalance('<Bal><Tp><CdOrPrtry><Cd>ITBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">1</Amt><CdtDbtInd>CRDT</CdtDbtInd></Bal>'), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/Dt is missing.');
    expect(refusal(() => read(withBalance(bal('ITBD', '1', 'CRDT', '<Dt>30.11.2026</Dt>')), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/Dt has no Dt or DtTm.');
    expect(refusal(() => read(withBalance(bal('ITBD', '1', 'CRDT', '')), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/Dt has no Dt or DtTm.');
    expect(refusal(() => read(withBalance(bal('ITBD', '1', '')), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/CdtDbtInd is missing: CRDT or DBIT.');
    expect(refusal(() => read(withBalance(bal('ITBD', '1', 'CRDX')), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/CdtDbtInd is "CRDX": CRDT or DBIT.');
    expect(refusal(() => read(withBalance(bal('ITBD', '1', 'CRDT', undefined, 'USD')), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/Amt is in USD, the account in EUR.');
    expect(refusal(() => read(withBalance('<Bal><Tp><CdOrPrtry><Cd>ITBD</Cd></CdOrPrtry></Tp><CdtDbtInd>CRDT</CdtDbtInd></Bal>'), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal[2]/Amt is missing or has no Ccy attribute.');
    expect(refusal(() => read(doc([stmt([], { balances: [] })]), 'b.xml'))).toBe('b.xml: Stmt[1]/Bal is missing: a statement without balances proves nothing.');
  });

  it('refuses an entry without status, mark or amount, or with a wrong date, naming the entry', () => {
    const second = (e: string) => doc([stmt([ntry('1'), e])]);
    expect(refusal(() => read(second(ntry('1', 'CRDT', '')), 'e.xml'))).toBe('e.xml: Stmt[1]/Ntry[2]/Sts is missing.');
    expect(refusal(() => read(second(ntry('1', 'CRDT', '<Sts/>')), 'e.xml'))).toBe('e.xml: Stmt[1]/Ntry[2]/Sts is missing.');
    expect(refusal(() => read(second('<Ntry><Amt Ccy="EUR">1</Amt><Sts>BOOK</Sts></Ntry>'), 'e.xml'))).toBe('e.xml: Stmt[1]/Ntry[2]/CdtDbtInd is missing: CRDT or DBIT.');
    expect(refusal(() => read(second('<Ntry><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts></Ntry>'), 'e.xml'))).toBe('e.xml: Stmt[1]/Ntry[2]/Amt is missing or has no Ccy attribute.');
    expect(refusal(() => read(second(ntry('1', 'CRDT', '<Sts>BOOK</Sts><BookgDt><Dt>2026-1-30</Dt></BookgDt>')), 'e.xml'))).toBe('e.xml: Stmt[1]/Ntry[2]/BookgDt has no Dt or DtTm.');
    expect(refusal(() => read(second(ntry('1', 'CRDT', '<Sts>BOOK</Sts><ValDt><Tm>10:00</Tm></ValDt>')), 'e.xml'))).toBe('e.xml: Stmt[1]/Ntry[2]/ValDt has no Dt or DtTm.');
    expect(refusal(() => read(doc([stmt(), stmt([ntry('1'), ntry('1'), ntry('1', 'DBIT', '<Sts>BOOK</Sts><ValDt/>')])]), 'e.xml'))).toBe('e.xml: Stmt[2]/Ntry[3]/ValDt has no Dt or DtTm.');
  });

  it('refuses an amount without a three-letter currency, without digits, or with more decimals than its currency', () => {
    const amount = (a: string) => doc([stmt([`<Ntry>${a}<CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts></Ntry>`])]);
    expect(refusal(() => read(amount('<Amt>1</Amt>'), 'a.xml'))).toBe('a.xml: Stmt[1]/Ntry[1]/Amt has no three-letter Ccy attribute.');
    expect(refusal(() => read(amount('<Amt Ccy="EURO">1</Amt>'), 'a.xml'))).toBe('a.xml: Stmt[1]/Ntry[1]/Amt has no three-letter Ccy attribute.');
    expect(refusal(() => read(amount('<Amt Ccy="eur">1</Amt>'), 'a.xml'))).toBe('a.xml: Stmt[1]/Ntry[1]/Amt has no three-letter Ccy attribute.');
    expect(refusal(() => read(amount('<Amt Ccy="XEUR">1</Amt>'), 'a.xml'))).toBe('a.xml: Stmt[1]/Ntry[1]/Amt has no three-letter Ccy attribute.');
    expect(refusal(() => read(amount('<Amt Ccy="EUR"/>'), 'a.xml'))).toBe('a.xml: Stmt[1]/Ntry[1]/Amt has no amount.');
    expect(refusal(() => read(amount('<Amt Ccy="JPY">1.5</Amt>'), 'a.xml'))).toBe('a.xml: Stmt[1]/Ntry[1]/Amt "1.5" is not an amount in JPY (a plain decimal with at most its ISO 4217 decimals).');
    expect(refusal(() => read(amount('<Amt Ccy="EUR">-1</Amt>'), 'a.xml'))).toBe('a.xml: Stmt[1]/Ntry[1]/Amt "-1" is not an amount in EUR (a plain decimal with at most its ISO 4217 decimals).');
  });

  it('refuses an entry in another currency than its statement, naming the first such entry', () => {
    const xml = doc([stmt([ntry('1'), ntry('1', 'CRDT', undefined, 'USD'), ntry('1', 'CRDT', undefined, 'USD'), ntry('1', 'CRDT', undefined, 'CHF')])]);
    expect(refusal(() => read(xml, 'x.xml'))).toBe('x.xml: Stmt[1]/Ntry[2]/Amt is in USD, the statement in EUR.');
    const second = doc([stmt([ntry('1', 'CRDT', undefined, 'USD')], { account: acct(undefined, '<Ccy>USD</Ccy>'), balances: [bal('OPBD', '1', 'CRDT', undefined, 'USD'), bal('CLBD', '1', 'CRDT', undefined, 'USD')] }), stmt([ntry('1'), ntry('1', 'CRDT', undefined, 'USD')], { id: 'S-2' })]);
    expect(refusal(() => read(second, 'x.xml'))).toBe('x.xml: Stmt[2]/Ntry[2]/Amt is in USD, the statement in EUR.');
  });

  it('refuses a file without the message element or without statements', () => {
    expect(refusal(() => read(`<Document xmlns="${NS()}"><BkToCstmrAcctRpt><Rpt/></BkToCstmrAcctRpt></Document>`, 'm.xml'))).toBe('m.xml: no Document/BkToCstmrStmt element.');
    expect(refusal(() => read(`<Document xmlns="${NS()}"><X><BkToCstmrStmt><Stmt/></BkToCstmrStmt></X></Document>`, 'm.xml'))).toBe('m.xml: no Document/BkToCstmrStmt element.');
    expect(refusal(() => read(`<Document xmlns="${NS('054')}"><BkToCstmrDbtCdtNtfctn><GrpHdr/></BkToCstmrDbtCdtNtfctn></Document>`, 'm.xml'))).toBe('m.xml: no Ntfctn element: the file holds no statement.');
    expect(refusal(() => read(`<Document xmlns="${NS()}"><BkToCstmrStmt><X><Stmt/></X></BkToCstmrStmt></Document>`, 'm.xml'))).toBe('m.xml: no Stmt element: the file holds no statement.');
    expect(refusal(() => read('<Document xmlns:camt="urn:other"><camt:X/></Document>', 'm.xml'))).toBe(
      'm.xml: an XML file without an ISO 20022 camt.053, camt.052 or camt.054 namespace (urn:iso:std:iso:20022:tech:xsd:camt.053.001.02 to .13).',
    );
    expect(refusal(() => read(`<Document xmlns="${NS()}x"/>`, 'm.xml'))).toMatch(/^m\.xml: an XML file without an ISO 20022/);
    expect(refusal(() => read(`<Document xmlns="x${NS()}"/>`, 'm.xml'))).toMatch(/^m\.xml: an XML file without an ISO 20022/);
    expect(refusal(() => read(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.055.001.08"/>`, 'm.xml'))).toMatch(/^m\.xml: an XML file without an ISO 20022/);
    expect(refusal(() => read(`<Document xmlnsx="${NS()}"/>`, 'm.xml'))).toMatch(/^m\.xml: an XML file without an ISO 20022/);
    expect(refusal(() => read('<Document/>', 'm.xml'))).toMatch(/^m\.xml: an XML file without an ISO 20022/);
  });
});

describe('hostile camt files refused, naming the file, the line and column and the path', () => {
  it('refuses a DTD, even an empty one, before any element', () => {
    expect(refusal(() => read('<?xml version="1.0"?>\n<!DOCTYPE Document>\n<Document/>', 'd.xml'))).toBe('d.xml: a document type declaration (<!DOCTYPE) at line 2, column 19: refused, a statement has none, and no entity it declares is ever expanded.');
  });

  it('refuses an undeclared entity and a broken tag with the element path, without the parser position repeated', () => {
    const xml = doc([stmt([ntry('&nbsp;1')])]);
    const message = refusal(() => read(xml, 'e.xml'));
    expect(message).toMatch(/^e\.xml: not well-formed XML at line 10, column \d+ \(Document\/BkToCstmrStmt\/Stmt\/Ntry\/Amt\): undefined entity\.$/);
    expect(refusal(() => read('<Document', 'x.xml'))).toMatch(/^x\.xml: not well-formed XML at line 1, column \d+: [a-z]/);
  });

  it('shortens a deep path to its first three and last two elements', () => {
    const nine = doc([stmt(['<A><B><C><D><E><F>&bad;</F></E></D></C></B></A>'])]);
    expect(refusal(() => read(nine, 'p.xml'))).toMatch(/ \(Document\/BkToCstmrStmt\/Stmt\/… 4 more …\/E\/F\): undefined entity/);
    const eight = doc([stmt(['<A><B><C><D><E>&bad;</E></D></C></B></A>'])]);
    expect(refusal(() => read(eight, 'p.xml'))).toMatch(/ \(Document\/BkToCstmrStmt\/Stmt\/A\/B\/C\/D\/E\): undefined entity/);
  });

  it('accepts nesting of 64 levels and refuses 65', () => {
    const nested = (levels: number) => doc([stmt([`${'<X>'.repeat(levels - 3)}${'</X>'.repeat(levels - 3)}`])]);
    expect(read(nested(64))[0]!.statementId).toBe('S-1');
    expect(refusal(() => read(nested(65), 'n.xml'))).toMatch(/^n\.xml: elements nested deeper than 64 levels at line \d+, column \d+ \(Document\/BkToCstmrStmt\/Stmt\/… 59 more …\/X\/X\): refused, a statement is about 10 deep\.$/);
  });

  it('refuses any control character XML does not allow, wherever it is', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 31 }).filter((c) => c !== 9 && c !== 10 && c !== 13), fc.constantFrom('<Id>S', '<Cd>CL', '<Amt Ccy="EUR">10'), (code, place) => {
        const xml = doc([stmt()]).replace(place, `${place}${String.fromCharCode(code)}`);
        expect(refusal(() => read(xml, 'c.xml'))).toMatch(/^c\.xml: not well-formed XML at line \d+, column \d+ \(Document\/BkToCstmrStmt\/Stmt[^)]*\): /);
      }),
      { numRuns: 30 },
    );
  });
});

describe('camt properties', () => {
  const currencies = fc.constantFrom(['EUR', 2], ['JPY', 0], ['KWD', 3], ['CLF', 4]);

  it('reads any amount with at most the currency decimals exactly, however its digits are written, and refuses one decimal more', () => {
    fc.assert(
      fc.property(currencies, fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.boolean(), fc.integer({ min: 1, max: 9 }), ([ccy, decimals], minor, references, extra) => {
        const whole = (minor / 10n ** BigInt(decimals)).toString();
        const fraction = decimals === 0 ? '' : `.${(minor % 10n ** BigInt(decimals)).toString().padStart(decimals, '0')}`;
        const text = `${whole}${fraction}`;
        const written = references ? [...text].map((c, i) => (i % 2 === 0 ? `&#${c.charCodeAt(0)};` : `&#x${c.charCodeAt(0).toString(16)};`)).join('') : text;
        const balances = [bal('OPBD', '0', 'CRDT', undefined, ccy), bal('CLBD', written, 'DBIT', undefined, ccy)];
        const xml = doc([stmt([ntry(written, 'DBIT', undefined, ccy)], { balances, account: acct(undefined, `<Ccy>${ccy}</Ccy>`) })]);
        const [statement] = read(xml);
        expect([statement!.balances[1]!.amount, statement!.entries[0]!.amount]).toEqual([-minor, -minor]);
        const tooMany = `${whole}.${fraction.slice(1)}${extra}`;
        expect(refusal(() => read(xml.replace(`<Amt Ccy="${ccy}">${written}</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>`, `<Amt Ccy="${ccy}">${tooMany}</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>`), 'p.xml'))).toBe(
          `p.xml: Stmt[1]/Ntry[1]/Amt ${JSON.stringify(tooMany)} is not an amount in ${ccy} (a plain decimal with at most its ISO 4217 decimals).`,
        );
      }),
      { numRuns: 40 },
    );
  });
});
