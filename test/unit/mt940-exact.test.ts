import { describe, expect, it } from 'vitest';
import { KWD_MT940 } from '../helpers/statement-fixtures.js';
import { readStatementText } from '../../src/statements/read-statement-file.js';
import { writeMt940, type SampleStatements } from '../../src/statements/sample-statements.js';
import { provableOf, proveStatement } from '../../src/statements/statement-proof.js';
import { refusal } from '../helpers/statement-refusal.js';


const oneDay: SampleStatements = { iban: 'DE89370400440532013000', currency: 'EUR', opening: 1_000_000n, days: [{ sequence: 7, date: '2026-11-30', entries: [250_000n, -2_550n] }] };

describe('MT940 amounts, dates and currencies, exactly as written', () => {
  it('reads a KWD statement with three decimals exactly: closing 1001.765, entries 1010 and -125 fils, proof ok', () => {
    const [statement] = readStatementText(KWD_MT940, 'kwd.sta');
    expect(statement!.balances).toEqual([
      { code: 'OPBD', amount: 1_000_880n, date: '2026-11-28' },
      { code: 'CLBD', amount: 1_001_765n, date: '2026-11-28' },
    ]);
    expect(statement!.entries.map((e) => e.amount)).toEqual([1_010n, -125n]);
    expect(proveStatement(provableOf(statement!), null).proof).toBe('ok');
  });

  it('refuses more decimals than the currency has, naming the file and the line, never rounding', () => {
    const text = writeMt940(oneDay).replace(/:62F:C261130EUR[\d,]+/, ':62F:C261130EUR12474,505');
    expect(refusal(() => readStatementText(text, 'eur.sta'))).toBe('eur.sta, line 10: :62F: amount 12474,505 is not an amount in EUR: EUR has 2 decimals (ISO 4217), and an amount is never rounded.');
    const entry = writeMt940(oneDay).replace(/C2500,00NTRF/, 'C2500,001NTRF');
    expect(refusal(() => readStatementText(entry, 'e.sta'))).toMatch(/^e\.sta, line 6: :61: amount 2500,001 is not an amount in EUR/);
  });

  it('refuses a date that does not exist (31 November, 30 February, an entry date of 31 April) naming the line', () => {
    const text = writeMt940(oneDay).replace(':62F:C261130', ':62F:C261131');
    expect(refusal(() => readStatementText(text, 'nov.sta'))).toBe('nov.sta, line 10: :62F: date 261131 is not a date (2026-11-31 does not exist).');
    const feb = writeMt940(oneDay).replace(':60F:C261129', ':60F:C260230');
    expect(refusal(() => readStatementText(feb, 'feb.sta'))).toBe('feb.sta, line 5: :60F: date 260230 is not a date (2026-02-30 does not exist).');
    const entry = writeMt940(oneDay).replace(':61:2611301130C', ':61:2611300431C');
    expect(refusal(() => readStatementText(entry, 'apr.sta'))).toBe('apr.sta, line 6: :61: entry date 0431 is not a date (2026-04-31 does not exist).');
  });

  it('refuses a balance in another currency than the statement, naming the line', () => {
    const text = writeMt940(oneDay).replace(':62F:C261130EUR', ':62F:C261130USD');
    expect(refusal(() => readStatementText(text, 'usd.sta'))).toBe('usd.sta, line 10: :62F: is in USD, the statement (its opening balance) in EUR.');
    const available = writeMt940(oneDay).replace(':64:C261130EUR', ':64:C261130JPY');
    expect(refusal(() => readStatementText(available, 'jpy.sta'))).toBe('jpy.sta, line 11: :64: is in JPY, the statement (its opening balance) in EUR.');
  });

  it('stores the reversal flag: RC is money out, RD money in', () => {
    const text = KWD_MT940.replace(':61:2611281128C1,010', ':61:2611281128RD1,010').replace(':61:2611281128D0,125', ':61:2611281128RC0,125');
    const [statement] = readStatementText(text, 'rev.sta');
    expect(statement!.entries.map((e) => [e.amount, e.creditDebit, e.reversal])).toEqual([
      [1_010n, 'credit', true],
      [-125n, 'debit', true],
    ]);
  });

  it('refuses a NUL or other control byte naming the line', () => {
    const text = KWD_MT940.replace(':86:in', ':86:i\u0000n');
    expect(refusal(() => readStatementText(text, 'nul.sta'))).toBe('nul.sta, line 6: holds the control character U+0000, which no statement has.');
  });

  it('reads an MT942 interim report as intraday entries, its :90D:/:90C: totals checked', () => {
    const mt942 = [':20:INTRA-1', ':25:DE89370400440532013000', ':28C:5/1', ':34F:EUR0,', ':13D:2611301200+0100', ':61:2611301130C10,00NTRFA//B', ':61:2611301130D2,50NCHGB', ':90D:1EUR2,50', ':90C:1EUR10,00', ''].join('\r\n');
    const [report] = readStatementText(mt942, 'i.sta');
    expect(report).toMatchObject({ format: 'mt942', intraday: true, businessDate: '2026-11-30', currency: 'EUR', balances: [] });
    expect(report!.entries.map((e) => e.amount)).toEqual([1_000n, -250n]);
    expect(refusal(() => readStatementText(mt942.replace(':90C:1EUR10,00', ':90C:1EUR10,01'), 'j.sta'))).toMatch(/^j\.sta, line 9: :90C: says 1 entries of 10,01/);
  });

  it('a :28C: restarting at 1 on the first statement of a year is no gap; within a year it is', () => {
    const days: SampleStatements = { ...oneDay, days: [{ sequence: 250, date: '2026-12-31', entries: [100n] }, { sequence: 1, date: '2027-01-04', entries: [-100n] }] };
    const [december, january] = readStatementText(writeMt940(days), 'year.sta');
    const previous = { closing: december!.balances.find((b) => b.code === 'CLBD')!.amount, sequence: 250n, businessDate: '2026-12-31' };
    expect(proveStatement(provableOf(january!), previous).proof).toBe('ok');
    expect(proveStatement(provableOf({ ...january!, sequence: 252n }), previous)).toMatchObject({ proof: 'sequence_gap', missing: { from: 251n, to: 251n } });
  });
});
