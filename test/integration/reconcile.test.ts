import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { reconcileAfterSnapshot, runReconcileJob } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { replaceExpectedBalanceDays } from '../../src/db/expected-balance.repository.js';
import { listResults } from '../../src/db/reconciliation-result.repository.js';
import { insertRunningRun, markRunFailed, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { UsageError } from '../../src/errors.js';
import { createTestContext, writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// These runs stand for captures of the day outside its window: among them the latest is the day's snapshot.
const INTRADAY = { cutoffAt: new Date('2026-12-01T00:00:00Z'), driftSeconds: -86_400, endOfDay: false };

let t: TestDatabase;
let ctx: AppContext;
let accountsFile: string;

beforeAll(async () => {
  t = await createTestDatabase();
  accountsFile = writeAccountsFile([
    { name: 'eu-main', apiKeyEnv: 'EU_KEY', apiSecretEnv: 'EU_SECRET' },
    { name: 'us-main', apiKeyEnv: 'US_KEY', apiSecretEnv: 'US_SECRET' },
  ]);
  ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: accountsFile, RECON_TOLERANCE_JPY: '100' });
});
afterAll(async () => {
  await t?.drop();
});

/** Records a succeeded run with its wallets, as a snapshot would. */
async function snapshot(account: string, businessDate: string, wallets: Record<string, bigint | [bigint, bigint | null]>, startedAt = `${businessDate}T23:55:00Z`): Promise<number> {
  const db = ctx.database.db;
  const runId = await insertRunningRun(db, { account, environment: 'sandbox', trigger: 'manual', businessDate, startedAt: new Date(startedAt), timing: INTRADAY });
  const rows = Object.entries(wallets).map(([currency, v]) => (Array.isArray(v) ? { currency, balance: v[0], singleBalance: v[1] } : { currency, balance: v, singleBalance: v }));
  await insertSnapshotRows(db, runId, account, new Date(startedAt), rows);
  await markRunSucceeded(db, runId, new Date(startedAt), { walletsReported: rows.length, walletsFetched: rows.length, pagesFetched: 1, requests: 1 + rows.length });
  return runId;
}

async function books(account: string, businessDate: string, balances: Record<string, bigint>, source = 'books.csv'): Promise<void> {
  await replaceExpectedBalanceDays(ctx.database.db, Object.entries(balances).map(([currency, balance]) => ({ account, businessDate, currency, balance })), source, new Date());
}

const statusByCurrency = (results: Array<{ currency: string | null; status: string }>) => Object.fromEntries(results.map((r) => [r.currency ?? '-', r.status]));

describe(`reconciliation on ${backend}`, () => {
  beforeEach(async () => {
    const db = ctx.database.db;
    await db.deleteFrom('reconciliation_results').execute();
    await db.deleteFrom('expected_balances').execute();
    await db.deleteFrom('balance_snapshots').execute();
    await db.deleteFrom('snapshot_runs').execute();
    // The deletes above marked their dates owed: nothing is owed in a clean slate.
    await db.deleteFrom('reconciliation_owed').execute();
  });

  it('finds the break, both missing sides and the matches; corrected books reconcile clean, one result per currency', async () => {
    await snapshot('eu-main', '2026-11-20', { EUR: 1000n, USD: 500n, GBP: 70n, CHF: 5n });
    await snapshot('us-main', '2026-11-20', { USD: 1n });
    await books('us-main', '2026-11-20', { USD: 1n });
    // Omits GBP, misstates USD by 100, adds JPY the gateway lacks.
    await books('eu-main', '2026-11-20', { EUR: 1000n, USD: 400n, CHF: 5n, JPY: 9n });

    const first = await runReconcileJob(ctx, { date: '2026-11-20' });
    expect(first.exitCode).toBe(3);
    expect(statusByCurrency(first.results.filter((r) => r.account === 'eu-main'))).toEqual({ CHF: 'matched', EUR: 'matched', GBP: 'missing_in_ledger', JPY: 'missing_in_gateway', USD: 'break' });
    expect(first.results.find((r) => r.status === 'break')!.difference).toBe(100n);
    expect(first.summary).toMatchObject({ matched: 3, break: 1, missing_in_ledger: 1, missing_in_gateway: 1 });
    expect(first.accounts).toEqual([
      { account: 'eu-main', summary: expect.objectContaining({ matched: 2, break: 1 }) },
      { account: 'us-main', summary: expect.objectContaining({ matched: 1, break: 0 }) },
    ]);

    // The corrected books for the day: JPY, not the gateway's, is gone from them.
    await books('eu-main', '2026-11-20', { EUR: 1000n, USD: 500n, CHF: 5n, GBP: 70n }, 'books-corrected.csv');
    const second = await runReconcileJob(ctx, { date: '2026-11-20', account: 'eu-main' });
    expect(second.exitCode).toBe(0);
    const stored = await listResults(ctx.database.db, { from: '2026-11-20', to: '2026-11-20', account: 'eu-main' });
    expect(stored.map((r) => [r.currency, r.status])).toEqual([
      ['CHF', 'matched'],
      ['EUR', 'matched'],
      ['GBP', 'matched'],
      ['USD', 'matched'],
    ]);
    // The other account's results for the date are left alone.
    expect(await listResults(ctx.database.db, { from: '2026-11-20', to: '2026-11-20', account: 'us-main' })).toHaveLength(1);
  });

  it('is idempotent: a re-run replaces the date, it never adds to it', async () => {
    await snapshot('eu-main', '2026-11-20', { EUR: 1n });
    await runReconcileJob(ctx, { date: '2026-11-20' });
    await runReconcileJob(ctx, { date: '2026-11-20' });
    const rows = await ctx.database.db.selectFrom('reconciliation_results').select(['account', 'currency', 'status']).orderBy('account').execute();
    // Days later, eu-main's books never came (RECON_BOOKS_DEADLINE passed): one no_books, not a row per wallet.
    expect(rows).toEqual([
      { account: 'eu-main', currency: null, status: 'no_books' },
      { account: 'us-main', currency: null, status: 'no_snapshot' },
    ]);
  });

  it('reads the latest succeeded run of the date and measures movement from the previous date that has a snapshot', async () => {
    await snapshot('eu-main', '2026-11-17', { EUR: 100n, USD: 7n });
    // Nothing on the 18th; a failed run on the 19th is no snapshot.
    const failed = await insertRunningRun(ctx.database.db, { account: 'eu-main', environment: 'sandbox', trigger: 'schedule', businessDate: '2026-11-19', startedAt: new Date('2026-11-19T23:55:00Z'), timing: INTRADAY });
    await markRunFailed(ctx.database.db, failed, new Date('2026-11-19T23:56:00Z'), 'boom');
    await snapshot('eu-main', '2026-11-20', { EUR: 1n }, '2026-11-20T08:00:00Z');
    const latest = await snapshot('eu-main', '2026-11-20', { EUR: 250n }, '2026-11-20T23:55:00Z');
    await books('eu-main', '2026-11-20', { EUR: 250n, USD: 7n });

    const result = await runReconcileJob(ctx, { date: '2026-11-20', account: 'eu-main' });
    expect(result.results).toEqual([
      expect.objectContaining({ currency: 'EUR', status: 'matched', gatewayBalance: 250n, previousBalance: 100n, movement: 150n, runId: latest }),
      expect.objectContaining({ currency: 'USD', status: 'disappeared', gatewayBalance: null, previousBalance: 7n, expectedBalance: 7n }),
    ]);
    const noSnapshot = await runReconcileJob(ctx, { date: '2026-11-19', account: 'eu-main' });
    expect(noSnapshot.results).toEqual([expect.objectContaining({ currency: null, status: 'no_snapshot', runId: null })]);
  });

  it('reports an endpoint mismatch even when the books match, and applies per-currency tolerance', async () => {
    await snapshot('eu-main', '2026-11-20', { EUR: [100n, 99n], JPY: 10_100n, USD: 10_001n });
    await books('eu-main', '2026-11-20', { EUR: 100n, JPY: 10_000n, USD: 10_000n });
    const result = await runReconcileJob(ctx, { date: '2026-11-20', account: 'eu-main' });
    expect(statusByCurrency(result.results)).toEqual({ EUR: 'endpoint_mismatch', JPY: 'matched', USD: 'break' });
  });

  it('stores and compares amounts exactly across 2^53', async () => {
    const big = 2n ** 53n;
    await snapshot('eu-main', '2026-11-19', { EUR: big - 1n });
    await snapshot('eu-main', '2026-11-20', { EUR: big + 1n });
    await books('eu-main', '2026-11-20', { EUR: big });
    await runReconcileJob(ctx, { date: '2026-11-20', account: 'eu-main' });
    const row = await ctx.database.db.selectFrom('reconciliation_results').selectAll().where('account', '=', 'eu-main').executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'break', gateway_balance: '9007199254740993', expected_balance: '9007199254740992', difference: '1', previous_balance: '9007199254740991', movement: '2' });
  });

  it('lets reconciles of the same date run at once: each succeeds and the date keeps one result per key', async () => {
    await snapshot('eu-main', '2026-11-20', { EUR: 1n, USD: 2n, GBP: 3n });
    await snapshot('us-main', '2026-11-20', { USD: 4n });
    await books('eu-main', '2026-11-20', { EUR: 1n, USD: 2n, GBP: 3n });
    // Results already stored, so every run deletes rows another run is deleting too.
    await runReconcileJob(ctx, { date: '2026-11-20' });
    for (let round = 0; round < 5; round++) {
      const runs = await Promise.all([
        runReconcileJob(ctx, { date: '2026-11-20' }),
        runReconcileJob(ctx, { date: '2026-11-20', account: 'eu-main' }),
        runReconcileJob(ctx, { date: '2026-11-20' }),
        runReconcileJob(ctx, { date: '2026-11-20', account: 'us-main' }),
      ]);
      expect(runs.map((r) => r.results.length)).toEqual([4, 3, 4, 1]);
    }
    const rows = await ctx.database.db.selectFrom('reconciliation_results').select(['account', 'currency', 'status']).orderBy('account').orderBy('currency').execute();
    expect(rows).toEqual([
      { account: 'eu-main', currency: 'EUR', status: 'matched' },
      { account: 'eu-main', currency: 'GBP', status: 'matched' },
      { account: 'eu-main', currency: 'USD', status: 'matched' },
      { account: 'us-main', currency: null, status: 'no_books' },
    ]);
  });

  it('refuses an account that is not configured, listing the configured ones', async () => {
    await expect(runReconcileJob(ctx, { date: '2026-11-20', account: 'asia' })).rejects.toThrow(new UsageError('There is no account named "asia". Configured accounts: eu-main, us-main.'));
  });

  it('offers the nightly job a hook that reconciles what the accounts owe', async () => {
    await snapshot('eu-main', '2026-11-20', { EUR: 1n });
    await books('eu-main', '2026-11-20', { EUR: 1n });
    await reconcileAfterSnapshot(ctx, ['eu-main']);
    const rows = await ctx.database.db.selectFrom('reconciliation_results').select(['account', 'status']).execute();
    expect(rows).toEqual([{ account: 'eu-main', status: 'matched' }]);
  });

  it('compares a wallet captured in whole rupiah (scale 0) with books in ISO sen (scale 2) exactly, by scaling up', async () => {
    await snapshot('eu-main', '2026-11-19', { IDR: 150_000_000n });
    const runId = await insertRunningRun(ctx.database.db, { account: 'eu-main', environment: 'sandbox', trigger: 'manual', businessDate: '2026-11-20', startedAt: new Date('2026-11-20T23:55:00Z'), timing: INTRADAY });
    await insertSnapshotRows(ctx.database.db, runId, 'eu-main', new Date('2026-11-20T23:55:00Z'), [
      { currency: 'IDR', balance: 1_500_001n, singleBalance: 1_500_001n, scale: 0 },
      { currency: 'KWD', balance: 7n, singleBalance: 7n, scale: 0 },
    ]);
    await markRunSucceeded(ctx.database.db, runId, new Date('2026-11-20T23:55:00Z'), { walletsReported: 2, walletsFetched: 2, pagesFetched: 1, requests: 3 });
    // Books in ISO minor units: IDR 1,500,001.00 and KWD 7.001.
    await books('eu-main', '2026-11-20', { IDR: 150_000_100n, KWD: 7_001n });
    const result = await runReconcileJob(ctx, { date: '2026-11-20', account: 'eu-main' });
    expect(statusByCurrency(result.results)).toEqual({ IDR: 'matched', KWD: 'break' });
    const rows = await ctx.database.db.selectFrom('reconciliation_results').selectAll().where('business_date', '=', '2026-11-20').orderBy('currency').execute();
    expect(rows.map((r) => [r.currency, r.gateway_balance, r.expected_balance, r.difference, r.movement, r.scale])).toEqual([
      ['IDR', '150000100', '150000100', '0', '100', 2],
      ['KWD', '7000', '7001', '-1', null, 3],
    ]);
    // Each stored snapshot keeps the scale it was captured in; the views add exact major units.
    const daily = await ctx.database.db.selectFrom('daily_balances').select(['business_date', 'currency', 'balance', 'scale', 'balance_major']).where('account', '=', 'eu-main').orderBy('business_date').orderBy('currency').execute();
    expect(daily).toEqual([
      { business_date: '2026-11-19', currency: 'IDR', balance: '150000000', scale: 2, balance_major: '1500000.00' },
      { business_date: '2026-11-20', currency: 'IDR', balance: '1500001', scale: 0, balance_major: '1500001' },
      { business_date: '2026-11-20', currency: 'KWD', balance: '7', scale: 0, balance_major: '7' },
    ]);
    const history = await ctx.database.db.selectFrom('balance_history').select(['currency', 'movement', 'movement_major']).where('business_date', '=', '2026-11-20').where('currency', '=', 'IDR').execute();
    // The movement in the day's scale (whole rupiah, so the previous day's sen become decimals), and in major units.
    expect(history).toEqual([{ currency: 'IDR', movement: '1.00', movement_major: '1.00' }]);
  });

  it('matches within RECON_TOLERANCE_BPS of the balance, rounded down, when that is larger than the absolute tolerance', async () => {
    const relative = createTestContext(t, { RECON_ACCOUNTS_FILE: accountsFile, RECON_TOLERANCE: '0.01', RECON_TOLERANCE_BPS: '10' });
    // 10 bps of EUR 1,000.00 is EUR 1.00: a difference of 1.00 matches, 1.01 does not; USD 0.01 on USD 5.00 matches by the absolute tolerance.
    await snapshot('eu-main', '2026-11-20', { EUR: 100_100n, GBP: 100_101n, USD: 501n });
    await books('eu-main', '2026-11-20', { EUR: 100_000n, GBP: 100_000n, USD: 500n });
    const result = await runReconcileJob(relative, { date: '2026-11-20', account: 'eu-main' });
    expect(statusByCurrency(result.results)).toEqual({ EUR: 'matched', GBP: 'break', USD: 'matched' });
  });

  describe('SQL views for accounting queries', () => {
    it('reconciliation_breaks holds exactly the results that did not match', async () => {
      await snapshot('eu-main', '2026-11-20', { EUR: 1n, USD: 2n });
      await books('eu-main', '2026-11-20', { EUR: 1n, USD: 3n });
      await runReconcileJob(ctx, { date: '2026-11-20' });
      const breaks = await ctx.database.db.selectFrom('reconciliation_breaks').select(['account', 'currency', 'status', 'difference']).orderBy('account').execute();
      expect(breaks).toEqual([
        { account: 'eu-main', currency: 'USD', status: 'break', difference: '-1' },
        { account: 'us-main', currency: null, status: 'no_snapshot', difference: null },
      ]);
    });

    it('every accounting view gives its amounts in major units too (<column>_major), exact beyond 2^53 and per currency scale', async () => {
      await snapshot('us-main', '2026-11-20', { EUR: 2n ** 53n + 1n, JPY: 1_500n, KWD: 7_000n });
      await books('us-main', '2026-11-20', { EUR: 100n, JPY: 1_300n, KWD: 7_001n });
      await runReconcileJob(ctx, { date: '2026-11-20', account: 'us-main' });
      const breaks = await ctx.database.db
        .selectFrom('reconciliation_breaks')
        .where('account', '=', 'us-main')
        .select(['currency', 'difference', 'scale', 'gateway_balance_major', 'single_balance_major', 'expected_balance_major', 'difference_major', 'movement_major'])
        .orderBy('currency')
        .execute();
      expect(breaks).toEqual([
        { currency: 'EUR', difference: '9007199254740893', scale: 2, gateway_balance_major: '90071992547409.93', single_balance_major: '90071992547409.93', expected_balance_major: '1.00', difference_major: '90071992547408.93', movement_major: null },
        { currency: 'JPY', difference: '200', scale: 0, gateway_balance_major: '1500', single_balance_major: '1500', expected_balance_major: '1300', difference_major: '200', movement_major: null },
        { currency: 'KWD', difference: '-1', scale: 3, gateway_balance_major: '7.000', single_balance_major: '7.000', expected_balance_major: '7.001', difference_major: '-0.001', movement_major: null },
      ]);
      // A case's latest difference in major units, at the scale of its latest result.
      const cases = await ctx.database.db.selectFrom('open_cases').select(['currency', 'latest_difference', 'scale', 'latest_difference_major']).where('account', '=', 'us-main').where('kind', '=', 'break').where('currency', 'in', ['EUR', 'JPY', 'KWD']).orderBy('currency').execute();
      expect(cases).toEqual([
        { currency: 'EUR', latest_difference: '9007199254740893', scale: 2, latest_difference_major: '90071992547408.93' },
        { currency: 'JPY', latest_difference: '200', scale: 0, latest_difference_major: '200' },
        { currency: 'KWD', latest_difference: '-1', scale: 3, latest_difference_major: '-0.001' },
      ]);
      const daily = await ctx.database.db.selectFrom('daily_balances').select(['currency', 'balance_major', 'single_balance_major']).where('account', '=', 'us-main').orderBy('currency').execute();
      expect(daily).toEqual([
        { currency: 'EUR', balance_major: '90071992547409.93', single_balance_major: '90071992547409.93' },
        { currency: 'JPY', balance_major: '1500', single_balance_major: '1500' },
        { currency: 'KWD', balance_major: '7.000', single_balance_major: '7.000' },
      ]);
    });

    it('balance_history measures movement from the account\'s previous snapshot day, a currency absent that day having none', async () => {
      const big = 2n ** 53n;
      await snapshot('eu-main', '2026-11-17', { EUR: big, USD: 5n });
      // A failed run is no snapshot: the 18th is not a previous day.
      const failed = await insertRunningRun(ctx.database.db, { account: 'eu-main', environment: 'sandbox', trigger: 'schedule', businessDate: '2026-11-18', startedAt: new Date('2026-11-18T23:55:00Z'), timing: INTRADAY });
      await markRunFailed(ctx.database.db, failed, new Date('2026-11-18T23:56:00Z'), 'boom');
      // Two runs on the 19th: the latest is the day's truth, and it has no USD wallet.
      await snapshot('eu-main', '2026-11-19', { EUR: 1n, USD: 99n }, '2026-11-19T08:00:00Z');
      await snapshot('eu-main', '2026-11-19', { EUR: big + 3n });
      await snapshot('eu-main', '2026-11-20', { EUR: 10n, USD: 6n });
      // Another account's days never enter eu-main's chain.
      await snapshot('us-main', '2026-11-18', { USD: 1n });
      await books('eu-main', '2026-11-20', { EUR: 10n, USD: 6n });
      const rows = await ctx.database.db
        .selectFrom('balance_history')
        .select(['business_date', 'currency', 'balance', 'previous_balance', 'previous_business_date', 'movement'])
        .where('account', '=', 'eu-main')
        .orderBy('currency')
        .orderBy('business_date')
        .execute();
      expect(rows).toEqual([
        { business_date: '2026-11-17', currency: 'EUR', balance: '9007199254740992', previous_balance: null, previous_business_date: null, movement: null },
        { business_date: '2026-11-19', currency: 'EUR', balance: '9007199254740995', previous_balance: '9007199254740992', previous_business_date: '2026-11-17', movement: '3' },
        { business_date: '2026-11-20', currency: 'EUR', balance: '10', previous_balance: '9007199254740995', previous_business_date: '2026-11-19', movement: '-9007199254740985' },
        { business_date: '2026-11-17', currency: 'USD', balance: '5', previous_balance: null, previous_business_date: null, movement: null },
        // USD was absent on the 19th, the previous snapshot day: no previous balance, no movement.
        { business_date: '2026-11-20', currency: 'USD', balance: '6', previous_balance: null, previous_business_date: '2026-11-19', movement: null },
      ]);
      // The same movement reconciliation stores for the day.
      const reconciled = await runReconcileJob(ctx, { date: '2026-11-20', account: 'eu-main' });
      expect(reconciled.results.map((r) => [r.currency, r.previousBalance, r.movement])).toEqual([
        ['EUR', big + 3n, 10n - (big + 3n)],
        ['USD', null, null],
      ]);
    });
  });
});
