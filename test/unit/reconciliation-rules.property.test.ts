import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reconcileAccountDay, type BookBalance, type ReconcileInput, type SnapshotBalance } from '../../src/reconciliation/reconcile-rules.js';

/**
 * The arithmetic of a reconciliation, for any amounts a numeric(38,0) column can hold and more
 * than any float can: the difference is exactly gateway minus books, the tolerance band is
 * the same on both sides, and the result does not depend on the order the rows came in.
 */

const LIMIT = 10n ** 30n;
const amount = fc.bigInt({ min: -LIMIT, max: LIMIT });
const tolerance = fc.bigInt({ min: 0n, max: LIMIT });
const currency = fc.stringMatching(/^[A-Z]{3}$/);

function oneWallet(gateway: bigint, books: bigint, toleranceFor: bigint): ReconcileInput {
  return {
    account: 'acme',
    businessDate: '2026-11-20',
    snapshot: { runId: 1, balances: [{ currency: 'EUR', balance: gateway, singleBalance: gateway }] },
    previous: null,
    books: [{ currency: 'EUR', balance: books }],
    toleranceFor: () => toleranceFor,
  };
}

const statusOf = (gateway: bigint, books: bigint, t: bigint) => reconcileAccountDay(oneWallet(gateway, books, t))[0]!.status;

describe('reconciliation arithmetic (properties)', () => {
  it('computes the difference as exactly gateway minus books, beyond 2^53', () => {
    fc.assert(
      fc.property(amount, amount, (gateway, books) => {
        const [row] = reconcileAccountDay(oneWallet(gateway, books, 0n));
        expect(row!.difference).toBe(gateway - books);
        expect(row!.gatewayBalance).toBe(gateway);
        expect(row!.expectedBalance).toBe(books);
        expect(row!.status).toBe(gateway === books ? 'matched' : 'break');
      }),
      { numRuns: 200 },
    );
  });

  it('matches exactly when the difference is within the tolerance, on either side', () => {
    fc.assert(
      fc.property(amount, amount, tolerance, (books, delta, t) => {
        const above = statusOf(books + delta, books, t);
        const below = statusOf(books - delta, books, t);
        expect(above).toBe(below);
        expect(above).toBe((delta < 0n ? -delta : delta) <= t ? 'matched' : 'break');
      }),
      { numRuns: 200 },
    );
  });

  it('matches at the edge of the tolerance and breaks one minor unit beyond, either side', () => {
    fc.assert(
      fc.property(amount, tolerance, (books, t) => {
        expect([statusOf(books + t, books, t), statusOf(books - t, books, t)]).toEqual(['matched', 'matched']);
        expect([statusOf(books + t + 1n, books, t), statusOf(books - t - 1n, books, t)]).toEqual(['break', 'break']);
      }),
      { numRuns: 200 },
    );
  });

  it('gives the same results whatever the order of snapshot, books and previous rows', () => {
    const day = fc
      .uniqueArray(currency, { minLength: 1, maxLength: 8 })
      .chain((currencies) =>
        fc.record({
          snapshot: fc.tuple(...currencies.map((c) => fc.option(fc.record({ currency: fc.constant(c), balance: amount, single: fc.option(amount) })))),
          books: fc.tuple(...currencies.map((c) => fc.option(fc.record({ currency: fc.constant(c), balance: amount })))),
          previous: fc.tuple(...currencies.map((c) => fc.option(fc.record({ currency: fc.constant(c), balance: amount })))),
        }),
      )
      .map(({ snapshot, books, previous }) => ({
        snapshot: snapshot.flatMap((s): SnapshotBalance[] => (s === null ? [] : [{ currency: s.currency, balance: s.balance, singleBalance: s.single }])),
        books: books.filter((b): b is BookBalance => b !== null),
        previous: previous.filter((b): b is BookBalance => b !== null),
      }));
    const shuffled = <T>(rows: T[]) => fc.shuffledSubarray(rows, { minLength: rows.length, maxLength: rows.length });

    fc.assert(
      fc.property(
        day.chain((d) => fc.tuple(fc.constant(d), shuffled(d.snapshot), shuffled(d.books), shuffled(d.previous))),
        tolerance,
        ([d, snapshot, books, previous], t) => {
          const run = (s: SnapshotBalance[], b: BookBalance[], p: BookBalance[]) =>
            reconcileAccountDay({
              account: 'acme',
              businessDate: '2026-11-20',
              snapshot: { runId: 3, balances: s },
              previous: { balances: p },
              books: b,
              toleranceFor: () => t,
            });
          const inOrder = run(d.snapshot, d.books, d.previous);
          expect(run(snapshot, books, previous)).toEqual(inOrder);
          expect(inOrder.map((r) => r.currency)).toEqual([...inOrder.map((r) => r.currency)].sort());
        },
      ),
      { numRuns: 150 },
    );
  });
});
