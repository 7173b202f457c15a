import type { ReconciliationResult, ReconciliationStatus } from './reconciliation-result.js';
import { waterfallOf, type OpenItems } from './waterfall.js';

/** One wallet as the snapshot holds it: the list endpoint's balance and the single-wallet endpoint's. */
export interface SnapshotBalance {
  currency: string;
  balance: bigint;
  singleBalance: bigint | null;
  /** Why the single-wallet read could not confirm the listed balance; absent or null when it did. */
  unconfirmedReason?: string | null;
  /**
   * What to set so the wallet's raw integer can be read, when its currency has no known decimals
   * (XAG without GATEWAY_AMOUNT_DECIMALS_XAG); absent or null when they are known.
   */
  unknownDecimals?: string | null;
}

/** One expected balance from the books. */
export interface BookBalance {
  currency: string;
  balance: bigint;
}

/** Everything the rules need for one account and business date, already read from the database. */
export interface ReconcileInput {
  account: string;
  businessDate: string;
  /** The day's snapshot, or null when no run succeeded for the date (a bank account's statement: runId null). */
  snapshot: { runId: number | null; balances: readonly SnapshotBalance[] } | null;
  /** The snapshot of the previous business date that has one, for movement and disappeared wallets. */
  previous: { balances: readonly Pick<SnapshotBalance, 'currency' | 'balance'>[] } | null;
  books: readonly BookBalance[];
  /**
   * What to do when the date has no books at all: `await` them (each wallet `awaiting_books`, no
   * verdict yet) until the books deadline (the default), then `miss` them (one account-level `no_books`).
   */
  withoutBooks?: 'await' | 'miss';
  /**
   * Allowed absolute difference, in minor units, per currency, for a balance of that size (a
   * relative tolerance grows with it; an absolute one ignores it).
   */
  toleranceFor: (currency: string, balance: bigint) => bigint;
  /** The reconciling items open on the date for a currency (at the comparison scale); none when absent. */
  itemsFor?: (currency: string) => OpenItems | undefined;
}

const NO_ITEMS: OpenItems = { total: 0n, count: 0, description: '' };

const abs = (v: bigint): bigint => (v < 0n ? -v : v);
// A relative tolerance is taken of the smaller side, so a wrong balance never widens its own tolerance.
const smallerMagnitude = (a: bigint, b: bigint): bigint => (abs(a) < abs(b) ? abs(a) : abs(b));

/**
 * The reconciliation rules: a pure function from one account-day's inputs to its results,
 * one per currency seen on either side (sorted), or a single `no_snapshot` row.
 *
 * Precedence for a currency the gateway reports: `unknown_decimals` (its raw integer cannot be
 * read: nothing is compared, the result says which setting to add), `endpoint_mismatch` (the
 * snapshot itself is in doubt, so it is reported even when the books match), then `missing_in_ledger`, then
 * `break` or `matched`. For one it does not: `disappeared` when the previous snapshot had it
 * (an absent wallet is never read as zero), else `missing_in_gateway`. Zero on one side and
 * absent on the other matches. A date without books waits for them (`awaiting_books`, no
 * verdict) until their deadline, then is one account-level `no_books`.
 */
export function reconcileAccountDay(input: ReconcileInput): ReconciliationResult[] {
  const { account, businessDate, snapshot } = input;
  const accountLevel = (status: 'no_snapshot' | 'no_books', runId: number | null): ReconciliationResult => ({
    account,
    businessDate,
    currency: null,
    gatewayBalance: null,
    singleBalance: null,
    expectedBalance: null,
    previousBalance: null,
    movement: null,
    difference: null,
    status,
    runId,
  });
  if (snapshot === null) return [accountLevel('no_snapshot', null)];
  if (input.books.length === 0 && input.withoutBooks === 'miss') return [accountLevel('no_books', snapshot.runId)];
  const awaitingBooks = input.books.length === 0;
  const gateway = new Map(snapshot.balances.map((b) => [b.currency, b]));
  const books = new Map(input.books.map((b) => [b.currency, b.balance]));
  const previous = new Map((input.previous?.balances ?? []).map((b) => [b.currency, b.balance]));
  const currencies = [...new Set([...gateway.keys(), ...books.keys(), ...previous.keys()])].sort();

  const results: ReconciliationResult[] = [];
  for (const currency of currencies) {
    const wallet = gateway.get(currency);
    const expected = books.get(currency) ?? null;
    const previousBalance = previous.get(currency) ?? null;
    if (wallet === undefined) {
      // Books that hold a currency at zero which the gateway does not list agree with it: nothing
      // to follow every night (unless the wallet held money the day before and is gone).
      if (expected === 0n && (previousBalance === null || previousBalance === 0n)) {
        results.push(row(input, currency, 'matched', { expectedBalance: expected, previousBalance, difference: 0n }));
        continue;
      }
      // A wallet that was there yesterday and is gone today: not a zero balance, a question.
      if (previousBalance !== null) {
        results.push(row(input, currency, 'disappeared', { expectedBalance: expected, previousBalance }));
      } else if (expected !== null) {
        results.push(row(input, currency, 'missing_in_gateway', { expectedBalance: expected }));
      }
      continue;
    }
    if (wallet.unknownDecimals !== undefined && wallet.unknownDecimals !== null) {
      results.push(
        row(input, currency, 'unknown_decimals', {
          gatewayBalance: wallet.balance,
          singleBalance: wallet.singleBalance,
          expectedBalance: expected,
          previousBalance,
          note: wallet.unknownDecimals,
        }),
      );
      continue;
    }
    // A wallet at zero the books do not list is the same as the books saying zero.
    const booksSide = expected ?? (wallet.balance === 0n && !awaitingBooks ? 0n : null);
    const difference = booksSide === null ? null : wallet.balance - booksSide;
    const unconfirmed = wallet.unconfirmedReason !== undefined && wallet.unconfirmedReason !== null;
    const status: ReconciliationStatus | 'compared' =
      unconfirmed || (wallet.singleBalance !== null && wallet.singleBalance !== wallet.balance)
        ? 'endpoint_mismatch'
        : awaitingBooks
          ? 'awaiting_books'
          : difference === null
            ? 'missing_in_ledger'
            : 'compared';
    // Books + open items + unexplained = gateway balance: only what no item explains is a break.
    const items = input.itemsFor?.(currency) ?? NO_ITEMS;
    const waterfall = status === 'compared' ? waterfallOf(difference!, items, input.toleranceFor(currency, smallerMagnitude(wallet.balance, booksSide!))) : undefined;
    results.push(
      row(input, currency, waterfall?.status ?? (status as ReconciliationStatus), {
        gatewayBalance: wallet.balance,
        singleBalance: wallet.singleBalance,
        expectedBalance: expected,
        previousBalance,
        movement: previousBalance === null ? null : wallet.balance - previousBalance,
        difference,
        itemsTotal: waterfall?.itemsTotal ?? (items.count > 0 ? items.total : null),
        unexplained: waterfall?.unexplained ?? null,
        note: unconfirmed
          ? `the single-wallet read could not confirm the listed balance: ${wallet.unconfirmedReason}`
          : waterfall?.status === 'explained'
            ? `explained by ${items.description}`
            : waterfall?.status === 'break' && items.count > 0
              ? `open items ${items.description} leave part of the difference unexplained`
              : null,
      }),
    );
  }
  return results;
}

function row(
  input: ReconcileInput,
  currency: string,
  status: ReconciliationStatus,
  amounts: Partial<Pick<ReconciliationResult, 'gatewayBalance' | 'singleBalance' | 'expectedBalance' | 'previousBalance' | 'movement' | 'difference' | 'itemsTotal' | 'unexplained' | 'note'>>,
): ReconciliationResult {
  return {
    account: input.account,
    businessDate: input.businessDate,
    currency,
    gatewayBalance: amounts.gatewayBalance ?? null,
    singleBalance: amounts.singleBalance ?? null,
    expectedBalance: amounts.expectedBalance ?? null,
    previousBalance: amounts.previousBalance ?? null,
    movement: amounts.movement ?? null,
    difference: amounts.difference ?? null,
    ...(amounts.itemsTotal === undefined && amounts.unexplained === undefined ? {} : { itemsTotal: amounts.itemsTotal ?? null, unexplained: amounts.unexplained ?? null }),
    status,
    runId: input.snapshot?.runId ?? null,
    note: amounts.note ?? null,
  };
}
