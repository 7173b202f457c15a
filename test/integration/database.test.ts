import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

describe(`database layer (${backend})`, () => {
  it('round-trips amounts beyond 2^53 exactly, positive and negative', async () => {
    const { db } = t.handle;
    const run = await db
      .insertInto('snapshot_runs')
      .values({ account: 'acme', environment: 'sandbox', trigger: 'manual', business_date: '2026-11-20', status: 'running' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const amounts = ['9007199254740993', '-123456789012345678', '99999999999999999999999999999999999999'];
    await db
      .insertInto('balance_snapshots')
      .values(amounts.map((balance, i) => ({ run_id: run.id, account: 'acme', currency: ['USD', 'EUR', 'GBP'][i]!, balance, single_balance: balance, captured_at: new Date() })))
      .execute();
    const rows = await db.selectFrom('balance_snapshots').select(['currency', 'balance', 'single_balance']).where('run_id', '=', run.id).orderBy('currency').execute();
    expect(rows.map((r) => [r.currency, r.balance, r.single_balance])).toEqual([
      ['EUR', '-123456789012345678', '-123456789012345678'],
      ['GBP', '99999999999999999999999999999999999999', '99999999999999999999999999999999999999'],
      ['USD', '9007199254740993', '9007199254740993'],
    ]);
    expect(BigInt(rows[2]!.balance) + 1n).toBe(9007199254740994n);
  });

  it('reads business dates as plain YYYY-MM-DD strings', async () => {
    const row = await t.handle.db.selectFrom('snapshot_runs').select('business_date').executeTakeFirstOrThrow();
    expect(row.business_date).toBe('2026-11-20');
  });

  it('enforces the run status and currency constraints', async () => {
    const { db } = t.handle;
    await expect(
      db.insertInto('snapshot_runs').values({ account: 'a', environment: 'sandbox', trigger: 'manual', business_date: '2026-11-20', status: 'done' as never }).execute(),
    ).rejects.toThrow(/check constraint/);
    const run = await db.selectFrom('snapshot_runs').select('id').executeTakeFirstOrThrow();
    await expect(
      db.insertInto('balance_snapshots').values({ run_id: run.id, account: 'a', currency: 'usd', balance: '1', single_balance: null, captured_at: new Date() }).execute(),
    ).rejects.toThrow(/check constraint/);
  });

  it('shows only the latest succeeded run per account and date in daily_balances', async () => {
    const { db } = t.handle;
    const insertRun = async (status: 'succeeded' | 'failed', startedAt: string, balance: string) => {
      const run = await db
        .insertInto('snapshot_runs')
        .values({
          account: 'view-test', environment: 'sandbox', trigger: 'manual', business_date: '2026-11-19', status,
          started_at: new Date(startedAt), finished_at: new Date(startedAt), error: status === 'failed' ? 'boom' : null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db.insertInto('balance_snapshots').values({ run_id: run.id, account: 'view-test', currency: 'EUR', balance, single_balance: null, captured_at: new Date(startedAt) }).execute();
      return run.id;
    };
    await insertRun('succeeded', '2026-11-19T10:00:00Z', '100');
    const latest = await insertRun('succeeded', '2026-11-19T20:00:00Z', '200');
    await insertRun('failed', '2026-11-19T22:00:00Z', '300');
    const rows = await db.selectFrom('daily_balances').selectAll().where('account', '=', 'view-test').execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ business_date: '2026-11-19', currency: 'EUR', balance: '200', run_id: latest });
  });

  it('migrates idempotently', async () => {
    const again = await migrateToLatest(t.handle.db);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toBeGreaterThan(0);
  });

  it('refuses a database that holds a migration this version does not know', async () => {
    const { db } = t.handle;
    await sql`insert into kysely_migration (name, timestamp) values ('2999-01-01T0000_from-the-future', now())`.execute(db);
    await expect(migrateToLatest(db)).rejects.toThrow(/does not know \(2999-01-01T0000_from-the-future\)/);
    await sql`delete from kysely_migration where name = '2999-01-01T0000_from-the-future'`.execute(db);
  });
});
