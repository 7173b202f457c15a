import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import type { DatabaseHandle } from '../../src/db/open-database.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { insertRunningRun } from '../../src/db/snapshot-run.repository.js';
import { LOCK_SESSION_APPLICATION_NAME, tryAcquireAccountLock } from '../../src/snapshot/account-lock.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

let t: TestDatabase;
let sandbox: Sandbox;

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 23, seed: 7 });
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
});
beforeEach(async () => {
  sandbox.setFaults({ latencyMs: 0 });
  await t.handle.db.deleteFrom('balance_snapshots').execute();
  await t.handle.db.deleteFrom('snapshot_runs').execute();
});

const rowCount = async () => Number((await t.handle.db.selectFrom('balance_snapshots').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

describe.skipIf(backend !== 'postgres')('the account lock is fenced: a capture whose lock was taken over writes nothing', () => {
  let proxy: TcpProxy;
  afterAll(async () => proxy?.close());

  it('a capture whose lock session died unnoticed (a cut network) writes nothing once another worker holds the account', async () => {
    const url = new URL(t.childEnv.DATABASE_URL!);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const throughProxy = new URL(url.href);
    throughProxy.port = String(proxy.port);
    // Worker A: its lock session goes through the proxy, its pool straight to the server.
    const workerA: DatabaseHandle = {
      ...t.handle,
      description: `${t.handle.description} (worker A)`,
      async connectDedicated() {
        const client = new pg.Client({ connectionString: throughProxy.href, keepAlive: true, query_timeout: 2_000 });
        client.on('error', () => undefined);
        await client.connect();
        return client;
      },
    };
    // Worker B: another replica (its own name, so this process's in-process guard does not stand in for the database's lock).
    const workerB: DatabaseHandle = { ...t.handle, description: `${t.handle.description} (worker B)` };
    sandbox.setFaults({ latencyMs: 60 });
    const ctx = { ...createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '1', GATEWAY_CONCURRENCY: '1' })), database: workerA };
    let takeover: Promise<Awaited<ReturnType<typeof tryAcquireAccountLock>>> | undefined;
    const result = await runSnapshotJob(ctx, {
      trigger: 'manual',
      onProgress: (p) => {
        if (takeover || p.phase !== 'listing' || p.page?.page !== 2) return;
        // The network between A and its lock session goes silent, then the server ends that
        // session (as it does once keepalive gives up): A hears nothing; its lock is free.
        proxy.freeze();
        takeover = (async () => {
          await sql`select pg_terminate_backend(pid) from pg_stat_activity
            where application_name = ${LOCK_SESSION_APPLICATION_NAME} and datname = current_database()`.execute(t.handle.db);
          for (let i = 0; i < 100; i++) {
            const lock = await tryAcquireAccountLock(workerB, 'default');
            if (lock) return lock;
            await new Promise((r) => setTimeout(r, 20));
          }
          return undefined;
        })();
      },
    });
    const lockB = await takeover;
    try {
      expect(lockB, 'worker B took the account over').toBeDefined();
      expect(result.accounts[0]).toMatchObject({ status: 'failed' });
      expect(result.accounts[0]!.error).toMatch(/^the lock of account "default" was lost mid-run \(another process acquired it since/);
      expect(result.accounts[0]!.error).toMatch(/nothing was written$/);
      expect(await rowCount()).toBe(0);
      const runs = await t.handle.db.selectFrom('snapshot_runs').select(['status', 'error']).execute();
      expect(runs).toEqual([{ status: 'failed', error: result.accounts[0]!.error }]);
    } finally {
      await lockB?.release();
    }
  });

  it('a capture that keeps its lock writes, and each acquisition bumps the account fence', async () => {
    const ctx = createTestContext(t, sandboxEnv(sandbox));
    const fence = async () => (await t.handle.db.selectFrom('account_lock_fences').select('fence').where('account', '=', 'default').executeTakeFirst())?.fence;
    const before = Number((await fence()) ?? 0);
    const result = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(result.accounts[0]).toMatchObject({ status: 'succeeded', walletsFetched: 23 });
    expect(await rowCount()).toBe(23);
    expect(Number(await fence())).toBe(before + 1);
  });
});

describe(`the write re-asserts the lock and its run in one step (${backend})`, () => {
  const startRun = () =>
    insertRunningRun(t.handle.db, {
      account: 'fenced-run',
      environment: 'sandbox',
      trigger: 'manual',
      businessDate: '2026-12-01',
      startedAt: new Date('2026-12-01T12:00:00Z'),
      timing: { cutoffAt: new Date('2026-12-01T23:00:00Z'), driftSeconds: -39_600, endOfDay: false },
    });

  it('goes ahead while the lock is held and the run is running, with the run row locked until the write ends', async () => {
    const lock = (await tryAcquireAccountLock(t.handle, 'fenced-run'))!;
    try {
      const runId = await startRun();
      await t.handle.db.transaction().execute(async (trx) => {
        await lock.assertHeld(trx, runId);
        const { rows } = await sql<{ status: string }>`select status from snapshot_runs where id = ${runId}`.execute(trx);
        expect(rows[0]?.status).toBe('running');
      });
    } finally {
      await lock.release();
    }
  });

  it('refuses a run someone else closed meanwhile, naming its status, so nothing of it is written', async () => {
    const lock = (await tryAcquireAccountLock(t.handle, 'fenced-run'))!;
    try {
      const runId = await startRun();
      await sql`update snapshot_runs set status = 'abandoned', finished_at = now(), error = 'marked by hand' where id = ${runId}`.execute(t.handle.db);
      await expect(t.handle.db.transaction().execute((trx) => lock.assertHeld(trx, runId))).rejects.toThrow(
        `run ${runId} is no longer running (it is marked abandoned): another process took over this account, so this run's balances were not written`,
      );
    } finally {
      await lock.release();
    }
  });

  it('refuses a released lock before it looks at the run', async () => {
    const lock = (await tryAcquireAccountLock(t.handle, 'fenced-run'))!;
    const runId = await startRun();
    await lock.release();
    await expect(t.handle.db.transaction().execute((trx) => lock.assertHeld(trx, runId))).rejects.toThrow('the lock of account "fenced-run" was lost mid-run (it was released); nothing was written');
  });
});
