import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { signoffStateOf } from '../../src/signoff/signoff-service.js';
import { verifySeals } from '../../src/signoff/verify-seals.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A database signed before sign-off steps existed (issue 39): migrating writes the steps of its
// sign-offs, in the order they were taken, so it verifies, shows the same states and keeps its
// approved date locked.
const STEPS = '2026-12-02T2101_signoff-steps';
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase({ migrate: false });
  const db = t.handle.db;
  const earlier = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name !== STEPS));
  const { error } = await new Migrator({ db, provider: { getMigrations: () => Promise.resolve(earlier) } }).migrateToLatest();
  if (error) throw error;
  const insert = (date: string, minute: number) =>
    sql`insert into signoffs (account_set, business_date, prepared_by, prepared_at, report_sha256, report_html, inputs)
      values ('{default}', ${date}, 'anna', ${`2026-11-0${minute}T08:00:00.123456Z`}::timestamptz, encode(sha256('<html></html>'), 'hex'), '<html></html>', '{"accounts": []}')`.execute(db);
  // #1 approved and reopened, #2 prepared then changed (invalidated), #3 approved and standing.
  await insert('2026-11-02', 1);
  await sql`update signoffs set approved_by = 'ben', approved_at = '2026-11-01T09:00:00.5Z' where id = 1`.execute(db);
  await sql`update signoffs set reopened_by = 'ben', reopened_at = '2026-11-01T10:00:00Z', reopen_note = 'fee booked on the wrong day' where id = 1`.execute(db);
  await insert('2026-11-02', 2);
  await sql`update signoffs set invalidated_at = '2026-11-02T09:00:00Z', invalidation = '["the books changed"]' where id = 2`.execute(db);
  await insert('2026-11-03', 3);
  await sql`update signoffs set approved_by = 'ben', approved_at = '2026-11-03T09:00:00Z' where id = 3`.execute(db);
  await migrateToLatest(db);
}, 120_000);

afterAll(async () => {
  await t?.drop();
});

describe(`sign-offs from before the step log, migrated (${backend})`, () => {
  it('gets one chained step per transition, in the order taken; verify holds; states and locks are as before', async () => {
    const db = t.handle.db;
    const steps = await db.selectFrom('signoff_steps').select(['signoff_id', 'kind', 'actor', 'prev_hash', 'hash']).orderBy('chain_seq').execute();
    expect(steps.map((s) => `${s.signoff_id}:${s.kind}:${s.actor}`)).toEqual([
      '1:prepared:anna',
      '1:approved:ben',
      '1:reopened:ben',
      '2:prepared:anna',
      '2:invalidated:wallet-recon',
      '3:prepared:anna',
      '3:approved:ben',
    ]);
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.prev_hash).toBe(steps[i - 1]!.hash);
    const ctx = createTestContext(t, {});
    const verified = await verifySeals(ctx);
    expect(verified.problem).toBeUndefined();
    expect(verified.checked.steps).toBe(7);
    expect((await signoffStateOf(ctx, '2026-11-02')).state).toBe('changed after sign-off');
    expect((await signoffStateOf(ctx, '2026-11-03')).state).toBe('approved');
    const locks = await db.selectFrom('locked_dates').select(['signoff_id', 'account', 'approved_by']).execute();
    expect(locks).toEqual([{ signoff_id: 3, account: 'default', approved_by: 'ben' }]);
    // The next transition links to the last migrated step.
    await sql`update signoffs set reopened_by = 'ben', reopened_at = now(), reopen_note = 'a late statement' where id = 3`.execute(db);
    const last = await db.selectFrom('signoff_steps').select(['kind', 'prev_hash']).orderBy('chain_seq', 'desc').executeTakeFirstOrThrow();
    expect(last).toEqual({ kind: 'reopened', prev_hash: steps.at(-1)!.hash });
    expect((await verifySeals(ctx)).problem).toBeUndefined();
    expect(await db.selectFrom('locked_dates').select('signoff_id').execute()).toEqual([]);
  });
});
