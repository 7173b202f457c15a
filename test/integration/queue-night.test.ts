import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CaptureWindowClosedError, runCaptureJob, runSettleJob } from '../../jobs/queued-night-job.js';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { businessCalendarOf } from '../../src/config/index.js';
import { closeJobQueue, openJobQueue, QUEUES, type PgBoss } from '../../src/queue/job-queue.js';
import { queueNight, type CaptureJobData } from '../../src/queue/night-jobs.js';
import { serviceOfSlot } from '../../src/scheduler/slot-schedule.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { createLogger } from '../../src/logger.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { createTestContext, sandboxEnv, writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// The night as jobs, one step at a time on the test's clock: pg-boss holds the jobs, the
// handlers are called as a worker calls them. The queue exists on a PostgreSQL server only.
let t: TestDatabase;
let sandbox: Sandbox;
let boss: PgBoss;
const SLOT = '2026-11-20T23:55:00Z';
let clock = new FixedClock(SLOT);

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 2, now: () => clock.now() });
}, 60_000);
afterAll(async () => {
  if (boss) await closeJobQueue(boss, 0);
  await sandbox?.close();
  await t?.drop();
});
beforeEach(async () => {
  if (backend !== 'postgres') return;
  await sql`delete from pgboss.job`.execute(t.handle.db);
  for (const table of ['notifications', 'missed_dates', 'balance_snapshots', 'snapshot_runs', 'reconciliation_results', 'reconciliation_owed', 'scheduled_accounts'] as const) {
    await t.handle.db.deleteFrom(table).execute();
  }
  sandbox.setFaults({ outageMs: 0 });
});

function context(at: string): AppContext {
  clock = new FixedClock(at);
  return createTestContext(t, { ...sandboxEnv(sandbox), ...t.childEnv, RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hook', RECON_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }, { clock });
}

async function openBoss(ctx: AppContext): Promise<PgBoss> {
  boss ??= await openJobQueue(ctx.config, ctx.logger, 'command');
  return boss;
}

/** Takes the next due capture job as a worker would (pg-boss compares start times with the server's clock). */
async function takeCapture(b: PgBoss): Promise<PgBoss.Job<CaptureJobData>> {
  await sql`update pgboss.job set start_after = now() - interval '1 second' where name = 'capture' and state = 'created'`.execute(t.handle.db);
  const [job] = await b.fetch<CaptureJobData>(QUEUES.capture);
  if (job === undefined) throw new Error('no capture job was due');
  return job;
}

const jobs = (name: string) =>
  sql<{ state: string; singleton_key: string | null; data: CaptureJobData; start_after: Date; retry_limit: number; retry_count: number }>`
    select state::text, singleton_key, data, start_after, retry_limit, retry_count from pgboss.job where name = ${name} order by created_on`
    .execute(t.handle.db)
    .then((r) => r.rows);

describe.runIf(backend === 'postgres')('the night as jobs on the job queue', () => {
  it('plans a slot once however many workers plan it: one capture job per account and date, keyed by both, and the date\'s settle job at the window\'s close', async () => {
    const ctx = context(SLOT);
    const b = await openBoss(ctx);
    const serve = serviceOfSlot(businessCalendarOf(ctx.config), new Date(SLOT));
    const first = await queueNight(ctx, b, serve);
    const second = await queueNight(ctx, b, serve);
    expect([first.queued, second.queued]).toEqual([1, 0]);
    expect((await jobs('capture')).map((j) => [j.singleton_key, j.data.attempt])).toEqual([['default|2026-11-20', 1]]);
    const settle = await jobs('settle-date');
    expect(settle).toHaveLength(1);
    expect(settle[0]!.start_after.toISOString()).toBe(serve.window.closesAt.toISOString());
  });

  it('re-queues a failed attempt with a start time after the next retry delay, each attempt its own run, and gives up into the dead-letter queue when no attempt fits the window', async () => {
    const ctx = context(SLOT);
    const b = await openBoss(ctx);
    const serve = serviceOfSlot(businessCalendarOf(ctx.config), new Date(SLOT));
    await queueNight(ctx, b, serve);
    sandbox.setFaults({ outageMs: 7 * 86_400_000 });

    const stop = new AbortController().signal;
    const firstJob = await takeCapture(b);
    const outcome = await runCaptureJob(ctx, b, firstJob, stop);
    await b.complete(QUEUES.capture, firstJob.id, outcome);
    // RECON_RETRY_DELAYS defaults to 5m,10m,20m,30m: the second attempt 5 minutes later.
    expect(outcome).toMatchObject({ outcome: 'retry', nextAttemptAt: '2026-11-21T00:00:00.000Z' });
    const waiting = (await jobs('capture')).filter((j) => j.state === 'created');
    expect((await jobs('capture')).map((j) => j.state)).toEqual(['completed', 'created']);
    expect(waiting.map((j) => [j.singleton_key, j.data.attempt, j.start_after.toISOString()])).toEqual([['default|2026-11-20', 2, '2026-11-21T00:00:00.000Z']]);

    // At 02:52 the next attempt (10 min after the second) would fall after the window's close (03:00).
    clock.set('2026-11-21T02:52:00Z');
    const last = await takeCapture(b);
    await expect(runCaptureJob(ctx, b, last, stop)).rejects.toBeInstanceOf(CaptureWindowClosedError);
    const [given] = (await jobs('capture')).filter((j) => j.state === 'active');
    expect(given!.retry_limit).toBe(given!.retry_count);
    const runs = await t.handle.db.selectFrom('snapshot_runs').select(['status']).orderBy('id').execute();
    expect(runs.map((r) => r.status)).toEqual(['failed', 'failed']);
  });

  it('settles the date at its window\'s close: one missed date and one date.missed, however often the settle job runs', async () => {
    const ctx = context(SLOT);
    const b = await openBoss(ctx);
    const serve = serviceOfSlot(businessCalendarOf(ctx.config), new Date(SLOT));
    await queueNight(ctx, b, serve);
    const settleJob = { id: '00000000-0000-0000-0000-000000000000', name: QUEUES.settle, data: { businessDate: '2026-11-20', slot: SLOT }, expireInSeconds: 60 };
    // Before the close nothing is settled: the account may still be captured.
    clock.set('2026-11-21T01:00:00Z');
    expect(await runSettleJob(ctx, settleJob, new AbortController().signal)).toEqual({ captured: 0, missed: 0, pending: 1 });
    clock.set('2026-11-21T03:00:00Z');
    expect(await runSettleJob(ctx, settleJob, new AbortController().signal)).toEqual({ captured: 0, missed: 1, pending: 0 });
    expect(await runSettleJob(ctx, settleJob, new AbortController().signal)).toEqual({ captured: 0, missed: 1, pending: 0 });
    expect(await t.handle.db.selectFrom('missed_dates').select(['account']).execute()).toEqual([{ account: 'default' }]);
    expect(await t.handle.db.selectFrom('notifications').select('event_type').where('event_type', '=', 'date.missed').execute()).toHaveLength(1);
  });

  it('stops settling a date between accounts when the worker stops, and the retried settle job settles the rest once each', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `settle-${String(i).padStart(2, '0')}`);
    const accountsFile = writeAccountsFile(names.map((name) => ({ name, apiKeyEnv: 'K', apiSecretEnv: 'S' })));
    clock = new FixedClock('2026-11-21T03:00:00Z');
    // The stop request comes while the third account's miss is being logged.
    const stop = new AbortController();
    let logged = 0;
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        if (String(chunk).includes('missed business date') && ++logged === 3) stop.abort(new Error('shutdown'));
        done();
      },
    });
    const ctx = createTestContext(t, { ...t.childEnv, RECON_ACCOUNTS_FILE: accountsFile, K: 'k', S: 's' }, { clock, logger: createLogger({ level: 'info', destination }) });
    const settleJob = { id: '00000000-0000-0000-0000-000000000001', name: QUEUES.settle, data: { businessDate: '2026-11-20', slot: SLOT }, expireInSeconds: 60 };
    await expect(runSettleJob(ctx, settleJob, stop.signal)).rejects.toThrow('settling 2026-11-20 was interrupted: it is tried again');
    // The accounts settled before the stop stay settled; the other 37 wait for the retry.
    expect(await t.handle.db.selectFrom('missed_dates').select('account').execute()).toHaveLength(3);
    expect(await runSettleJob(ctx, settleJob, new AbortController().signal)).toEqual({ captured: 0, missed: 40, pending: 0 });
    const missed = await t.handle.db.selectFrom('missed_dates').select('account').orderBy('account').execute();
    expect(missed.map((m) => m.account)).toEqual(names);
  });

  it('says in the console\'s day view how much of the night is still queued', async () => {
    const ctx = context(SLOT);
    const b = await openBoss(ctx);
    await queueNight(ctx, b, serviceOfSlot(businessCalendarOf(ctx.config), new Date(SLOT)));
    await t.handle.db.deleteFrom('console_users').execute();
    await addUser(ctx, 'olga', 'viewer', 'olga-viewer-pw-4444', 'test');
    const app = await buildConsoleApp({ ctx });
    try {
      const client = new ConsoleClient(app);
      expect((await client.signIn('olga', 'olga-viewer-pw-4444')).statusCode).toBe(303);
      const day = await client.get('/day?date=2026-11-20');
      expect(day.statusCode).toBe(200);
      // One capture job and the date's settle job.
      expect(day.body).toContain('<p id="queued">Still queued for the night of 2026-11-20: 2 job(s) waiting, 0 running.</p>');
      await sql`delete from pgboss.job`.execute(t.handle.db);
      expect((await client.get('/day?date=2026-11-20')).body).toContain('<p id="queued">Nothing of the night of 2026-11-20 is still queued.</p>');
    } finally {
      await app.close();
    }
  });

  it('shows the queue through the CLI, and refuses to re-queue a dead-lettered capture whose window has closed', async () => {
    const ctx = context(SLOT);
    const b = await openBoss(ctx);
    const dead = await b.send(QUEUES.captureDead, { account: 'default', businessDate: '2026-11-20', slot: SLOT, attempt: 4 });
    const env = { ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's' };
    const shown = await runCliInProcess(['queue', '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    const capture = (JSON.parse(shown.stdout) as Array<Record<string, unknown>>).find((q) => q.queue === 'capture');
    expect(capture).toEqual({ queue: 'capture', created: 0, active: 0, retry: 0, completed: 0, failed: 0, dead_letter: 1, oldest_waiting_seconds: null });
    const retried = await runCliInProcess(['queue', 'retry', dead!], env);
    expect(retried.code).toBe(2);
    expect(retried.stderr).toMatch(/The capture window of 2026-11-20 closed at 2026-11-21 03:00 UTC: a capture now would not be its end-of-day balance/);
    const unknown = await runCliInProcess(['queue', 'retry', 'nope'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('There is no dead-lettered job nope');
  });
});

describe.runIf(backend === 'embedded')('the queue command on the embedded database', () => {
  it('says the queue exists on a PostgreSQL server only (exit 2)', async () => {
    const other = await createTestDatabase({ onDisk: true });
    await other.handle.close();
    try {
      const result = await runCliInProcess(['queue', '--json'], { ...other.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's' });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('The job queue exists on a PostgreSQL server only (DATABASE_URL)');
    } finally {
      await other.drop();
    }
  }, 60_000);
});
