import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readStatementText } from '../../src/statements/read-statement-file.js';
import { writeCamt053, writeMt940, type SampleStatements } from '../../src/statements/sample-statements.js';
import { statementFingerprint } from '../../src/statements/statement-fingerprint.js';
import { describeMissing, proveStatement, provableOf } from '../../src/statements/statement-proof.js';
import { refusal } from '../helpers/statement-refusal.js';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures', 'statements');
const fixture = (name: string) => readFileSync(path.join(fixtures, name), 'utf8');

const twoDays: SampleStatements = {
  iban: 'DE89370400440532013000',
  currency: 'EUR',
  opening: 1_000_000n,
  days: [
    { sequence: 7, date: '2026-11-02', entries: [250_000n, -2_550n] },
    { sequence: 8, date: '2026-11-03', entries: [-100_000n] },
  ],
};

describe('camt.053 reader', () => {
  it('reads a bank-written camt.053.001.08 with every balance, entry, reference and date, debit balances negative', () => {
    const [first, second] = readStatementText(fixture('camt053-v08-two-days.xml'), 'eod.xml');
    expect(first).toMatchObject({
      format: 'camt.053',
      iban: 'DE89370400440532013000',
      statementId: '20261125-DE89370400440532013000-41',
      sequence: 41n,
      currency: 'EUR',
      intraday: false,
      businessDate: '2026-11-25',
      fromDate: '2026-11-25',
      toDate: '2026-11-25',
      balances: [
        { code: 'PRCD', amount: 1_000_000n, date: '2026-11-24' },
        { code: 'OPBD', amount: 1_000_000n, date: '2026-11-25' },
        { code: 'CLBD', amount: 1_224_950n, date: '2026-11-25' },
        { code: 'CLAV', amount: 1_210_000n, date: '2026-11-25' },
      ],
    });
    expect(first!.entries).toEqual([
      { amount: 250_000n, creditDebit: 'credit', status: 'BOOK', bookingDate: '2026-11-25', valueDate: '2026-11-25', reference: 'PAYOUT-2026-11-25', bankReference: '2026112500012', details: 'Gateway payout 25.11.', reversal: false },
      { amount: -25_050n, creditDebit: 'debit', status: 'BOOK', bookingDate: '2026-11-25', valueDate: '2026-11-24', reference: null, bankReference: '2026112500013', details: 'Bank fees November', reversal: false },
      { amount: -14_950n, creditDebit: 'debit', status: 'PDNG', bookingDate: '2026-11-26', valueDate: '2026-11-26', reference: null, bankReference: null, details: null, reversal: false },
    ]);
    // A debit closing balance is negative; a value date given as DtTm is the date the bank wrote.
    expect(second!.balances.find((b) => b.code === 'CLBD')).toEqual({ code: 'CLBD', amount: -25_000n, date: '2026-11-26' });
    expect(second!.entries[0]!.valueDate).toBe('2026-11-26');
  });

  it.each([2, 8, 9, 13])('reads camt.053.001.%s (the entry status is a text until .08, a Cd from .09)', (version) => {
    const statements = readStatementText(writeCamt053({ ...twoDays, camtVersion: version }), 'v.xml');
    expect(statements.map((s) => [s.sequence, s.businessDate, s.balances.find((b) => b.code === 'CLBD')!.amount, s.entries.map((e) => e.status)])).toEqual([
      [7n, '2026-11-02', 1_247_450n, ['BOOK', 'BOOK']],
      [8n, '2026-11-03', 1_147_450n, ['BOOK']],
    ]);
  });

  it('keeps 1,234,567,890,123,456.78 exact: numbers are read as text, never as floats', () => {
    const xml = writeCamt053({ iban: 'DE89370400440532013000', currency: 'EUR', opening: 0n, days: [{ sequence: 1, date: '2026-11-02', entries: [123_456_789_012_345_678n] }] });
    expect(xml).toContain('<Amt Ccy="EUR">1234567890123456.78</Amt>');
    const [s] = readStatementText(xml, 'big.xml');
    expect(s!.balances.find((b) => b.code === 'CLBD')!.amount).toBe(123_456_789_012_345_678n);
    expect(s!.entries[0]!.amount).toBe(123_456_789_012_345_678n);
  });

  it('stores a camt.052 report as intraday: its interim balances kept, no closing balance', () => {
    const [report] = readStatementText(fixture('camt052-v13-intraday.xml'), 'intra.xml');
    expect(report).toMatchObject({ format: 'camt.052', intraday: true, businessDate: '2026-11-26', statementId: 'INTRA-20261126-1200' });
    expect(report!.balances.map((b) => b.code)).toEqual(['OPBD', 'ITBD', 'ITAV']);
    expect(proveStatement(provableOf(report!), { closing: 0n, sequence: 1n, businessDate: '2026-11-25' }).proof).toBe('ok');
  });

  it('refuses malformed XML naming the file, line and column; a wrong value naming its element', () => {
    const good = fixture('camt053-v08-two-days.xml');
    expect(refusal(() => readStatementText(good.replace('</CdtDbtInd>', '</CdtDbtInd'), 'a.xml'))).toMatch(/^a\.xml: not well-formed XML at line \d+, column \d+ \(Document\/BkToCstmrStmt\/Stmt\/Bal\/CdtDbtInd\): /);
    expect(refusal(() => readStatementText(good.replace('<Amt Ccy="EUR">2500.00</Amt>', '<Amt Ccy="EUR">2,500.00</Amt>'), 'b.xml'))).toBe(
      'b.xml: Stmt[1]/Ntry[1]/Amt "2,500.00" is not an amount in EUR (a plain decimal with at most its ISO 4217 decimals).',
    );
    expect(refusal(() => readStatementText(good.replace('<Cd>CLBD</Cd>', '<Cd>CLAV</Cd>'), 'c.xml'))).toBe('c.xml: Stmt[1]/Bal has no closing booked balance (CLBD): an end-of-day statement must have one.');
    expect(refusal(() => readStatementText(good.replace('<CdtDbtInd>DBIT</CdtDbtInd>', '<CdtDbtInd>D</CdtDbtInd>'), 'd.xml'))).toBe('d.xml: Stmt[1]/Ntry[2]/CdtDbtInd is "D": CRDT or DBIT.');
    expect(refusal(() => readStatementText(good.replace('camt.053.001.08', 'camt.053.001.14'), 'e.xml'))).toBe('e.xml: namespace urn:iso:std:iso:20022:tech:xsd:camt.053.001.14 is not read: versions 001.02 to 001.13 are.');
    expect(refusal(() => readStatementText('<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"/>', 'f.xml'))).toMatch(/^f\.xml: an XML file without an ISO 20022 camt\.053, camt\.052 or camt\.054 namespace/);
    expect(refusal(() => readStatementText('date;amount\n', 'g.csv'))).toMatch(/^g\.csv: neither a camt\.053\/camt\.052 XML file nor an MT940 message/);
  });
});

describe('MT940 reader', () => {
  it('reads the same two days as the camt.053 fixture, the pages of statement 41 as one statement', () => {
    const camt = readStatementText(fixture('camt053-v08-two-days.xml'), 'eod.xml');
    const mt = readStatementText(fixture('mt940-two-days-paged.sta'), 'eod.sta');
    expect(mt.map((s) => [s.statementId, s.sequence, s.businessDate, s.iban, s.entries.length])).toEqual([
      ['41/2026-11-25', 41n, '2026-11-25', 'DE89370400440532013000', 2],
      ['42/2026-11-26', 42n, '2026-11-26', 'DE89370400440532013000', 1],
    ]);
    const booked = (s: (typeof mt)[number]) => [s.balances.find((b) => b.code === 'OPBD')!.amount, s.balances.find((b) => b.code === 'CLBD')!.amount];
    expect(mt.map(booked)).toEqual(camt.map((s) => [s.balances.find((b) => b.code === 'OPBD')!.amount, s.balances.find((b) => b.code === 'CLBD')!.amount]));
    expect(mt[0]!.balances.find((b) => b.code === 'CLAV')!.amount).toBe(1_210_000n);
    expect(mt[0]!.entries[1]).toMatchObject({ amount: -25_050n, creditDebit: 'debit', bookingDate: '2026-11-25', valueDate: '2026-11-24', bankReference: '2026112500013' });
    // The same statements in either format have one fingerprint: re-importing one is "unchanged".
    expect(mt.map(statementFingerprint)).toEqual(camt.map(statementFingerprint));
  });

  it('reads bare MT940 (no {1:} blocks) written by the sample writer, with :20: the same every day', () => {
    const text = writeMt940(twoDays).replace(/\{1:[^\r\n]*\{4:\r\n/g, '').replace(/-\}\r\n/g, '');
    const statements = readStatementText(text, 'bare.sta');
    expect(statements.map((s) => [s.statementId, s.balances.find((b) => b.code === 'CLBD')!.amount])).toEqual([
      ['7/2026-11-02', 1_247_450n],
      ['8/2026-11-03', 1_147_450n],
    ]);
  });

  it('refuses an unreadable tag naming the file and its line', () => {
    const text = writeMt940(twoDays).replace(':60F:C261101EUR10000,00', ':60F:C261101EURten');
    expect(refusal(() => readStatementText(text, 'bad.sta'))).toBe('bad.sta, line 5: :60F: "C261101EURten" is not a balance (C or D, date YYMMDD, currency, amount with a decimal comma such as 1234,56).');
    // The parser would read 12474;50 as 12474: a balance is checked whole.
    const truncated = writeMt940(twoDays).replace(':62F:C261102EUR12474,50', ':62F:C261102EUR12474;50');
    expect(refusal(() => readStatementText(truncated, 'cut.sta'))).toMatch(/^cut\.sta, line 10: :62F: "C261102EUR12474;50" is not a balance/);
    const number = writeMt940(twoDays).replace(':28C:7/1', ':28C:seven');
    expect(refusal(() => readStatementText(number, 'num.sta'))).toBe('num.sta, line 4: :28C: "seven" is not a statement number (up to 5 digits, then /page).');
    const noClosing = writeMt940(twoDays).replace(/:62F:[^\r]*\r\n/, '');
    expect(refusal(() => readStatementText(noClosing, 'open.sta'))).toMatch(/^open\.sta, line 2 \(statement 1\): no :62F: or :62M: closing balance\./);
  });
});

describe('statement proofs', () => {
  const statement = (opbd: bigint | null, closing: bigint, booked: bigint, sequence: bigint | null = 5n, prcd: bigint | null = null) => ({ opbd, prcd, closing, booked, sequence, intraday: false });

  it('opening booked + booked entries = closing booked, exactly; pending entries do not count', () => {
    const [first] = readStatementText(fixture('camt053-v08-two-days.xml'), 'eod.xml');
    expect(proveStatement(provableOf(first!), null)).toEqual({ proof: 'ok', residual: null, missing: null, reason: null });
    expect(proveStatement(statement(100n, 151n, 50n), null)).toEqual({ proof: 'roll_forward_break', residual: 1n, missing: null, reason: 'opening booked + booked entries ≠ closing booked' });
  });

  it('PRCD, where given, equals OPBD', () => {
    expect(proveStatement(statement(100n, 150n, 50n, 5n, 90n), null)).toMatchObject({ proof: 'roll_forward_break', residual: 10n, reason: 'opening booked (OPBD) ≠ previously closed booked (PRCD)' });
  });

  it('a sequence number after a gap names the missing numbers; the previous closing must be this opening', () => {
    const previous = { closing: 100n, sequence: 5n, businessDate: '2026-11-02' };
    expect(proveStatement(statement(100n, 150n, 50n, 6n), previous).proof).toBe('ok');
    const gap = proveStatement(statement(100n, 150n, 50n, 7n), previous);
    expect(gap).toMatchObject({ proof: 'sequence_gap', missing: { from: 6n, to: 6n } });
    expect(describeMissing(gap.missing!)).toBe('6');
    expect(describeMissing(proveStatement(statement(100n, 150n, 50n, 8n), previous).missing!)).toBe('6, 7');
    expect(describeMissing(proveStatement(statement(100n, 150n, 50n, 1_000_000n), previous).missing!)).toBe('6 to 999999');
    expect(proveStatement(statement(90n, 140n, 50n, 6n), previous)).toMatchObject({ proof: 'roll_forward_break', residual: -10n, reason: 'opening booked ≠ the closing booked of 2026-11-02' });
    // Without sequence numbers only the balances chain.
    expect(proveStatement(statement(100n, 150n, 50n, null), { ...previous, sequence: null }).proof).toBe('ok');
  });
});
