import { describe, expect, it } from 'vitest';
import { reconcileAccountDay, type ReconcileInput } from '../../src/reconciliation/reconcile-rules.js';
import { countByStatus, reconciliationExitCode } from '../../src/reconciliation/reconciliation-result.js';

const snapshot = (balances: Array<[string, bigint] | [string, bigint, bigint | null]>) => ({
  runId: 7,
  balances: balances.map(([currency, balance, single]) => ({ currency, balance, singleBalance: single === undefined ? balance : single })),
});

function input(overrides: Partial<ReconcileInput>): ReconcileInput {
  return { account: 'acme', businessDate: '2026-11-20', snapshot: snapshot([]), previous: null, books: [], toleranceFor: () => 0n, ...overrides };
}

const statuses = (rows: ReturnType<typeof reconcileAccountDay>) => Object.fromEntries(rows.map((r) => [r.currency, r.status]));

describe('reconciliation rules', () => {
  it('flags a wallet of unknown decimals before any other rule: no comparison, no difference, the note says what to set', () => {
    const advice = 'set GATEWAY_AMOUNT_DECIMALS_XAG';
    const rows = reconcileAccountDay(
      input({
        snapshot: { runId: 7, balances: [{ currency: 'XAG', balance: 123_456n, singleBalance: 1n, unknownDecimals: advice }, { currency: 'EUR', balance: 5n, singleBalance: 5n, unknownDecimals: null }] },
        books: [{ currency: 'XAG', balance: 123_456n }, { currency: 'EUR', balance: 5n }],
      }),
    );
    expect(rows).toEqual([
      expect.objectContaining({ currency: 'EUR', status: 'matched' }),
      expect.objectContaining({ currency: 'XAG', status: 'unknown_decimals', gatewayBalance: 123_456n, singleBalance: 1n, expectedBalance: 123_456n, difference: null, movement: null, note: advice }),
    ]);
    expect(reconciliationExitCode(countByStatus(rows))).toBe(3);
  });

  it('matches equal balances and breaks unequal ones, difference = gateway - books', () => {
    const rows = reconcileAccountDay(
      input({
        snapshot: snapshot([['EUR', 1000n], ['USD', 500n]]),
        books: [{ currency: 'EUR', balance: 1000n }, { currency: 'USD', balance: 400n }],
      }),
    );
    expect(rows).toEqual([
      expect.objectContaining({ currency: 'EUR', status: 'matched', gatewayBalance: 1000n, expectedBalance: 1000n, difference: 0n, runId: 7 }),
      expect.objectContaining({ currency: 'USD', status: 'break', gatewayBalance: 500n, expectedBalance: 400n, difference: 100n }),
    ]);
  });

  it('accepts a difference within the currency tolerance and breaks just beyond it, either sign', () => {
    const tolerance = (c: string) => (c === 'JPY' ? 100n : 0n);
    const rows = reconcileAccountDay(
      input({
        snapshot: snapshot([['JPY', 10_100n], ['CHF', 10_000n], ['EUR', 1n]]),
        books: [{ currency: 'JPY', balance: 10_000n }, { currency: 'CHF', balance: 10_101n }, { currency: 'EUR', balance: 0n }],
        toleranceFor: (c) => (c === 'CHF' ? 100n : tolerance(c)),
      }),
    );
    expect(statuses(rows)).toEqual({ CHF: 'break', EUR: 'break', JPY: 'matched' });
    expect(rows.find((r) => r.currency === 'CHF')!.difference).toBe(-101n);
  });

  it('matches exactly at -tolerance and +tolerance, and breaks at tolerance + 1 on either side', () => {
    // Tolerance 100 on every currency; each gateway balance sits at one edge of the band around 10,000.
    const rows = reconcileAccountDay(
      input({
        snapshot: snapshot([['AUD', 9_900n], ['CAD', 10_100n], ['CHF', 10_101n], ['DKK', 9_899n]]),
        books: ['AUD', 'CAD', 'CHF', 'DKK'].map((currency) => ({ currency, balance: 10_000n })),
        toleranceFor: () => 100n,
      }),
    );
    expect(rows.map((r) => [r.currency, r.difference, r.status])).toEqual([
      ['AUD', -100n, 'matched'],
      ['CAD', 100n, 'matched'],
      ['CHF', 101n, 'break'],
      ['DKK', -101n, 'break'],
    ]);
  });

  it('reports a currency on one side only as missing_in_ledger or missing_in_gateway', () => {
    const rows = reconcileAccountDay(input({ snapshot: snapshot([['EUR', 5n]]), books: [{ currency: 'GBP', balance: 9n }] }));
    expect(rows).toEqual([
      expect.objectContaining({ currency: 'EUR', status: 'missing_in_ledger', gatewayBalance: 5n, expectedBalance: null, difference: null }),
      expect.objectContaining({ currency: 'GBP', status: 'missing_in_gateway', gatewayBalance: null, expectedBalance: 9n, difference: null }),
    ]);
  });

  it('reports endpoint_mismatch when list and single-wallet readings differ, even if the books match', () => {
    const rows = reconcileAccountDay(input({ snapshot: snapshot([['EUR', 100n, 99n]]), books: [{ currency: 'EUR', balance: 100n }] }));
    expect(rows[0]).toMatchObject({ status: 'endpoint_mismatch', gatewayBalance: 100n, singleBalance: 99n, difference: 0n });
  });

  it('treats a snapshot without a single-wallet reading (statements) as agreeing with itself', () => {
    const rows = reconcileAccountDay(input({ snapshot: snapshot([['EUR', 100n, null]]), books: [{ currency: 'EUR', balance: 100n }] }));
    expect(rows[0]!.status).toBe('matched');
  });

  it('matches a currency at zero on one side and absent on the other, in both directions', () => {
    const rows = reconcileAccountDay(input({ snapshot: snapshot([['EUR', 5n], ['USD', 0n]]), books: [{ currency: 'EUR', balance: 5n }, { currency: 'JPY', balance: 0n }] }));
    expect(statuses(rows)).toEqual({ EUR: 'matched', JPY: 'matched', USD: 'matched' });
    expect(rows.find((r) => r.currency === 'USD')).toMatchObject({ gatewayBalance: 0n, expectedBalance: null, difference: 0n });
    // A wallet that held money yesterday and is gone is still a question, even when the books say zero.
    const gone = reconcileAccountDay(input({ snapshot: snapshot([['EUR', 5n]]), previous: { balances: [{ currency: 'JPY', balance: 9n }] }, books: [{ currency: 'EUR', balance: 5n }, { currency: 'JPY', balance: 0n }] }));
    expect(statuses(gone)).toEqual({ EUR: 'matched', JPY: 'disappeared' });
  });

  it('awaits the books of a date that has none (no verdict), then misses them in one account-level no_books row', () => {
    const day = { snapshot: snapshot([['EUR', 5n], ['USD', 7n, 8n]]) };
    expect(statuses(reconcileAccountDay(input({ ...day, withoutBooks: 'await' })))).toEqual({ EUR: 'awaiting_books', USD: 'endpoint_mismatch' });
    expect(reconciliationExitCode(countByStatus(reconcileAccountDay(input({ snapshot: snapshot([['EUR', 5n]]), withoutBooks: 'await' }))))).toBe(0);
    expect(reconcileAccountDay(input({ ...day, withoutBooks: 'miss' }))).toEqual([expect.objectContaining({ currency: null, status: 'no_books', runId: 7 })]);
  });

  it('reports a wallet the single read could not confirm as endpoint_mismatch, saying why', () => {
    const rows = reconcileAccountDay(
      input({ snapshot: { runId: 7, balances: [{ currency: 'XOF', balance: 100n, singleBalance: null, unconfirmedReason: 'answered 404' }] }, books: [{ currency: 'XOF', balance: 100n }] }),
    );
    expect(rows).toEqual([expect.objectContaining({ currency: 'XOF', status: 'endpoint_mismatch', note: 'the single-wallet read could not confirm the listed balance: answered 404' })]);
  });

  it('gives one no_snapshot row, currency null, when the date has no snapshot, whatever the books say', () => {
    const rows = reconcileAccountDay(input({ snapshot: null, books: [{ currency: 'EUR', balance: 1n }] }));
    expect(rows).toEqual([expect.objectContaining({ account: 'acme', currency: null, status: 'no_snapshot', runId: null, expectedBalance: null })]);
  });

  it('reports a wallet gone since the previous snapshot as disappeared, never as a zero balance', () => {
    const rows = reconcileAccountDay(
      input({
        snapshot: snapshot([['EUR', 10n]]),
        previous: { balances: [{ currency: 'EUR', balance: 4n }, { currency: 'USD', balance: 70n }] },
        books: [{ currency: 'EUR', balance: 10n }, { currency: 'USD', balance: 70n }],
      }),
    );
    expect(rows).toEqual([
      expect.objectContaining({ currency: 'EUR', status: 'matched', previousBalance: 4n, movement: 6n }),
      expect.objectContaining({ currency: 'USD', status: 'disappeared', gatewayBalance: null, previousBalance: 70n, movement: null, difference: null, expectedBalance: 70n }),
    ]);
  });

  it('leaves movement null for a wallet new since the previous snapshot', () => {
    const rows = reconcileAccountDay(input({ snapshot: snapshot([['EUR', 10n]]), previous: { balances: [] }, books: [{ currency: 'EUR', balance: 10n }] }));
    expect(rows[0]).toMatchObject({ previousBalance: null, movement: null, status: 'matched' });
  });

  it('computes exactly across the 2^53 boundary and at 38 digits', () => {
    const big = 2n ** 53n;
    const huge = 10n ** 37n * 9n;
    const rows = reconcileAccountDay(
      input({
        snapshot: snapshot([['EUR', big + 1n], ['USD', huge + 1n], ['GBP', -(big + 3n)]]),
        previous: { balances: [{ currency: 'EUR', balance: big - 1n }, { currency: 'USD', balance: huge }, { currency: 'GBP', balance: -big }] },
        books: [{ currency: 'EUR', balance: big }, { currency: 'USD', balance: huge + 1n }, { currency: 'GBP', balance: -(big + 3n) }],
      }),
    );
    const byCurrency = Object.fromEntries(rows.map((r) => [r.currency, r]));
    // As JS numbers, 2^53 + 1 and 2^53 are the same value: this break would vanish.
    expect(Number(big + 1n)).toBe(Number(big));
    expect(byCurrency.EUR).toMatchObject({ status: 'break', difference: 1n, movement: 2n });
    expect(byCurrency.USD).toMatchObject({ status: 'matched', difference: 0n, movement: 1n });
    expect(byCurrency.GBP).toMatchObject({ status: 'matched', movement: -3n });
  });

  it('sorts results by currency and maps them to an exit code', () => {
    const rows = reconcileAccountDay(input({ snapshot: snapshot([['USD', 1n], ['AUD', 1n]]), books: [{ currency: 'USD', balance: 1n }, { currency: 'AUD', balance: 1n }] }));
    expect(rows.map((r) => r.currency)).toEqual(['AUD', 'USD']);
    expect(reconciliationExitCode(countByStatus(rows))).toBe(0);
    expect(reconciliationExitCode(countByStatus([...rows, { status: 'no_snapshot' }]))).toBe(3);
  });
});
