import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { applyCaseAction } from '../../src/cases/case-actions.js';
import { FixedClock } from '../../src/clock.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { replaceExpectedBalanceDays } from '../../src/db/expected-balance.repository.js';
import { findCase, listCases, listEvents } from '../../src/db/reconciliation-case.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { createTestContext, writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// An acceptance covers only the difference it accepted, on whichever date another one shows up.
const ACCOUNTS = ['earlier', 'same'];

let t: TestDatabase;
let ctx: AppContext;
const clock = new FixedClock('2026-11-27T12:00:00Z');

beforeAll(async () => {
  t = await createTestDatabase();
  const accountsFile = writeAccountsFile(ACCOUNTS.map((name) => ({ name, apiKeyEnv: 'K', apiSecretEnv: 'S' })));
  ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: accountsFile, RECON_TOLERANCE: '0.01' }, { clock });
});
afterAll(async () => {
  await t?.drop();
});

async function day(account: string, businessDate: string, gateway: bigint, booksBalance: bigint): Promise<void> {
  const db = ctx.database.db;
  const at = new Date(`${businessDate}T23:55:00Z`);
  const runId = await insertRunningRun(db, { account, environment: 'sandbox', trigger: 'manual', businessDate, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
  await insertSnapshotRows(db, runId, account, at, [{ currency: 'EUR', balance: gateway, singleBalance: gateway }]);
  await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 1 });
  await setBooks(account, businessDate, booksBalance);
}
async function setBooks(account: string, businessDate: string, balance: bigint): Promise<void> {
  await replaceExpectedBalanceDays(ctx.database.db, [{ account, businessDate, currency: 'EUR', balance }], 'books.csv', new Date());
}

describe(`an acceptance covers only its own difference on ${backend}`, () => {
  it('a new EUR 1.00 break on the day before an accepted EUR 0.12 is a break and reopens the case', async () => {
    await day('earlier', '2026-11-24', 10_000n, 10_000n);
    await day('earlier', '2026-11-25', 10_012n, 10_000n);
    await runReconcileJob(ctx, { account: 'earlier', date: '2026-11-24' });
    expect((await runReconcileJob(ctx, { account: 'earlier', date: '2026-11-25' })).exitCode).toBe(3);
    const [c] = await listCases(ctx.database.db, { account: 'earlier' });
    await applyCaseAction(ctx, { actor: 'anna', caseId: c!.id, action: 'accept', note: 'bank fee' });

    // The books of the 24th are imported again and now differ by EUR 1.00.
    await setBooks('earlier', '2026-11-24', 9_900n);
    const rerun = await runReconcileJob(ctx, { account: 'earlier', date: '2026-11-24' });
    expect(rerun.exitCode).toBe(3);
    expect(rerun.accepted).toBe(0);
    expect(rerun.results.map((r) => [r.status, r.difference, r.case?.state])).toEqual([['break', 100n, 'open']]);
    expect(await findCase(ctx.database.db, c!.id)).toMatchObject({ state: 'open', acceptedDifference: null, acceptedUntil: null, lastSeenOn: '2026-11-25', latestDifference: 12n });
    const events = await listEvents(ctx.database.db, c!.id);
    const lapsed = events.find((e) => e.action === 'lapsed');
    expect(lapsed?.note).toBe('The acceptance lapsed on 2026-11-24: the difference moved from EUR 0.12 to EUR 1.00, beyond the tolerance of EUR 0.01. The case is open again.');
    expect(events.find((e) => e.action === 'seen')?.note).toContain("An earlier date than the case's latest (2026-11-25): it is outside the accepted difference, so the acceptance lapses.");
    // The 25th, reconciled again, is no longer accepted either.
    expect((await runReconcileJob(ctx, { account: 'earlier', date: '2026-11-25' })).exitCode).toBe(3);
  });

  it('an earlier date with the accepted difference (within the tolerance) stays accepted', async () => {
    await day('same', '2026-11-24', 10_000n, 10_000n);
    await day('same', '2026-11-25', 10_012n, 10_000n);
    await runReconcileJob(ctx, { account: 'same', date: '2026-11-24' });
    await runReconcileJob(ctx, { account: 'same', date: '2026-11-25' });
    const [c] = await listCases(ctx.database.db, { account: 'same' });
    await applyCaseAction(ctx, { actor: 'anna', caseId: c!.id, action: 'accept', note: 'bank fee' });
    await setBooks('same', '2026-11-24', 9_989n);
    const rerun = await runReconcileJob(ctx, { account: 'same', date: '2026-11-24' });
    expect(rerun.exitCode).toBe(0);
    expect(rerun.results.map((r) => [r.status, r.difference, r.case?.state])).toEqual([['break', 11n, 'accepted']]);
    expect(await findCase(ctx.database.db, c!.id)).toMatchObject({ state: 'accepted', acceptedDifference: 12n, lastSeenOn: '2026-11-25' });
  });
});
