import { describe, expect, it } from 'vitest';
import { reconcileBankDay, type BankDayInput } from '../../src/reconciliation/bank-rules.js';

const base: BankDayInput = {
  account: 'jp-bank',
  businessDate: '2026-11-03',
  currency: 'JPY',
  scale: 0,
  statement: { id: 4, closing: 9007199254740993n, proof: 'ok', residual: null, missing: null, reason: null },
  previousClosing: null,
  books: [{ currency: 'JPY', balance: 9007199254740993n }],
  withoutBooks: 'await',
  withoutStatement: 'await',
  statementDueAt: '2026-11-05T03:00:00.000Z',
  toleranceFor: () => 0n,
};

describe('bank leg rules, edge cases', () => {
  it('compares exactly past 2^53, and without a previous closing has no movement', () => {
    expect(reconcileBankDay(base)).toEqual([
      {
        account: 'jp-bank',
        businessDate: '2026-11-03',
        currency: 'JPY',
        gatewayBalance: 9007199254740993n,
        singleBalance: null,
        expectedBalance: 9007199254740993n,
        previousBalance: null,
        movement: null,
        difference: 0n,
        status: 'matched',
        runId: null,
        note: null,
        source: 'bank',
        bankStatementId: 4,
        itemsTotal: 0n,
        unexplained: 0n,
      },
    ]);
    expect(reconcileBankDay({ ...base, books: [{ currency: 'JPY', balance: 9007199254740992n }] })[0]).toMatchObject({ status: 'break', difference: 1n });
  });

  it('without a statement keeps the books of its own currency only, and no statement id', () => {
    expect(reconcileBankDay({ ...base, statement: null, books: [{ currency: 'USD', balance: 5n }], previousClosing: 7n, withoutStatement: 'miss' })).toEqual([
      {
        account: 'jp-bank',
        businessDate: '2026-11-03',
        currency: 'JPY',
        gatewayBalance: null,
        singleBalance: null,
        expectedBalance: null,
        previousBalance: 7n,
        movement: null,
        difference: null,
        status: 'no_statement',
        runId: null,
        note: 'no statement closing on 2026-11-03 had been imported by 2026-11-05T03:00:00.000Z (RECON_STATEMENT_DEADLINE after the cut-off)',
        source: 'bank',
        bankStatementId: null,
      },
    ]);
  });

  it('names one missing sequence number in the singular, a range or a list in the plural', () => {
    const gap = (missing: string) => reconcileBankDay({ ...base, statement: { ...base.statement!, proof: 'sequence_gap', missing, reason: 'the previous statement is number 40' } })[0]!.note;
    expect(gap('41')).toBe('statement sequence number 41 missing (the previous statement is number 40)');
    expect(gap('41 to 45')).toBe('statement sequence numbers 41 to 45 missing (the previous statement is number 40)');
    expect(gap('41, 43')).toBe('statement sequence numbers 41, 43 missing (the previous statement is number 40)');
  });

  it('names a backward jump or a repeated number by its reason, none missing', () => {
    const [result] = reconcileBankDay({ ...base, statement: { ...base.statement!, proof: 'sequence_gap', missing: null, reason: 'number 5 comes after number 7, of 2026-12-01: a backward jump' } });
    expect(result).toMatchObject({ status: 'sequence_gap', note: 'statement sequence out of order: number 5 comes after number 7, of 2026-12-01: a backward jump' });
  });

  it('writes a roll-forward residual at the account’s scale, zero when none was computed', () => {
    const broken = (residual: bigint | null) =>
      reconcileBankDay({ ...base, statement: { ...base.statement!, proof: 'roll_forward_break', residual, reason: 'entries do not add up' } })[0]!;
    expect(broken(-1500n)).toMatchObject({ status: 'roll_forward_break', note: 'the statement does not roll forward: residual -1,500 JPY (entries do not add up)', bankStatementId: 4 });
    expect(broken(null).note).toBe('the statement does not roll forward: residual 0 JPY (entries do not add up)');
  });

  it('leaves the results of other currencies in the books as the rules made them, marked as the bank’s', () => {
    const results = reconcileBankDay({
      ...base,
      books: [
        { currency: 'JPY', balance: 9007199254740993n },
        { currency: 'USD', balance: 100n },
      ],
      statement: { ...base.statement!, proof: 'sequence_gap', missing: '9', reason: 'r' },
    });
    expect(results.map((r) => [r.currency, r.status, r.source, r.bankStatementId])).toEqual([
      ['JPY', 'sequence_gap', 'bank', 4],
      ['USD', 'missing_in_gateway', 'bank', 4],
    ]);
    expect(results[1]!.note).toBeNull();
  });

  it('hands the rules the tolerance for the compared balance', () => {
    const asked: Array<[string, bigint]> = [];
    const toleranceFor = (currency: string, balance: bigint) => {
      asked.push([currency, balance]);
      return 2n;
    };
    expect(reconcileBankDay({ ...base, toleranceFor, books: [{ currency: 'JPY', balance: 9007199254740991n }] })[0]!.status).toBe('matched');
    expect(asked).toEqual([['JPY', 9007199254740991n]]);
  });
});
