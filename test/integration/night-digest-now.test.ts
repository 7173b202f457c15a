import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunFailed, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { buildNightDigest } from '../../src/notifications/night-digest.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: the digest of a good night shows this night's errors only; issue 44: drift from the cut-off the run was captured against.
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

const counts = { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 1 };

describe(`the night digest (${backend})`, () => {
  it('leaves out an unrelated failed manual run and computes drift from the cut-off the run was captured against', async () => {
    const db = t.handle.db;
    const date = '2026-11-24';
    const oldCutoff = new Date('2026-11-24T23:00:00Z');
    // A manual intraday run failed in the afternoon: not the night's.
    const manual = await insertRunningRun(db, { account: 'good', environment: 'sandbox', trigger: 'manual', businessDate: date, startedAt: new Date('2026-11-24T14:00:00Z'), timing: { cutoffAt: oldCutoff, driftSeconds: -32400, endOfDay: false } });
    await markRunFailed(db, manual, new Date('2026-11-24T14:00:05Z'), 'the gateway refused the API key/secret (manual test with a wrong key)');
    // The night's scheduled attempt: reads finished 9 min 38 s before the cut-off of the time (23:00).
    const readsAt = new Date(oldCutoff.getTime() - 578_000);
    const timing = { businessDate: date, cutoffAt: oldCutoff, driftSeconds: -578, endOfDay: true };
    const run = await insertRunningRun(db, { account: 'good', environment: 'sandbox', trigger: 'schedule', businessDate: date, startedAt: new Date(readsAt.getTime() - 5_000), timing });
    await insertSnapshotRows(db, run, 'good', readsAt, [{ currency: 'EUR', balance: 1n, singleBalance: 1n }]);
    await markRunSucceeded(db, run, readsAt, counts, { timing, readsFinishedAt: readsAt });

    // RECON_CUTOFF has since moved to 23:30: the run is still read against the cut-off it was captured against.
    const cutoffAt = new Date('2026-11-24T23:30:00Z');
    const digest = await buildNightDigest(db, { businessDate: date, slot: cutoffAt, cutoffAt, accounts: [{ account: 'good', status: 'captured' }] });
    expect(digest.accounts).toEqual([expect.objectContaining({ account: 'good', status: 'captured', runId: run, lastError: null, cutoffDriftSeconds: -578 })]);
  });

  it("keeps the error of the night's own failed attempt that was retried", async () => {
    const db = t.handle.db;
    const date = '2026-11-25';
    const cutoffAt = new Date('2026-11-25T23:00:00Z');
    const timing = { businessDate: date, cutoffAt, driftSeconds: -600, endOfDay: true };
    const failed = await insertRunningRun(db, { account: 'retried', environment: 'sandbox', trigger: 'schedule', businessDate: date, startedAt: new Date('2026-11-25T22:45:00Z'), timing });
    await markRunFailed(db, failed, new Date('2026-11-25T22:45:30Z'), 'GET /v1/data/wallets answered 503 on every one of 4 attempts');
    const readsAt = new Date('2026-11-25T22:50:00Z');
    const run = await insertRunningRun(db, { account: 'retried', environment: 'sandbox', trigger: 'schedule', businessDate: date, startedAt: readsAt, timing });
    await insertSnapshotRows(db, run, 'retried', readsAt, [{ currency: 'EUR', balance: 1n, singleBalance: 1n }]);
    await markRunSucceeded(db, run, readsAt, counts, { timing, readsFinishedAt: readsAt });
    const digest = await buildNightDigest(db, { businessDate: date, slot: cutoffAt, cutoffAt, accounts: [{ account: 'retried', status: 'captured' }] });
    expect(digest.accounts[0]).toMatchObject({ attempts: 2, lastError: 'GET /v1/data/wallets answered 503 on every one of 4 attempts', cutoffDriftSeconds: -600 });
  });

  it('tells of a bank account whose statement is awaited, and counts its breaks with the night', async () => {
    const db = t.handle.db;
    const date = '2026-11-26';
    const cutoffAt = new Date('2026-11-26T23:00:00Z');
    const computedAt = new Date('2026-11-26T23:05:00Z');
    await db.insertInto('reconciliation_results').values([
      { account: 'eu-bank', business_date: date, currency: 'EUR', status: 'awaiting_statement', computed_at: computedAt, source: 'bank', expected_balance: '1000', scale: 2 },
      { account: 'us-bank', business_date: date, currency: 'USD', status: 'break', computed_at: computedAt, source: 'bank', gateway_balance: '1100', expected_balance: '1000', difference: '100', scale: 2 },
    ]).execute();
    const digest = await buildNightDigest(db, { businessDate: date, slot: cutoffAt, cutoffAt, accounts: [], bankAccounts: ['eu-bank', 'us-bank'] });
    expect(digest.pending).toEqual([{ account: 'eu-bank', state: 'awaiting_statement', message: `bank statement for ${date} not imported yet` }]);
    expect(digest.reconciliation.break).toBe(1);
    expect(digest.topDiscrepancies).toEqual([expect.objectContaining({ account: 'us-bank', status: 'break', differenceFormatted: 'USD 1.00' })]);
  });
});
