import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import { FixedClock } from '../../src/clock.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { createTestContext, writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: once the books deadline passed, reconciliation_status says no_books, before any command runs.
let t: TestDatabase;
let accountsFile: string;

beforeAll(async () => {
  t = await createTestDatabase();
  accountsFile = writeAccountsFile([{ name: 'late', apiKeyEnv: 'K', apiSecretEnv: 'S' }, { name: 'early', apiKeyEnv: 'K', apiSecretEnv: 'S' }]);
});
afterAll(async () => {
  await t?.drop();
});

async function capture(account: string, businessDate: string): Promise<void> {
  const db = t.handle.db;
  const at = new Date(`${businessDate}T23:55:00Z`);
  const runId = await insertRunningRun(db, { account, environment: 'sandbox', trigger: 'manual', businessDate, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
  await insertSnapshotRows(db, runId, account, at, [{ currency: 'EUR', balance: 100n, singleBalance: 100n }]);
  await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 1 });
}
const stateOf = async (account: string, date: string) =>
  (await t.handle.db.selectFrom('reconciliation_status').select('state').where('account', '=', account).where('business_date', '=', date).executeTakeFirstOrThrow()).state;

describe(`the books deadline in reconciliation_status (${backend})`, () => {
  it('a date reconciled while its books were awaited reads no_books once the deadline passed, with nothing run since', async () => {
    // Reconciled two hours after the cut-off, books due 12 hours after it (2026-11-20 12:00 UTC): long past now.
    const ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: accountsFile, RECON_BOOKS_DEADLINE: '12h' }, { clock: new FixedClock('2026-11-20T02:00:00Z') });
    await capture('late', '2026-11-19');
    const run = await runReconcileJob(ctx, { account: 'late', date: '2026-11-19' });
    expect(run.results.map((r) => r.status)).toEqual(['awaiting_books']);
    const stored = await t.handle.db.selectFrom('reconciliation_results').select('books_deadline_at').where('account', '=', 'late').executeTakeFirstOrThrow();
    expect(stored.books_deadline_at?.toISOString()).toBe('2026-11-20T12:00:00.000Z');
    expect(await stateOf('late', '2026-11-19')).toBe('no_books');
  });

  it('a date whose books deadline is still ahead stays awaiting_books', async () => {
    const now = new Date();
    const yesterday = new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
    const ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: accountsFile, RECON_BOOKS_DEADLINE: '7d' });
    await capture('early', yesterday);
    await runReconcileJob(ctx, { account: 'early', date: yesterday });
    expect(await stateOf('early', yesterday)).toBe('awaiting_books');
  });
});
