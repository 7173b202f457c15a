import { describe, expect, it } from 'vitest';
import { reconcileBankDay, type BankDayInput } from '../../src/reconciliation/bank-rules.js';

const base: BankDayInput = {
  account: 'eu-bank',
  businessDate: '2026-11-03',
  currency: 'EUR',
  scale: 2,
  statement: { id: 9, closing: 120_000n, proof: 'ok', residual: null, missing: null, reason: null },
  previousClosing: 100_000n,
  books: [{ currency: 'EUR', balance: 120_000n }],
  withoutBooks: 'await',
  withoutStatement: 'await',
  statementDueAt: '2026-11-05T12:00:00.000Z',
  toleranceFor: () => 0n,
};

describe('bank leg rules', () => {
  it('compares the closing booked balance with the books by the gateway rules: matched, break, movement from the previous closing', () => {
    expect(reconcileBankDay(base)).toEqual([
      expect.objectContaining({ status: 'matched', currency: 'EUR', gatewayBalance: 120_000n, expectedBalance: 120_000n, difference: 0n, movement: 20_000n, previousBalance: 100_000n, runId: null, source: 'bank', bankStatementId: 9 }),
    ]);
    const short = reconcileBankDay({ ...base, books: [{ currency: 'EUR', balance: 119_900n }] });
    expect(short).toEqual([expect.objectContaining({ status: 'break', difference: 100n, source: 'bank' })]);
    // The tolerance is the gateway leg's: within it, matched.
    expect(reconcileBankDay({ ...base, books: [{ currency: 'EUR', balance: 119_900n }], toleranceFor: () => 100n })[0]!.status).toBe('matched');
  });

  it('awaits books, then misses them, like a wallet', () => {
    expect(reconcileBankDay({ ...base, books: [] })[0]).toMatchObject({ status: 'awaiting_books', source: 'bank' });
    expect(reconcileBankDay({ ...base, books: [], withoutBooks: 'miss' })[0]).toMatchObject({ status: 'no_books', currency: null, source: 'bank' });
  });

  it('without a statement: awaiting_statement until the deadline, then no_statement', () => {
    expect(reconcileBankDay({ ...base, statement: null })).toEqual([expect.objectContaining({ status: 'awaiting_statement', currency: 'EUR', gatewayBalance: null, expectedBalance: 120_000n, note: null, source: 'bank' })]);
    expect(reconcileBankDay({ ...base, statement: null, withoutStatement: 'miss' })[0]).toMatchObject({
      status: 'no_statement',
      note: 'no statement closing on 2026-11-03 had been imported by 2026-11-05T12:00:00.000Z (RECON_STATEMENT_DEADLINE after the cut-off)',
    });
  });

  it('a statement that fails its proof is never green, whatever the books say', () => {
    const broken = reconcileBankDay({ ...base, statement: { ...base.statement!, proof: 'roll_forward_break', residual: 50n, reason: 'opening booked + booked entries ≠ closing booked' } });
    expect(broken).toEqual([expect.objectContaining({ status: 'roll_forward_break', difference: 0n, note: 'the statement does not roll forward: residual 0.50 EUR (opening booked + booked entries ≠ closing booked)' })]);
    const gap = reconcileBankDay({ ...base, books: [], statement: { ...base.statement!, proof: 'sequence_gap', missing: '41, 42', reason: 'the previous statement, of 2026-11-01, is number 40' } });
    expect(gap).toEqual([expect.objectContaining({ status: 'sequence_gap', note: 'statement sequence numbers 41, 42 missing (the previous statement, of 2026-11-01, is number 40)' })]);
  });
});
