import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { listReconciliationStatus } from '../../src/db/reconciliation-owed.repository.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBackfillJob } from '../../jobs/backfill-job.js';
import { runNight, settleClosedDates } from '../../jobs/nightly-job.js';
import { reconcileAfterSnapshot, runReconcileJob, settleOwedReconciliations } from '../../jobs/reconcile-job.js';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { businessCalendarOf } from '../../src/config/index.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunFailed, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { UsageError } from '../../src/errors.js';
import { importBooksFile } from '../../src/books/index.js';
import { serviceOfSlot, SlotSchedule } from '../../src/scheduler/slot-schedule.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { tryAcquireAccountLock } from '../../src/snapshot/account-lock.js';
import { createGatewayForAccount } from '../../src/snapshot/gateway-for-account.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 20: the answer an accountant reads in the morning is current, or says why not.
let t: TestDatabase;
let sandbox: Sandbox;
let clock = new FixedClock('2026-11-20T23:50:00Z');
// Notifications are written to the outbox only for configured channels; nothing delivers them here.
const CHANNELS = { RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hooks/recon', RECON_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 3, now: () => clock.now() });
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
});
beforeEach(async () => {
  for (const table of ['notifications', 'reconciliation_results', 'expected_balances', 'books_imports', 'missed_dates', 'balance_snapshots', 'snapshot_runs', 'reconciliation_owed', 'scheduled_accounts'] as const) {
    await t.handle.db.deleteFrom(table).execute();
  }
  for (const w of sandbox.wallets) sandbox.setUnreadable(w.currency, false);
});

function context(at: string, extra: Record<string, string> = {}): AppContext {
  clock = new FixedClock(at);
  return createTestContext(t, sandboxEnv(sandbox, { ...CHANNELS, ...extra }), { clock });
}

const night = (ctx: AppContext, slot: string) =>
  runNight(ctx, { serve: serviceOfSlot(businessCalendarOf(ctx.config), new Date(slot)), signal: new AbortController().signal, reconcile: reconcileAfterSnapshot });

function booksFile(date: string, balances: Record<string, bigint>): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'wr-books-')), 'books.csv');
  writeFileSync(file, ['business_date,currency,balance', ...Object.entries(balances).map(([c, b]) => `${date},${c},${b}`)].join('\n'));
  return file;
}

const walletBooks = (change: Record<string, bigint> = {}) => Object.fromEntries(sandbox.wallets.map((w) => [w.currency, w.balance + (change[w.currency] ?? 0n)]));
// Where each date stands on the test's clock (the view itself decides no_books on the database's, days later).
const status = (date: string) => listReconciliationStatus(t.handle.db, { from: date, to: date, now: clock.now() });
const results = (date: string) => t.handle.db.selectFrom('reconciliation_results').selectAll().where('business_date', '=', date).orderBy('currency').execute();
const outbox = () => t.handle.db.selectFrom('notifications').select(['event_type', 'payload']).orderBy('id').execute();

describe(`reconciliation as derived state (${backend})`, () => {
  it('1. a manual end-of-day snapshot made after the slot fired is reconciled after the cut-off, and books with a break make it current with the break', async () => {
    // After the 23:55 slot: it stands in for the slot (one made before the slot would not).
    const ctx = context('2026-11-20T23:56:00Z');
    const manual = await runSnapshotJob(ctx, { trigger: 'manual', reconcileChanged: true });
    expect(manual.accounts[0]).toMatchObject({ status: 'succeeded', timing: { businessDate: '2026-11-20', endOfDay: true } });
    // Its cut-off is ahead: owed, not reconciled yet.
    expect(await status('2026-11-20')).toEqual([expect.objectContaining({ state: 'owed' })]);
    const result = await night(ctx, '2026-11-20T23:55:00Z');
    expect(result.accounts[0]).toMatchObject({ status: 'captured', attempts: 0 });
    // The night reconciled the manual capture after the cut-off: awaiting books, no case.
    expect((await results('2026-11-20')).map((r) => [r.status, r.run_id])).toEqual(sandbox.wallets.map(() => ['awaiting_books', manual.accounts[0]!.runId]));
    expect(await t.handle.db.selectFrom('reconciliation_cases').selectAll().execute()).toEqual([]);
    const digest = (await outbox()).find((n) => n.event_type === 'night.completed')!.payload as { data: { pending: unknown[] } };
    expect(digest.data.pending).toEqual([{ account: 'default', state: 'awaiting_books', message: 'books for 2026-11-20 not imported yet' }]);

    clock.set('2026-11-21T08:00:00Z');
    const first = sandbox.wallets[0]!.currency;
    const imported = await importBooksFile(ctx, booksFile('2026-11-20', walletBooks({ [first]: -1_000_000n })), { amounts: 'minor' });
    const rows = await results('2026-11-20');
    expect(rows.find((r) => r.currency === first)).toMatchObject({ status: 'break', difference: '1000000', books_import_id: imported.importId });
    expect(await status('2026-11-20')).toEqual([expect.objectContaining({ state: 'current', run_id: manual.accounts[0]!.runId, books_import_id: imported.importId })]);

    // Books imported again: current again, with the new import's id.
    const again = await importBooksFile(ctx, booksFile('2026-11-20', walletBooks()), { amounts: 'minor' });
    expect(await status('2026-11-20')).toEqual([expect.objectContaining({ state: 'current', books_import_id: again.importId })]);
    expect((await results('2026-11-20')).every((r) => r.status === 'matched')).toBe(true);
  });

  it('1b. whatever leaves a date owed (a reconcile that failed, a worker stopped) is paid by the next round', async () => {
    const ctx = context('2026-11-21T12:00:00Z');
    await runSnapshotJob(ctx, { trigger: 'manual' }); // intraday of the 21st, no reconcile asked
    clock.set('2026-11-22T01:00:00Z');
    expect(await status('2026-11-21')).toEqual([expect.objectContaining({ state: 'owed' })]);
    const settled = await settleOwedReconciliations(ctx);
    expect(settled.reconciled).toEqual([{ account: 'default', businessDate: '2026-11-21' }]);
    expect(await status('2026-11-21')).toEqual([expect.objectContaining({ state: 'awaiting_books' })]);
  });

  it('2. books are awaited without cases or exit 3, then missed once: one no_books case and one books.missing', async () => {
    const ctx = context('2026-11-20T23:55:00Z');
    await night(ctx, '2026-11-20T23:55:00Z');
    clock.set('2026-11-21T06:00:00Z');
    const early = await runReconcileJob(ctx, { date: '2026-11-20' });
    expect(early.exitCode).toBe(0);
    expect(early.summary.awaiting_books).toBe(3);
    const openCases = () => t.handle.db.selectFrom('reconciliation_cases').select(['kind', 'currency', 'state']).where('state', '=', 'open').execute();
    expect(await openCases()).toEqual([]);

    // RECON_BOOKS_DEADLINE (12 h) after the cut-off: the worker's round turns the wait into a miss.
    clock.set('2026-11-21T12:00:01Z');
    await settleOwedReconciliations(ctx);
    await settleOwedReconciliations(ctx);
    expect((await results('2026-11-20')).map((r) => [r.currency, r.status])).toEqual([[null, 'no_books']]);
    expect(await openCases()).toEqual([{ kind: 'no_books', currency: null, state: 'open' }]);
    expect((await outbox()).filter((n) => n.event_type === 'books.missing')).toHaveLength(1);

    // Books that arrive later reconcile the date and resolve that case.
    await importBooksFile(ctx, booksFile('2026-11-20', walletBooks()), { amounts: 'minor' });
    expect((await results('2026-11-20')).every((r) => r.status === 'matched')).toBe(true);
    expect(await t.handle.db.selectFrom('reconciliation_cases').select(['kind', 'state']).where('kind', '=', 'no_books').execute()).toEqual([{ kind: 'no_books', state: 'resolved' }]);
    expect(await openCases()).toEqual([]);
  });

  it('3. a capture paused after it started is judged by when its reads finished: not the day\'s closing balance', async () => {
    const ctx = context('2026-11-20T23:55:00Z');
    const result = await runNight(ctx, {
      serve: serviceOfSlot(businessCalendarOf(ctx.config), new Date('2026-11-20T23:55:00Z')),
      signal: new AbortController().signal,
      reconcile: reconcileAfterSnapshot,
      // The process is frozen between the reads and the write until 09:00 (SIGSTOP, a VM pause).
      createGateway: (account, signal) => {
        const client = createGatewayForAccount(ctx.config, account, ctx.logger, signal);
        return Object.assign(Object.create(client) as typeof client, {
          captureBalances: async (...args: Parameters<typeof client.captureBalances>) => {
            const balances = await client.captureBalances(...args);
            if (clock.now() < new Date('2026-11-21T09:00:00Z')) clock.set('2026-11-21T09:00:00Z');
            return balances;
          },
        });
      },
    });
    expect(result.accounts[0]!.status).toBe('missed');
    const runs = await t.handle.db.selectFrom('snapshot_runs').selectAll().execute();
    expect(runs).toEqual([expect.objectContaining({ status: 'succeeded', business_date: '2026-11-21', end_of_day: false })]);
    expect(await t.handle.db.selectFrom('daily_balances').select('business_date').distinct().execute()).toEqual([{ business_date: '2026-11-21' }]);
  });

  it('4. the last end-of-day capture that finished by the cut-off is the closing balance; one after it only when none did', async () => {
    const chosen = (date: string) => t.handle.db.selectFrom('authoritative_runs').selectAll().where('business_date', '=', date).execute();
    // The 19th: only a capture three minutes after the cut-off. It is the day's balance, marked so.
    const ctx = context('2026-11-20T00:03:00Z');
    const lateOnly = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(lateOnly.accounts[0]!.timing).toMatchObject({ businessDate: '2026-11-19', endOfDay: true, driftSeconds: 180 });
    expect(await chosen('2026-11-19')).toEqual([
      expect.objectContaining({ run_id: lateOnly.accounts[0]!.runId, after_cutoff: true, reason: 'no capture finished by the cut-off: the earliest one after it' }),
    ]);
    expect(await t.handle.db.selectFrom('daily_balances').select('after_cutoff').distinct().where('business_date', '=', '2026-11-19').execute()).toEqual([{ after_cutoff: true }]);

    // The 20th: the nightly 23:55 capture, then a manual one at 00:03 holding three minutes of the 21st.
    clock.set('2026-11-20T23:55:00Z');
    const nightly = await runSnapshotJob(ctx, { trigger: 'schedule', serve: { window: businessCalendarOf(ctx.config).windowOf('2026-11-20') } });
    clock.set('2026-11-21T00:03:00Z');
    const late = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(late.accounts[0]!.timing).toMatchObject({ businessDate: '2026-11-20', endOfDay: true, driftSeconds: 180 });
    expect(await chosen('2026-11-20')).toEqual([
      expect.objectContaining({ run_id: nightly.accounts[0]!.runId, after_cutoff: false, reason: 'the last end-of-day capture that finished at or before the cut-off' }),
    ]);
  });

  it('5. a date left pending by another process\'s capture that then failed is settled by the next round: miss, alarm, digest, no_snapshot', async () => {
    const ctx = context('2026-11-20T23:55:00Z');
    // Another process holds the account and has a run in flight through the whole window.
    const held = (await tryAcquireAccountLock(ctx.database, 'default'))!;
    const runId = await insertRunningRun(t.handle.db, {
      account: 'default',
      environment: 'sandbox',
      trigger: 'manual',
      businessDate: '2026-11-20',
      startedAt: new Date('2026-11-20T23:54:00Z'),
      worker: 'other-host:1',
      timing: { cutoffAt: new Date('2026-11-21T00:00:00Z'), driftSeconds: -360, endOfDay: true },
    });
    let outcome;
    try {
      outcome = await night(ctx, '2026-11-20T23:55:00Z');
    } finally {
      await held.release();
    }
    expect(outcome.accounts[0]!.status).toBe('pending');
    expect(await t.handle.db.selectFrom('missed_dates').selectAll().execute()).toEqual([]);
    // That run fails after the window closed; the worker's next round settles the date.
    await markRunFailed(t.handle.db, runId, new Date('2026-11-21T03:01:00Z'), 'gateway unreachable');
    clock.set('2026-11-21T03:02:00Z');
    expect(await settleClosedDates(ctx, new SlotSchedule(ctx.config.schedule, ctx.config.timezone), reconcileAfterSnapshot)).toBe(1);
    expect(await t.handle.db.selectFrom('missed_dates').select(['business_date', 'last_error']).execute()).toEqual([{ business_date: '2026-11-20', last_error: 'gateway unreachable' }]);
    expect((await outbox()).map((n) => n.event_type).sort()).toEqual(['date.missed', 'night.completed']);
    expect((await results('2026-11-20')).map((r) => r.status)).toEqual(['no_snapshot']);
  });

  it('6. a worker records missed dates only from the first slot it served: earlier manual snapshots and backfills make no missed past', async () => {
    const ctx = context('2026-09-01T12:00:00Z');
    await runSnapshotJob(ctx, { trigger: 'manual' });
    clock.set('2026-11-20T12:00:00Z');
    const schedule = new SlotSchedule(ctx.config.schedule, ctx.config.timezone);
    expect(await settleClosedDates(ctx, schedule)).toBe(0);
    expect(await t.handle.db.selectFrom('missed_dates').selectAll().execute()).toEqual([]);
    // From the first night on, a night nobody served is a miss.
    clock.set('2026-11-20T23:55:00Z');
    await night(ctx, '2026-11-20T23:55:00Z');
    clock.set('2026-11-22T12:00:00Z');
    expect(await settleClosedDates(ctx, schedule)).toBe(1);
    expect(await t.handle.db.selectFrom('missed_dates').select('business_date').execute()).toEqual([{ business_date: '2026-11-21' }]);
  });

  it('7. backfilling a gap day leaves the next date current, its movement measured from the filled day', async () => {
    const ctx = context('2026-11-19T00:00:00Z', { RECON_BOOKS_DEADLINE: '5d' });
    const currency = sandbox.wallets[0]!.currency;
    const balance = sandbox.wallets[0]!.balance;
    const day = async (date: string, amount: bigint) => {
      const runId = await insertRunningRun(t.handle.db, {
        account: 'default',
        environment: 'sandbox',
        trigger: 'schedule',
        businessDate: date,
        startedAt: new Date(`${date}T23:55:00Z`),
        timing: { cutoffAt: new Date(`${date}T23:59:59Z`), driftSeconds: -300, endOfDay: true },
      });
      await insertSnapshotRows(t.handle.db, runId, 'default', new Date(`${date}T23:55:00Z`), [{ currency, balance: amount, singleBalance: amount }]);
      await markRunSucceeded(t.handle.db, runId, new Date(`${date}T23:55:00Z`), { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 2 });
    };
    await day('2026-11-18', 100n);
    await day('2026-11-20', balance);
    clock.set('2026-11-22T12:00:00Z');
    await settleOwedReconciliations(ctx);
    expect((await results('2026-11-20'))[0]).toMatchObject({ previous_balance: '100' });

    const statements = booksFile('2026-11-19', { [currency]: 250n });
    await runBackfillJob(ctx, { from: '2026-11-19', to: '2026-11-19', importFile: statements });
    expect((await results('2026-11-20'))[0]).toMatchObject({ previous_balance: '250', movement: String(balance - 250n) });
    expect(await status('2026-11-20')).toEqual([expect.objectContaining({ state: 'awaiting_books' })]);
    const history = await t.handle.db.selectFrom('balance_history').select(['previous_balance']).where('business_date', '=', '2026-11-20').execute();
    expect(history).toEqual([{ previous_balance: '250' }]);
  });

  it('11. a wallet the single read cannot confirm does not cost the day: kept at its listed balance, unconfirmed, endpoint_mismatch with the reason', async () => {
    const ctx = context('2026-11-20T23:55:00Z');
    const unreadable = sandbox.wallets[1]!.currency;
    sandbox.setUnreadable(unreadable, true);
    const result = await night(ctx, '2026-11-20T23:55:00Z');
    expect(result.accounts[0]).toMatchObject({ status: 'captured', attempts: 1 });
    const run = await t.handle.db.selectFrom('snapshot_runs').selectAll().executeTakeFirstOrThrow();
    expect(run).toMatchObject({ status: 'succeeded', wallets_fetched: 3 });
    expect(run.warning).toContain(`${unreadable} (`);
    const wallets = await t.handle.db.selectFrom('daily_balances').select(['currency', 'single_balance', 'unconfirmed_reason']).orderBy('currency').execute();
    expect(wallets.find((w) => w.currency === unreadable)).toMatchObject({ single_balance: null, unconfirmed_reason: expect.stringMatching(/404/) });
    clock.set('2026-11-21T08:00:00Z');
    await importBooksFile(ctx, booksFile('2026-11-20', walletBooks()), { amounts: 'minor' });
    const row = (await results('2026-11-20')).find((r) => r.currency === unreadable)!;
    expect(row).toMatchObject({ status: 'endpoint_mismatch', note: expect.stringMatching(/could not confirm the listed balance/) });
  });

  it('credentials the gateway refuses raise date.at_risk at once (once per date) and are retried only at the longest delay', async () => {
    const ctx = context('2026-11-20T23:55:00Z', { GATEWAY_API_SECRET: 'not-the-secret' });
    const result = await night(ctx, '2026-11-20T23:55:00Z');
    expect(result.accounts[0]!.status).toBe('missed');
    const atRisk = (await outbox()).filter((n) => n.event_type === 'date.at_risk');
    expect(atRisk).toHaveLength(1);
    expect((atRisk[0]!.payload as { data: { reason: string; windowClosesAt: string } }).data).toMatchObject({ windowClosesAt: '2026-11-21T03:00:00.000Z', reason: expect.stringMatching(/refused/) });
    const starts = (await t.handle.db.selectFrom('snapshot_runs').select('started_at').orderBy('id').execute()).map((r) => r.started_at.getTime());
    // RECON_RETRY_DELAYS 5m,10m,20m,30m: with refused credentials every wait is the longest one.
    expect(starts.slice(1).map((at, i) => (at - starts[i]!) / 60_000)).toEqual(starts.slice(1).map(() => 30));
  });

  it('13. reconcile --date of a date whose cut-off is ahead is refused saying when it can run', async () => {
    const ctx = context('2026-11-20T15:00:00Z');
    const refused = runReconcileJob(ctx, { date: '2026-11-20' });
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(refused).rejects.toThrow('Business date 2026-11-20 cannot be reconciled yet: its cut-off is 2026-11-21 00:00 UTC (RECON_CUTOFF 00:00 in UTC)');
    expect(await t.handle.db.selectFrom('reconciliation_results').selectAll().execute()).toEqual([]);
  });
});
