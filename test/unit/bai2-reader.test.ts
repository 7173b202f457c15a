import { describe, expect, it } from 'vitest';
import { readBai2 } from '../../src/statements/bai2-reader.js';
import { BAI2_FILE } from '../helpers/bai2-fixtures.js';
import { closingBooked, openingBooked, provableOf, proveStatement, readStatementText, writeBai2 } from '../../src/statements/index.js';
import { refusal } from '../helpers/statement-refusal.js';


describe('BAI2 files', () => {
  it('reads an account of a group: as-of date, balances 010/015/040/045, entries with sign, value date, references and text', () => {
    const [statement, ...rest] = readStatementText(BAI2_FILE, 'us.bai');
    expect(rest).toEqual([]);
    expect(statement).toMatchObject({
      format: 'bai2',
      where: 'us.bai, line 3 (account 0975312468)',
      iban: null,
      accountId: '0975312468',
      statementId: '2026-11-26/7',
      sequence: null,
      currency: 'USD',
      intraday: false,
      businessDate: '2026-11-26',
      fromDate: '2026-11-26',
      toDate: '2026-11-26',
      createdAt: '2026-11-27T06:00:00',
    });
    expect(statement!.balances).toEqual([
      { code: 'OPBD', amount: 150_000n, date: '2026-11-26' },
      { code: 'CLBD', amount: 142_550n, date: '2026-11-26' },
      { code: 'OPAV', amount: 150_000n, date: '2026-11-26' },
      { code: 'CLAV', amount: 140_000n, date: '2026-11-26' },
    ]);
    expect(statement!.entries).toEqual([
      { amount: 25_000n, creditDebit: 'credit', status: 'BOOK', bookingDate: '2026-11-26', valueDate: '2026-11-25', reference: 'INV-77', bankReference: 'WIRE123', details: 'WIRE FROM ACME CORP, REF 77', reversal: false },
      { amount: -30_000n, creditDebit: 'debit', status: 'BOOK', bookingDate: '2026-11-26', valueDate: '2026-11-26', reference: null, bankReference: 'CHK1001', details: 'CHECK PAID NUMBER 1001', reversal: false },
      { amount: -2_450n, creditDebit: 'debit', status: 'BOOK', bookingDate: '2026-11-26', valueDate: null, reference: null, bankReference: 'FEE9', details: 'ACCOUNT FEES', reversal: false },
    ]);
    expect(openingBooked(statement!)).toBe(150_000n);
    expect(closingBooked(statement!)).toBe(142_550n);
    expect(proveStatement(provableOf(statement!), null)).toEqual({ proof: 'ok', residual: null, missing: null, reason: null });
  });

  it('takes amounts in the minor units of the currency: the group currency, else the account\'s own; negative balances keep their sign', () => {
    const text = BAI2_FILE.replace('03,0975312468,USD,', '03,0975312468,KWD,').replace('+142550', '-142550').replace('49,697450,', '49,412350,').replace('98,697450,', '98,412350,').replace('99,697450,', '99,412350,');
    const [statement] = readStatementText(text, 'kwd.bai');
    expect(statement!.currency).toBe('KWD');
    expect(closingBooked(statement!)).toBe(-142_550n);
    const jpy = readStatementText(BAI2_FILE.replace(',2400,USD,2/', ',2400,JPY,2/').replace('03,0975312468,USD,', '03,0975312468,,'), 'jpy.bai');
    expect(jpy[0]!.currency).toBe('JPY');
    expect(jpy[0]!.entries[0]!.amount).toBe(25_000n);
    const usd = readStatementText(BAI2_FILE.replace(',2400,USD,2/', ',2400,,2/').replace('03,0975312468,USD,', '03,0975312468,,'), 'default.bai');
    expect(usd[0]!.currency).toBe('USD');
  });

  it('refuses a wrong account, group or file control total, naming the file and the line', () => {
    expect(refusal(() => readStatementText(BAI2_FILE.replace('49,697450,8/', '49,697451,8/'), 'a.bai'))).toBe(
      'a.bai, line 10: the account control total of account 0975312468 is 697451, the amounts of its 03 and 16 records (line 3 on) add up to 697450.',
    );
    expect(refusal(() => readStatementText(BAI2_FILE.replace('98,697450,1,10/', '98,697449,1,10/'), 'g.bai'))).toBe("g.bai, line 11: the group control total is 697449, its accounts' control totals add up to 697450.");
    expect(refusal(() => readStatementText(BAI2_FILE.replace('99,697450,1,12/', '99,-697450,1,12/'), 'f.bai'))).toBe("f.bai, line 12: the file control total is -697450, its groups' control totals add up to 697450.");
  });

  it('refuses a wrong count of records, accounts or groups, continuations counted', () => {
    expect(refusal(() => readStatementText(BAI2_FILE.replace('49,697450,8/', '49,697450,7/'), 'a.bai'))).toBe(
      'a.bai, line 10: the account trailer of account 0975312468 says 7 records, the account (line 3) has 8 (03 to 49, continuations included).',
    );
    expect(refusal(() => readStatementText(BAI2_FILE.replace('98,697450,1,10/', '98,697450,2,10/'), 'g.bai'))).toBe('g.bai, line 11: the group trailer says 2 accounts, the group (line 2) has 1.');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('98,697450,1,10/', '98,697450,1,9/'), 'g.bai'))).toBe('g.bai, line 11: the group trailer says 9 records, the group (line 2) has 10 (02 to 98, continuations included).');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('99,697450,1,12/', '99,697450,2,12/'), 'f.bai'))).toBe('f.bai, line 12: the file trailer says 2 groups, the file has 1.');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('99,697450,1,12/', '99,697450,1,13/'), 'f.bai'))).toBe('f.bai, line 12: the file trailer says 13 records, the file has 12 (01 to 99, continuations included).');
  });

  it('refuses what it cannot read exactly: a loan or bank-specific type code, an impossible date, a bad amount, an unknown currency', () => {
    expect(refusal(() => readStatementText(BAI2_FILE.replace('16,699,2450', '16,901,2450'), 'c.bai'))).toBe(
      "c.bai, line 9: transaction type code 901 is neither a credit (100 to 399) nor a debit (400 to 699): its direction is not defined, and an amount's sign is never guessed.",
    );
    expect(refusal(() => readStatementText(BAI2_FILE.replace('1,261126,2400', '1,261131,2400'), 'd.bai'))).toBe('d.bai, line 2: as-of date 261131 is not a date (2026-11-31 does not exist).');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('16,475,30000,', '16,475,300.00,'), 'm.bai'))).toBe('m.bai, line 7: amount "300.00" of the transaction is not an unsigned whole number of minor units.');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('+142550', '142550.00'), 'b.bai'))).toBe('b.bai, line 3: amount "142550.00" of type code 015 is not a whole number of minor units (a sign allowed).');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('03,0975312468,USD,', '03,0975312468,XYZ,'), 'x.bai'))).toBe('x.bai, line 3: currency "XYZ" is not an ISO 4217 currency with known minor units.');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('16,195,25000,V,261125', '16,195,25000,V,260230'), 'v.bai'))).toBe('v.bai, line 6: value date 260230 is not a date (2026-02-30 does not exist).');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('16,475,30000,0,', '16,475,30000,X,'), 'ft.bai'))).toBe('ft.bai, line 7: funds type "X" is not one of 0, 1, 2, S, V, D, Z.');
  });

  it('refuses a broken structure: a missing trailer, a continuation first, an unknown record, records after the end, a control character', () => {
    expect(refusal(() => readStatementText(BAI2_FILE.replace('49,697450,8/\n', ''), 'a.bai'))).toBe('a.bai, line 10: a 98 record where the account trailer (49) belongs.');
    expect(refusal(() => readBai2(`88,1/\n${BAI2_FILE}`, 'c.bai'))).toBe('c.bai, line 1: a continuation (88) before any record.');
    expect(refusal(() => readBai2(`02,1/\n${BAI2_FILE}`, 'h.bai'))).toBe('h.bai, line 1: a 02 record where the file header (01) belongs.');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('16,699', '17,699'), 'u.bai'))).toBe("u.bai, line 9: record code 17 is not one of BAI2's (01, 02, 03, 16, 88, 49, 98, 99).");
    expect(refusal(() => readStatementText(`${BAI2_FILE}01,X,Y,261127,0600,8,,,2/\n`, 'e.bai'))).toBe('e.bai, line 13: a 01 record after the file trailer (99).');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('99,697450,1,12/\n', ''), 't.bai'))).toBe('t.bai: ends before its file trailer (99).');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('ACCOUNT FEES', 'ACCOUNT\u0000FEES'), 'n.bai'))).toBe('n.bai, line 9: holds the control character U+0000, which no statement has.');
    expect(refusal(() => readStatementText(BAI2_FILE.replace('ACME,BANKUS33,1,', 'ACME,BANKUS33,4,'), 's.bai'))).toBe('s.bai, line 2: group status 4 (test only) is not imported: only a group of status 1 (update) is a statement of the account.');
  });

  it('reads an account without a closing ledger (015), or of an interim as-of date, as an intraday report: never a closing', () => {
    const noClosing = BAI2_FILE.replace(',015,+142550,,/', '/').replace('49,697450,', '49,554900,').replace('98,697450,', '98,554900,').replace('99,697450,', '99,554900,');
    const [statement] = readStatementText(noClosing, 'i.bai');
    expect(statement!.intraday).toBe(true);
    expect(closingBooked(statement!)).toBeNull();
    const interim = readStatementText(BAI2_FILE.replace(',2400,USD,2/', ',2400,USD,3/'), 'm.bai');
    expect(interim[0]!.intraday).toBe(true);
  });

  it('skips the funds type fields (S availability, D distributions) and counts their amounts in no total', () => {
    const text = BAI2_FILE.replace('16,699,2450,,FEE9', '16,699,2450,S,1000,1000,450,FEE9').replace('16,475,30000,0,CHK1001', '16,475,30000,D,2,0,10000,1,20000,CHK1001');
    const [statement] = readStatementText(text, 's.bai');
    expect(statement!.entries.map((e) => [e.amount, e.bankReference, e.details])).toEqual([
      [25_000n, 'WIRE123', 'WIRE FROM ACME CORP, REF 77'],
      [-30_000n, 'CHK1001', 'CHECK PAID NUMBER 1001'],
      [-2_450n, 'FEE9', 'ACCOUNT FEES'],
    ]);
  });

  it('writes sample files that read back with the balances and entries written, and prove ok', () => {
    const text = writeBai2({ iban: 'unused', currency: 'USD', opening: 1_000_000n, days: [{ sequence: 1, date: '2026-11-26', entries: [250_000n, -2_550n] }, { sequence: 2, date: '2026-11-27', entries: [-100n] }] }, '1234567890');
    const statements = readStatementText(text, 'sample.bai');
    expect(statements.map((s) => [s.businessDate, openingBooked(s), closingBooked(s), s.entries.map((e) => e.amount)])).toEqual([
      ['2026-11-26', 1_000_000n, 1_247_450n, [250_000n, -2_550n]],
      ['2026-11-27', 1_247_450n, 1_247_350n, [-100n]],
    ]);
    expect(statements.every((s) => proveStatement(provableOf(s), null).proof === 'ok')).toBe(true);
  });
});
