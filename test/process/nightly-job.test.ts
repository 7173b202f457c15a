import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { listReconciliationStatus } from '../../src/db/reconciliation-owed.repository.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runNight, settleClosedDates } from '../../jobs/nightly-job.js';
import { reconcileAfterSnapshot } from '../../jobs/reconcile-job.js';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock, type Clock } from '../../src/clock.js';
import { businessCalendarOf } from '../../src/config/index.js';
import { insertRunningRun } from '../../src/db/snapshot-run.repository.js';
import { importBooksFile } from '../../src/books/index.js';
import { serviceOfSlot, SlotSchedule } from '../../src/scheduler/slot-schedule.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { collect, spawnCli } from '../helpers/run-cli.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let sandbox: Sandbox;
// The emulator's outages run on the test's clock, so "40 minutes" passes in virtual time.
let clock = new FixedClock('2026-11-20T23:55:00Z');

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 5, now: () => clock.now() });
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
});
beforeEach(async () => {
  for (const table of ['reconciliation_results', 'expected_balances', 'books_imports', 'missed_dates', 'balance_snapshots', 'snapshot_runs', 'reconciliation_owed', 'scheduled_accounts'] as const) {
    await t.handle.db.deleteFrom(table).execute();
  }
  sandbox.setFaults({ outageMs: 0, latencyMs: 0 });
});

function context(at: string, extra: Record<string, string> = {}, options: { clock?: Clock; logs?: ReturnType<typeof captureLogs> } = {}): AppContext {
  clock = new FixedClock(at);
  return createTestContext(t, sandboxEnv(sandbox, extra), { clock: options.clock ?? clock, logger: options.logs?.logger });
}

function night(ctx: AppContext, slot: string, signal = new AbortController().signal) {
  return runNight(ctx, { serve: serviceOfSlot(businessCalendarOf(ctx.config), new Date(slot)), signal, reconcile: reconcileAfterSnapshot });
}

const captureDays = () => t.handle.db.selectFrom('capture_days').selectAll().orderBy('business_date').execute();
const runs = () => t.handle.db.selectFrom('snapshot_runs').selectAll().orderBy('id').execute();

describe(`a night of the worker on the ${backend} database`, () => {
  it('keeps the slot\'s business date when the capture runs after midnight, and records its drift', async () => {
    // The 23:55 slot of the 20th, run at 00:20 on the 21st (a restart, a long queue of accounts).
    const ctx = context('2026-11-21T00:20:00Z');
    const result = await night(ctx, '2026-11-20T23:55:00Z');
    expect(result.accounts).toEqual([expect.objectContaining({ account: 'default', status: 'captured', attempts: 1 })]);
    expect(await runs()).toEqual([expect.objectContaining({ business_date: '2026-11-20', end_of_day: true, cutoff_drift_seconds: 1200, cutoff_at: new Date('2026-11-21T00:00:00Z') })]);
    const daily = await t.handle.db.selectFrom('daily_balances').selectAll().execute();
    expect(daily).toHaveLength(5);
    expect(daily.every((r) => r.business_date === '2026-11-20' && r.end_of_day && r.cutoff_drift_seconds === 1200)).toBe(true);
    expect(await captureDays()).toEqual([expect.objectContaining({ business_date: '2026-11-20', status: 'captured', attempts: 1, cutoff_drift_seconds: 1200 })]);
  });

  it('tries again through a 40-minute outage at the slot and captures the date inside the window', async () => {
    const logs = captureLogs();
    const ctx = context('2026-11-20T23:55:00Z', {}, { logs });
    sandbox.setFaults({ outageMs: 40 * 60_000 });
    const result = await night(ctx, '2026-11-20T23:55:00Z');
    // Attempts at 23:55, 00:00, 00:10 and 00:30 meet the outage (until 00:35); 01:00 succeeds.
    expect(result.accounts[0]).toMatchObject({ status: 'captured', attempts: 5 });
    const days = await captureDays();
    expect(days).toEqual([expect.objectContaining({ business_date: '2026-11-20', status: 'captured', attempts: 5, cutoff_drift_seconds: 3600 })]);
    expect(days[0]!.last_error).toMatch(/503/);
    expect((await runs()).map((r) => r.status)).toEqual(['failed', 'failed', 'failed', 'failed', 'succeeded']);
    expect(logs.lines().filter((l) => /not captured for 2026-11-20 yet: next attempt at/.test(String(l.msg)))).toHaveLength(4);
    // Reconciled after the capture: the results name the captured run.
    const results = await t.handle.db.selectFrom('reconciliation_results').select(['run_id', 'business_date']).distinct().execute();
    expect(results).toEqual([{ run_id: result.accounts[0]!.runId, business_date: '2026-11-20' }]);
  });

  it('records the date as missed when the gateway is down through the whole window, logs it and counts missed dates in a row', async () => {
    const logs = captureLogs();
    const ctx = context('2026-11-19T23:55:00Z', { RECON_MAX_CONSECUTIVE_FAILURES: '2', RECON_RETRY_DELAYS: '30m,1h' }, { logs });
    sandbox.setFaults({ outageMs: 7 * 86_400_000 });
    const first = await night(ctx, '2026-11-19T23:55:00Z');
    clock.set('2026-11-20T23:55:00Z');
    const second = await night(ctx, '2026-11-20T23:55:00Z');
    expect([first, second].map((n) => n.accounts[0]!.status)).toEqual(['missed', 'missed']);
    // Attempts at 23:55, 00:25, 01:25 and 02:25; the window of the 20th closes at 03:00 on the 21st: settled then, not later.
    expect(clock.now().toISOString()).toBe('2026-11-21T03:00:00.000Z');
    const days = await captureDays();
    expect(days.map((d) => [d.business_date, d.status, d.attempts])).toEqual([
      ['2026-11-19', 'missed', 4],
      ['2026-11-20', 'missed', 4],
    ]);
    expect(days[1]!.last_error).toMatch(/503/);
    const missedLines = logs.lines().filter((l) => l.level === 50 && /missed business date/.test(String(l.msg)));
    expect(missedLines.map((l) => [l.account, l.businessDate])).toEqual([
      ['default', '2026-11-19'],
      ['default', '2026-11-20'],
    ]);
    expect(String(missedLines[1]!.msg)).toMatch(/account "default" missed business date 2026-11-20: no end-of-day snapshot by the end of its capture window \(2026-11-21T03:00:00.000Z\); last error: .*503/);
    const alarm = logs.lines().filter((l) => l.level === 50 && /has missed \d+ business dates in a row/.test(String(l.msg)));
    expect(alarm.map((l) => l.consecutiveMissedDates)).toEqual([2]);
    // A missed date is reconciled too: its results say there is no snapshot.
    const results = await t.handle.db.selectFrom('reconciliation_results').select(['business_date', 'status']).orderBy('business_date').execute();
    expect(results).toEqual([
      { business_date: '2026-11-19', status: 'no_snapshot' },
      { business_date: '2026-11-20', status: 'no_snapshot' },
    ]);
  });

  it('counts a run left running by a dead process as a failed attempt, not as nothing', async () => {
    const ctx = context('2026-11-21T03:30:00Z');
    await insertRunningRun(t.handle.db, {
      account: 'default',
      environment: 'sandbox',
      trigger: 'schedule',
      businessDate: '2026-11-20',
      startedAt: new Date('2026-11-20T23:55:00Z'),
      worker: 'dead-host:4242',
      timing: { cutoffAt: new Date('2026-11-21T00:00:00Z'), driftSeconds: -300, endOfDay: true },
    });
    const result = await night(ctx, '2026-11-20T23:55:00Z');
    expect(result.accounts[0]!.status).toBe('missed');
    expect(await runs()).toEqual([expect.objectContaining({ status: 'abandoned', error: expect.stringMatching(/dead-host:4242/) })]);
    expect(await captureDays()).toEqual([expect.objectContaining({ status: 'missed', attempts: 1, last_error: expect.stringMatching(/abandoned/) })]);
  });

  it('keeps the end-of-day run nearest the cut-off as the day\'s snapshot: a manual capture at 14:00 or late in the window does not replace it', async () => {
    const ctx = context('2026-11-20T14:00:00Z');
    sandbox.setBalance('EUR', 100n);
    const manual = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(manual.accounts[0]!.timing).toMatchObject({ businessDate: '2026-11-20', endOfDay: false });
    clock.set('2026-11-20T23:55:00Z');
    sandbox.setBalance('EUR', 200n);
    const nightly = await night(ctx, '2026-11-20T23:55:00Z');
    clock.set('2026-11-21T01:30:00Z');
    sandbox.setBalance('EUR', 300n);
    const late = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(late.accounts[0]!.timing).toMatchObject({ businessDate: '2026-11-20', endOfDay: true, driftSeconds: 5400 });
    const eur = await t.handle.db.selectFrom('daily_balances').selectAll().where('currency', '=', 'EUR').execute();
    expect(eur).toEqual([expect.objectContaining({ business_date: '2026-11-20', balance: '200', run_id: nightly.accounts[0]!.runId, end_of_day: true, cutoff_drift_seconds: -300 })]);
  });

  it('captures at the slot although a manual snapshot inside the window came first: only a capture finished after the slot stands in for it', async () => {
    const logs = captureLogs();
    // 21:05 is inside the default 3 h window: end of day, but 2 h 50 min before the slot.
    const ctx = context('2026-11-20T21:05:00Z', {}, { logs });
    sandbox.setBalance('EUR', 100n);
    const manual = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(manual.accounts[0]!.timing).toMatchObject({ businessDate: '2026-11-20', endOfDay: true });
    clock.set('2026-11-20T23:55:00Z');
    sandbox.setBalance('EUR', 250n);
    const nightly = await night(ctx, '2026-11-20T23:55:00Z');
    expect(nightly.accounts[0]).toMatchObject({ status: 'captured', attempts: 1 });
    const eur = await t.handle.db.selectFrom('daily_balances').selectAll().where('currency', '=', 'EUR').execute();
    expect(eur).toEqual([expect.objectContaining({ business_date: '2026-11-20', balance: '250', run_id: nightly.accounts[0]!.runId })]);
    expect(logs.lines().filter((l) => /skips account/.test(String(l.msg)))).toEqual([]);
  });

  it('skips a slot whose date was captured after the slot fired, and says so in the log', async () => {
    const logs = captureLogs();
    const ctx = context('2026-11-20T23:56:00Z', {}, { logs });
    const manual = await runSnapshotJob(ctx, { trigger: 'manual' });
    const nightly = await night(ctx, '2026-11-20T23:55:00Z');
    expect(nightly.accounts[0]).toMatchObject({ status: 'captured', attempts: 0 });
    expect((await runs()).map((r) => r.id)).toEqual([manual.accounts[0]!.runId]);
    const skip = logs.lines().filter((l) => /skips account/.test(String(l.msg)));
    expect(skip.map((l) => String(l.msg))).toEqual([
      `slot 2026-11-20T23:55:00.000Z skips account "default": run ${manual.accounts[0]!.runId} (manual) captured 2026-11-20 at 2026-11-20T23:56:00.000Z, after the slot`,
    ]);
  });

  it('falls back to the latest intraday run for a date with no end-of-day run, marked as such', async () => {
    const ctx = context('2026-11-20T09:00:00Z');
    await runSnapshotJob(ctx, { trigger: 'manual' });
    clock.set('2026-11-20T15:00:00Z');
    const later = await runSnapshotJob(ctx, { trigger: 'manual' });
    const daily = await t.handle.db.selectFrom('daily_balances').select(['run_id', 'end_of_day']).distinct().execute();
    expect(daily).toEqual([{ run_id: later.accounts[0]!.runId, end_of_day: false }]);
    expect(await captureDays()).toEqual([expect.objectContaining({ business_date: '2026-11-20', status: 'pending', end_of_day: false, attempts: 0 })]);
  });

  it('reconciles a date again when its books arrive after the nightly reconcile, and names the books import', async () => {
    const ctx = context('2026-11-20T23:55:00Z');
    await night(ctx, '2026-11-20T23:55:00Z');
    const before = await t.handle.db.selectFrom('reconciliation_results').select(['status', 'books_import_id']).execute();
    // The night reconciled after the cut-off, before any books: each wallet awaits them, no verdict.
    expect(new Set(before.map((r) => r.status))).toEqual(new Set(['awaiting_books']));
    // On the test's clock (the view itself decides no_books on the database's, days later).
    expect(await listReconciliationStatus(t.handle.db, { from: '2026-11-20', to: '2026-11-20', now: clock.now() })).toEqual([expect.objectContaining({ state: 'awaiting_books' })]);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'wr-books-')), 'books.csv');
    writeFileSync(file, ['business_date,currency,balance', ...sandbox.wallets.map((w) => `2026-11-20,${w.currency},${w.balance}`)].join('\n'));
    clock.set('2026-11-21T08:00:00Z');
    const imported = await importBooksFile(ctx, file, { amounts: 'minor' });
    expect(imported.reReconciledDates).toBe(1);
    const after = await t.handle.db.selectFrom('reconciliation_results').select(['status', 'books_import_id']).execute();
    expect(after).toHaveLength(5);
    expect(after.every((r) => r.status === 'matched' && r.books_import_id === imported.importId)).toBe(true);
  });

  it('at start records the dates whose window closed while no worker ran, but none before the first run', async () => {
    const ctx = context('2026-11-18T23:55:00Z');
    await night(ctx, '2026-11-18T23:55:00Z');
    // The worker was down from the 19th until the 22nd at 10:00.
    clock.set('2026-11-22T10:00:00Z');
    const schedule = new SlotSchedule(ctx.config.schedule, ctx.config.timezone);
    expect(await settleClosedDates(ctx, schedule)).toBe(3);
    expect((await captureDays()).map((d) => [d.business_date, d.status, d.last_error])).toEqual([
      ['2026-11-18', 'captured', null],
      ['2026-11-19', 'missed', 'no capture was attempted inside the window (no worker was running)'],
      ['2026-11-20', 'missed', 'no capture was attempted inside the window (no worker was running)'],
      ['2026-11-21', 'missed', 'no capture was attempted inside the window (no worker was running)'],
    ]);
    // Idempotent, and a new installation (no run at all) has no missed past.
    expect(await settleClosedDates(ctx, schedule)).toBe(0);
    await t.handle.db.deleteFrom('missed_dates').execute();
    await t.handle.db.deleteFrom('balance_snapshots').execute();
    await t.handle.db.deleteFrom('snapshot_runs').execute();
    await t.handle.db.deleteFrom('scheduled_accounts').execute();
    expect(await settleClosedDates(ctx, schedule)).toBe(0);
  });

  it.skipIf(backend !== 'postgres')('finishes the accounts of a replica killed mid-run within one retry delay', async () => {
    // Replica A: a real wallet-recon process, slowed down so it is killed in the middle of its run.
    sandbox.setFaults({ latencyMs: 400 });
    const replicaA = spawnCli(['snapshot'], { ...t.childEnv, ...sandboxEnv(sandbox), GATEWAY_CONCURRENCY: '1' });
    const exited = collect(replicaA);
    for (let i = 0; i < 200 && (await runs()).every((r) => r.status !== 'running'); i++) await new Promise((r) => setTimeout(r, 50));
    expect((await runs()).map((r) => r.status)).toEqual(['running']);

    // Replica B finds the account locked, waits one delay (during which A dies), then captures it.
    const base = new FixedClock('2026-11-20T23:55:00Z');
    let killedAt: Date | undefined;
    const replicaClock: Clock = {
      now: () => base.now(),
      sleep: async (ms, signal) => {
        if (!killedAt) {
          replicaA.kill('SIGKILL');
          await exited;
          // The server ends the dead process's session, and with it its account lock, a moment
          // after the process is gone (longer on a loaded machine); this clock's sleeps take no
          // real time, so wait for that moment rather than let B's next try race it.
          const account = (await runs())[0]!.account;
          for (let i = 0; i < 200; i++) {
            const { rows } = await sql<{ free: boolean }>`select case when pg_try_advisory_lock(hashtextextended('wallet-recon:account:' || ${account}, 0)) then pg_advisory_unlock(hashtextextended('wallet-recon:account:' || ${account}, 0)) else false end as free`.execute(t.handle.db);
            if (rows[0]!.free) break;
            await new Promise((r) => setTimeout(r, 50));
          }
          killedAt = base.now();
          sandbox.setFaults({ latencyMs: 0 });
        }
        await base.sleep(ms, signal);
      },
    };
    const ctx = context('2026-11-20T23:55:00Z', {}, { clock: replicaClock });
    const result = await night(ctx, '2026-11-20T23:55:00Z');
    expect(result.accounts[0]).toMatchObject({ status: 'captured' });
    const all = await runs();
    expect(all.map((r) => r.status)).toEqual(['abandoned', 'succeeded']);
    expect(all[1]!.started_at.getTime() - killedAt!.getTime()).toBeLessThanOrEqual(5 * 60_000);
    // Replica A's own run was a manual capture classified on the real clock: only the 20th matters here.
    expect((await captureDays()).filter((d) => d.business_date === '2026-11-20')).toEqual([expect.objectContaining({ status: 'captured', run_id: all[1]!.id })]);
  });
});
