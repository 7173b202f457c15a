import { sql } from 'kysely';
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

/**
 * Given a reconciliation that tracks a case and a person who accepts the same case at the same
 * moment, whichever commits first, the case's state, its acceptance and the last line of its
 * audit trail agree: no decision is written over by a reconciliation that read the case before it.
 */

const ACCOUNT = 'race';
const ROUNDS = 30;

let t: TestDatabase;
let ctx: AppContext;

beforeAll(async () => {
  t = await createTestDatabase();
  const accountsFile = writeAccountsFile([{ name: ACCOUNT, apiKeyEnv: 'K', apiSecretEnv: 'S' }]);
  ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: accountsFile }, { clock: new FixedClock('2026-11-30T12:00:00Z') });
});
afterAll(async () => {
  await t?.drop();
});

/** A succeeded end-of-day snapshot and books for the date: EUR 100 over the books. */
async function breakOn(businessDate: string): Promise<void> {
  const db = ctx.database.db;
  const at = new Date(`${businessDate}T23:55:00Z`);
  const runId = await insertRunningRun(db, { account: ACCOUNT, environment: 'sandbox', trigger: 'manual', businessDate, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
  await insertSnapshotRows(db, runId, ACCOUNT, at, [{ currency: 'EUR', balance: 1100n, singleBalance: 1100n }]);
  await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 1 });
  await replaceExpectedBalanceDays(db, [{ account: ACCOUNT, businessDate, currency: 'EUR', balance: 1000n }], 'books.csv', new Date());
}

const dateOf = (round: number): string => new Date(Date.UTC(2026, 9, 1 + round)).toISOString().slice(0, 10);

/**
 * On the server, holds the case's occurrence of `businessDate` in an uncommitted transaction of
 * its own connection: a reconciliation that has read the case then waits while writing that
 * occurrence, before it writes the case back. This widens the window an `accept` has to land in
 * to the whole of `hold`, so the race the test is about happens every time instead of sometimes.
 */
async function holdingOccurrence(caseId: number, businessDate: string, hold: () => Promise<void>): Promise<void> {
  const rollback = new Error('rolled back on purpose');
  const released = ctx.database.db
    .transaction()
    .execute(async (trx) => {
      await trx
        .insertInto('case_occurrences')
        .values({ case_id: caseId, business_date: businessDate, status: 'break', difference: '100', gateway_balance: '1100', single_balance: '1100', expected_balance: '1000', run_id: null, seen_at: new Date() })
        .execute();
      await hold();
      throw rollback;
    })
    .catch((error: unknown) => {
      if (error !== rollback) throw error;
    });
  await released;
}

/** Until a session of this test's database waits on a lock (the reconciliation, held), for at most 10 s. */
async function untilASessionWaitsOnALock(): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(ctx.database.db);
    if (waiting.rows[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe(`a case decision made while a reconciliation runs, on ${backend}`, () => {
  it(`is never written over: ${ROUNDS} rounds of reconcile and accept of the same case at once leave state, acceptance and trail agreeing`, async () => {
    await breakOn(dateOf(0));
    await runReconcileJob(ctx, { account: ACCOUNT, date: dateOf(0) });
    const [c] = await listCases(ctx.database.db, { account: ACCOUNT });
    expect(c).toMatchObject({ state: 'open', kind: 'break', currency: 'EUR' });
    const caseId = c!.id;

    for (let round = 1; round <= ROUNDS; round++) {
      const date = dateOf(round);
      await breakOn(date);
      let reconcile!: Promise<unknown>;
      let accept!: Promise<unknown>;
      const start = (): void => {
        reconcile = runReconcileJob(ctx, { account: ACCOUNT, date });
        accept = applyCaseAction(ctx, { caseId, action: 'accept', actor: 'anna', note: `round ${round}: booked next week` });
      };
      if (backend === 'postgres' && round % 2 === 1) {
        // Odd rounds on the server hold the reconciliation mid-way and give the accept time to
        // finish meanwhile if it can (it cannot once both take the account's case lock).
        await holdingOccurrence(caseId, date, async () => {
          start();
          await untilASessionWaitsOnALock();
          await Promise.race([accept, new Promise((resolve) => setTimeout(resolve, 300))]);
        });
      } else {
        // Even rounds, and the embedded database (whose one connection serializes transactions), run both at once.
        start();
      }
      await Promise.all([reconcile, accept]);

      const now = await findCase(ctx.database.db, caseId);
      const trail = await listEvents(ctx.database.db, caseId);
      const last = trail.filter((e) => e.toState !== null).at(-1)!;
      expect({ round, state: now!.state, acceptedDifference: now!.acceptedDifference, resolution: now!.resolution }).toEqual({ round, state: 'accepted', acceptedDifference: 100n, resolution: 'accepted' });
      expect({ round, lastEventTo: last.toState }).toEqual({ round, lastEventTo: now!.state });
      expect(trail.filter((e) => e.action === 'accepted')).toHaveLength(round);

      await applyCaseAction(ctx, { caseId, action: 'reopen', actor: 'anna', note: `round ${round}: next round` });
    }
    const trail = await listEvents(ctx.database.db, caseId);
    expect(trail.filter((e) => e.action === 'seen')).toHaveLength(ROUNDS);
    expect(trail.filter((e) => e.action === 'lapsed')).toHaveLength(0);
  });
});
