import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob, settleOwedReconciliations } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { replaceExpectedBalanceDays } from '../../src/db/expected-balance.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { createTestContext, writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: one bad account-date, or a lowered decimals setting, never stops the others.
const ACCOUNTS = ['broken', 'steady', 'qqq'];
const CHANNELS = { RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hooks/recon', RECON_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };

let t: TestDatabase;
let accountsFile: string;
const clock = new FixedClock('2026-11-27T12:00:00Z');

beforeAll(async () => {
  t = await createTestDatabase();
  accountsFile = writeAccountsFile(ACCOUNTS.map((name) => ({ name, apiKeyEnv: 'K', apiSecretEnv: 'S' })));
});
afterAll(async () => {
  await t?.drop();
});

const context = (env: Record<string, string> = {}): AppContext => createTestContext(t, { RECON_ACCOUNTS_FILE: accountsFile, ...CHANNELS, ...env }, { clock });

async function day(account: string, businessDate: string, currency: string, gateway: bigint, books: bigint, scale: number): Promise<void> {
  const db = t.handle.db;
  const at = new Date(`${businessDate}T23:55:00Z`);
  const runId = await insertRunningRun(db, { account, environment: 'sandbox', trigger: 'manual', businessDate, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
  await insertSnapshotRows(db, runId, account, at, [{ currency, balance: gateway, singleBalance: gateway, scale }]);
  await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 1 });
  // Books of a code without ISO decimals are kept in the minor units configured when they were imported.
  await replaceExpectedBalanceDays(db, [{ account, businessDate, currency, balance: books }], 'books.csv', at);
}

describe(`a failure is scoped to its account and date (${backend})`, () => {
  it('an account-date that cannot be written stays owed with its reason and a notification; the other accounts and dates are reconciled', async () => {
    const ctx = context();
    // A database that refuses one account's results: the failure of one account-date, whatever causes it.
    await sql
      .raw(
        `create function refuse_broken() returns trigger language plpgsql as $$ begin if new.account = 'broken' then raise exception 'results of broken are refused'; end if; return new; end $$;
         create trigger refuse_broken before insert on reconciliation_results for each row execute function refuse_broken();`,
      )
      .execute(t.handle.db);
    await day('broken', '2026-11-24', 'EUR', 100n, 100n, 2);
    await day('broken', '2026-11-25', 'EUR', 100n, 100n, 2);
    await day('steady', '2026-11-24', 'EUR', 500n, 500n, 2);
    await day('steady', '2026-11-25', 'EUR', 500n, 400n, 2);

    const settled = await settleOwedReconciliations(ctx, { accounts: ['broken', 'steady'] });
    expect(settled.reconciled).toEqual([
      { account: 'steady', businessDate: '2026-11-24' },
      { account: 'steady', businessDate: '2026-11-25' },
    ]);
    expect(settled.failed.map((f) => [f.account, f.businessDate])).toEqual([
      ['broken', '2026-11-24'],
      ['broken', '2026-11-25'],
    ]);
    const steady = await t.handle.db.selectFrom('reconciliation_results').select(['business_date', 'status']).where('account', '=', 'steady').orderBy('business_date').execute();
    expect(steady.map((r) => [r.business_date, r.status])).toEqual([
      ['2026-11-24', 'matched'],
      ['2026-11-25', 'break'],
    ]);
    const owed = await t.handle.db.selectFrom('reconciliation_owed').select(['account', 'business_date', 'reason']).where('account', 'in', ['broken', 'steady']).orderBy('business_date').execute();
    expect(owed.map((o) => [o.account, o.business_date])).toEqual([
      ['broken', '2026-11-24'],
      ['broken', '2026-11-25'],
    ]);
    expect(owed[0]!.reason).toMatch(/^reconciliation failed: .*results of broken are refused/);
    const status = await t.handle.db.selectFrom('reconciliation_status').select(['state', 'owed_reason']).where('account', '=', 'broken').where('business_date', '=', '2026-11-24').executeTakeFirstOrThrow();
    expect(status).toMatchObject({ state: 'owed', owed_reason: expect.stringContaining('reconciliation failed') });

    const notified = async () => (await t.handle.db.selectFrom('notifications').select(['event_type', 'payload']).where('event_type', '=', 'reconciliation.failed').orderBy('id').execute()).map((n) => n.payload as { data: { account: string; businessDate: string; reason: string } });
    expect((await notified()).map((p) => [p.data.account, p.data.businessDate])).toEqual([
      ['broken', '2026-11-24'],
      ['broken', '2026-11-25'],
    ]);
    // The next round fails the same way: still owed, not notified twice for the same reason.
    expect((await settleOwedReconciliations(ctx, { accounts: ['broken', 'steady'] })).failed).toHaveLength(2);
    expect(await notified()).toHaveLength(2);

    await sql.raw('drop trigger refuse_broken on reconciliation_results; drop function refuse_broken();').execute(t.handle.db);
    expect((await settleOwedReconciliations(ctx, { accounts: ['broken', 'steady'] })).reconciled).toEqual([
      { account: 'broken', businessDate: '2026-11-24' },
      { account: 'broken', businessDate: '2026-11-25' },
    ]);
  });

  it('a currency stored with more decimals than its setting now gives is compared and shown at the finer scale, never a RangeError', async () => {
    // Captured with GATEWAY_AMOUNT_DECIMALS_QQQ=3: 1.234 on the 24th.
    await day('qqq', '2026-11-24', 'QQQ', 1234n, 1234n, 3);
    const before = await runReconcileJob(context({ GATEWAY_AMOUNT_DECIMALS_QQQ: '3' }), { account: 'qqq', date: '2026-11-24' });
    expect(before.results.map((r) => [r.status, r.scale])).toEqual([['matched', 3]]);
    // The setting goes to 2; the 25th is captured and booked with 2 decimals: 1.24.
    const ctx = context({ GATEWAY_AMOUNT_DECIMALS_QQQ: '2' });
    await day('qqq', '2026-11-25', 'QQQ', 124n, 124n, 2);
    const after = await runReconcileJob(ctx, { account: 'qqq', date: '2026-11-25' });
    expect(after.exitCode).toBe(0);
    // At the finer scale of the stored history: 1.240, a movement of 0.006 since 1.234.
    expect(after.results.map((r) => [r.status, r.gatewayBalance, r.expectedBalance, r.movement, r.scale])).toEqual([['matched', 1240n, 1240n, 6n, 3]]);
    // Settled again by the worker under the new setting: the same, no failure.
    await sql`select owe_reconciliation('qqq', '2026-11-25'::date, 'test')`.execute(t.handle.db);
    expect(await settleOwedReconciliations(ctx, { accounts: ['qqq'] })).toMatchObject({ reconciled: [{ account: 'qqq', businessDate: '2026-11-25' }], failed: [] });
    const stored = await t.handle.db.selectFrom('reconciliation_results').select(['status', 'gateway_balance', 'scale']).where('account', '=', 'qqq').where('business_date', '=', '2026-11-25').execute();
    expect(stored.map((r) => [r.status, String(r.gateway_balance), r.scale])).toEqual([['matched', '1240', 3]]);
  });
});
