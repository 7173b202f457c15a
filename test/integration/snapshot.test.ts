import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import { listSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { systemClock } from '../../src/clock.js';
import { ConfigError } from '../../src/errors.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { tryAcquireAccountLock } from '../../src/snapshot/account-lock.js';
import { startGatewayCapture } from '../../src/snapshot/gateway-capture.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { createTestContext, sandboxEnv, writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

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
  sandbox.setFaults({ latencyMs: 0, failRate: 0, rateLimit: 0, dropRate: 0 });
  // Each test starts from an empty ledger.
  await t.handle.db.deleteFrom('balance_snapshots').execute();
  await t.handle.db.deleteFrom('snapshot_runs').execute();
});

async function runs() {
  return t.handle.db.selectFrom('snapshot_runs').selectAll().orderBy('id').execute();
}
async function snapshotRowCount() {
  const row = await t.handle.db.selectFrom('balance_snapshots').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe(`snapshot run (${backend} database, emulator)`, () => {
  it('writes exactly the emulator balances, 2^53+1 included, with one succeeded run', async () => {
    const ctx = createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '5' }));
    const result = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(result.exitCode).toBe(0);
    const [run] = await runs();
    expect(run).toMatchObject({ status: 'succeeded', trigger: 'manual', account: 'default', environment: 'sandbox', wallets_reported: 23, wallets_fetched: 23, pages_fetched: 5, error: null });
    expect(run!.requests).toBeGreaterThanOrEqual(1 + 5 + 23);
    const rows = await listSnapshotRows(t.handle.db, run!.id);
    expect(rows.map((r) => [r.currency, r.balance])).toEqual(sandbox.wallets.map((w) => [w.currency, w.balance]));
    expect(rows.every((r) => r.singleBalance === r.balance)).toBe(true);
    expect(rows.some((r) => r.balance === 9007199254740993n)).toBe(true);
  });

  it('reports the duration it stored (finished_at - started_at), succeeded or failed, not a second reading of the time', async () => {
    // A clock that moves 1.5 s per reading: the stored duration is whole readings, far from the real milliseconds.
    let readings = 0;
    const stepping = { now: () => new Date(Date.parse('2026-11-20T10:00:00Z') + 1_500 * readings++), sleep: systemClock.sleep };
    const ok = await runSnapshotJob(createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '5' }), { clock: stepping }), { trigger: 'manual' });
    const failed = await runSnapshotJob(createTestContext(t, sandboxEnv(sandbox, { GATEWAY_API_SECRET: 'not-the-secret' }), { clock: stepping }), { trigger: 'manual' });
    const [first, second] = await runs();
    expect(ok.accounts[0]!.durationMs).toBe(first!.finished_at!.getTime() - first!.started_at.getTime());
    expect(failed.accounts[0]!.status).toBe('failed');
    expect(failed.accounts[0]!.durationMs).toBe(second!.finished_at!.getTime() - second!.started_at.getTime());
    expect(ok.accounts[0]!.durationMs).toBeGreaterThanOrEqual(1_500);
  });

  it.each([1, 7, 100])('captures the same balances whatever GATEWAY_PER_PAGE is (%i)', async (perPage) => {
    const ctx = createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: String(perPage) }));
    const result = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(result.accounts[0]).toMatchObject({ status: 'succeeded', walletsFetched: 23, pagesFetched: Math.ceil(23 / perPage) });
    const rows = await listSnapshotRows(t.handle.db, result.accounts[0]!.runId!);
    expect(rows.map((r) => [r.currency, r.balance])).toEqual(sandbox.wallets.map((w) => [w.currency, w.balance]));
  });

  it('records the scale of each balance as the gateway unit is configured, and keeps a code whose decimals are unknown raw and flagged', async () => {
    sandbox.addWallet('IDR', 1_500_000n);
    try {
      const whole = await runSnapshotJob(createTestContext(t, sandboxEnv(sandbox, { GATEWAY_AMOUNT_DECIMALS_IDR: '0' })), { trigger: 'manual' });
      expect(whole.accounts[0]?.error).toBeUndefined();
      const rows = await listSnapshotRows(t.handle.db, whole.accounts[0]!.runId!);
      expect(rows.find((r) => r.currency === 'IDR')).toMatchObject({ balance: 1_500_000n, scale: 0 });
      expect(rows.find((r) => r.currency === 'JPY')).toMatchObject({ scale: 0 });
      expect(rows.find((r) => r.currency === 'EUR')).toMatchObject({ scale: 2 });
      // The default unit: ISO 4217 minor units, IDR with 2 decimals (Intl said 0).
      const iso = await runSnapshotJob(createTestContext(t, sandboxEnv(sandbox)), { trigger: 'manual' });
      expect((await listSnapshotRows(t.handle.db, iso.accounts[0]!.runId!)).find((r) => r.currency === 'IDR')).toMatchObject({ scale: 2 });
      // Per account in the accounts file: major units for all, IDR still its own.
      const accountsFile = writeAccountsFile([{ name: 'whole', apiKeyEnv: 'W_KEY', apiSecretEnv: 'W_SECRET', amountUnit: 'major', amountDecimals: { KWD: 3 } }]);
      const perAccount = await runSnapshotJob(
        createTestContext(t, { GATEWAY_ENV: 'sandbox', GATEWAY_SANDBOX_URL: sandbox.url, RECON_ACCOUNTS_FILE: accountsFile, W_KEY: sandbox.apiKey, W_SECRET: sandbox.apiSecret }),
        { trigger: 'manual' },
      );
      const scales = Object.fromEntries((await listSnapshotRows(t.handle.db, perAccount.accounts[0]!.runId!)).map((r) => [r.currency, r.scale]));
      expect([scales.EUR, scales.IDR, scales.JPY]).toEqual([0, 0, 0]);
    } finally {
      sandbox.removeWallet('IDR');
    }
    sandbox.addWallet('QQQ', 5n);
    try {
      // An unknown code no longer fails the account's run: it is kept as the raw integer, without a scale, and flagged.
      const flagged = await runSnapshotJob(createTestContext(t, sandboxEnv(sandbox)), { trigger: 'manual' });
      expect(flagged.accounts[0]).toMatchObject({ status: 'succeeded' });
      expect(flagged.accounts[0]!.warning).toMatch(/QQQ has no known decimals.*set GATEWAY_AMOUNT_DECIMALS_QQQ/);
      expect((await listSnapshotRows(t.handle.db, flagged.accounts[0]!.runId!)).find((r) => r.currency === 'QQQ')).toMatchObject({ balance: 5n, scale: null });
      const configured = await runSnapshotJob(createTestContext(t, sandboxEnv(sandbox, { GATEWAY_AMOUNT_DECIMALS_QQQ: '0' })), { trigger: 'manual' });
      expect((await listSnapshotRows(t.handle.db, configured.accounts[0]!.runId!)).find((r) => r.currency === 'QQQ')).toMatchObject({ balance: 5n, scale: 0 });
    } finally {
      sandbox.removeWallet('QQQ');
    }
  });

  it('still captures exactly under 5xx bursts, dropped connections and rate limiting', async () => {
    sandbox.setFaults({ failRate: 0.2, dropRate: 0.05, rateLimit: 200 });
    const ctx = createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '4', GATEWAY_RETRY_ATTEMPTS: '8', GATEWAY_MAX_RETRY_AFTER_MS: '2000' }));
    const result = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(result.accounts[0]?.error).toBeUndefined();
    const rows = await listSnapshotRows(t.handle.db, result.accounts[0]!.runId!);
    expect(rows.map((r) => [r.currency, r.balance])).toEqual(sandbox.wallets.map((w) => [w.currency, w.balance]));
  });

  it('a failed run leaves no rows, records the reason and never touches earlier snapshots', async () => {
    const good = await runSnapshotJob(createTestContext(t, sandboxEnv(sandbox)), { trigger: 'manual' });
    const before = await listSnapshotRows(t.handle.db, good.accounts[0]!.runId!);
    const logs = captureLogs();
    const ctx = createTestContext(t, { ...sandboxEnv(sandbox), GATEWAY_API_SECRET: 'wrong-secret-value' }, { logger: logs.logger });
    const result = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(result.exitCode).toBe(1);
    const all = await runs();
    expect(all.map((r) => r.status)).toEqual(['succeeded', 'failed']);
    expect(all[1]!.error).toMatch(/refused/i);
    expect(all[1]!.finished_at).not.toBeNull();
    expect(await listSnapshotRows(t.handle.db, all[1]!.id)).toEqual([]);
    expect(await listSnapshotRows(t.handle.db, good.accounts[0]!.runId!)).toEqual(before);
    expect(logs.text()).not.toContain('wrong-secret-value');
    expect(logs.text()).not.toContain(sandbox.apiSecret);
  });

  it('keeps one account failing from stopping the others', async () => {
    const file = writeAccountsFile([
      { name: 'eu-main', apiKeyEnv: 'EU_KEY', apiSecretEnv: 'EU_SECRET' },
      { name: 'us-broken', apiKeyEnv: 'US_KEY', apiSecretEnv: 'US_SECRET' },
      { name: 'apac', apiKeyEnv: 'EU_KEY', apiSecretEnv: 'EU_SECRET' },
    ]);
    const multi = createTestContext(t, {
      GATEWAY_SANDBOX_URL: sandbox.url,
      RECON_ACCOUNTS_FILE: file,
      EU_KEY: sandbox.apiKey,
      EU_SECRET: sandbox.apiSecret,
      US_KEY: sandbox.apiKey,
      US_SECRET: 'not-the-secret',
    });
    const result = await runSnapshotJob(multi, { trigger: 'manual' });
    expect(result.exitCode).toBe(1);
    expect(Object.fromEntries(result.accounts.map((a) => [a.account, a.status]))).toEqual({ 'eu-main': 'succeeded', 'us-broken': 'failed', apac: 'succeeded' });
    expect(await snapshotRowCount()).toBe(46);
  });

  it.skipIf(backend !== 'postgres')('fails without writing when its lock session dies mid-run', async () => {
    sandbox.setFaults({ latencyMs: 40 });
    const ctx = createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '1', GATEWAY_CONCURRENCY: '1' }));
    let killed = false;
    const result = await runSnapshotJob(ctx, {
      trigger: 'manual',
      onProgress: (p) => {
        if (killed || p.phase !== 'listing' || p.page?.page !== 2) return;
        killed = true;
        // As if the network dropped the lock's session: the advisory lock is gone with it. Only
        // this file's database: other test files run beside it on the same server.
        void sql`select pg_terminate_backend(l.pid) from pg_locks l join pg_stat_activity a on a.pid = l.pid
          where l.locktype = 'advisory' and a.datname = current_database() and l.pid <> pg_backend_pid()`.execute(t.handle.db);
      },
    });
    expect(result.accounts[0]).toMatchObject({ status: 'failed' });
    expect(result.accounts[0]!.error).toMatch(/lock of account "default" was lost mid-run/);
    expect(await snapshotRowCount()).toBe(0);
  });

  it('marks a run interrupted when the stop signal comes mid-run, writing nothing', async () => {
    sandbox.setFaults({ latencyMs: 50 });
    const controller = new AbortController();
    const ctx = createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '1', GATEWAY_CONCURRENCY: '1' }));
    const pending = runSnapshotJob(ctx, { trigger: 'manual', signal: controller.signal, onProgress: (p) => p.phase === 'listing' && p.page?.page === 3 && controller.abort() });
    const result = await pending;
    expect(result.accounts[0]).toMatchObject({ status: 'failed', error: 'interrupted' });
    expect((await runs())[0]).toMatchObject({ status: 'failed', error: 'interrupted' });
    expect(await snapshotRowCount()).toBe(0);
  });
});

describe(`gateway reads started before the run (${backend}): what a manual snapshot does while the database opens`, () => {
  it('the run takes the capture under way: it starts when the capture did and writes what the capture read', async () => {
    const ctx = createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '5' }));
    const account = ctx.config.accounts[0]!;
    sandbox.setFaults({ latencyMs: 20 });
    const begun = Date.now();
    const capture = startGatewayCapture(ctx.config, account, { clock: ctx.clock, logger: ctx.logger });
    // Every read is back before the run is even recorded.
    await capture.balances;
    const readingMs = Date.now() - begun;
    const result = await runSnapshotJob(ctx, { trigger: 'manual', started: new Map([[account.name, capture]]) });
    expect(result.accounts[0]).toMatchObject({ status: 'succeeded', walletsFetched: 23, pagesFetched: 5, requests: 1 + 5 + 23 });
    // Its duration counts the reads made before it was recorded, as its start does.
    expect(result.accounts[0]!.durationMs).toBeGreaterThanOrEqual(readingMs);
    const [run] = await runs();
    expect(run!.started_at).toEqual(capture.startedAt);
    const rows = await listSnapshotRows(t.handle.db, run!.id);
    expect(rows.map((r) => [r.currency, r.balance])).toEqual(sandbox.wallets.map((w) => [w.currency, w.balance]));
  });

  it('a run that does not go ahead (another run holds the account) aborts the reads under way and records nothing', async () => {
    sandbox.setFaults({ latencyMs: 50 });
    const ctx = createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '1', GATEWAY_CONCURRENCY: '1' }));
    const account = ctx.config.accounts[0]!;
    const held = await tryAcquireAccountLock(t.handle, account.name);
    try {
      const capture = startGatewayCapture(ctx.config, account, { clock: ctx.clock, logger: ctx.logger });
      const result = await runSnapshotJob(ctx, { trigger: 'manual', started: new Map([[account.name, capture]]) });
      expect(result.accounts[0]).toMatchObject({ status: 'skipped', skipReason: 'locked' });
      expect(capture.signal.aborted).toBe(true);
      await expect(capture.balances).rejects.toBeInstanceOf(Error);
      expect(await runs()).toEqual([]);
      expect(await snapshotRowCount()).toBe(0);
    } finally {
      await held!.release();
    }
  });

  it('a capture that cannot start is the failure of the run that claims it, recorded, writing nothing', async () => {
    const ctx = createTestContext(t, sandboxEnv(sandbox));
    const account = ctx.config.accounts[0]!;
    const capture = startGatewayCapture(ctx.config, account, {
      clock: ctx.clock,
      logger: ctx.logger,
      createGateway: () => {
        throw new ConfigError('the gateway client could not be built');
      },
    });
    const result = await runSnapshotJob(ctx, { trigger: 'manual', started: new Map([[account.name, capture]]) });
    expect(result.accounts[0]).toMatchObject({ status: 'failed', requests: 0, error: 'the gateway client could not be built' });
    expect((await runs())[0]).toMatchObject({ status: 'failed', error: 'the gateway client could not be built' });
    expect(await snapshotRowCount()).toBe(0);
  });
});

describe(`snapshot run against a misbehaving gateway (${backend})`, () => {
  let server: Server;
  let url: string;
  type Answer = { status: number; body: string; headers?: Record<string, string> };
  let respond: (path: string) => Answer;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.method === 'POST' && req.url === '/v1/auth/token') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 200, status: 'success', message: 'ok', data: { access_token: 'tok-abc', expires_in: 3600 } }));
        return;
      }
      const answer = respond(req.url ?? '/');
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const envelope = (data: string) => `{"code":200,"status":"success","message":"done","data":${data}}`;
  const cases: Array<[string, (path: string) => Answer, RegExp]> = [
    ['malformed JSON', () => ({ status: 200, body: '{"code":200,"status":"succ' }), /JSON|format/i],
    ['a wrong envelope', () => ({ status: 200, body: '{"ok":true,"wallets":[]}' }), /format|envelope|status/i],
    ['a bad currency', () => ({ status: 200, body: envelope('[{"currency":"usd","balance":1}]') }), /currency/i],
    ['a non-integer balance', () => ({ status: 200, body: envelope('[{"currency":"USD","balance":1.5}]') }), /balance/i],
    ['a conflicting duplicate', (p): Answer => (p.includes('page=2')
      ? { status: 200, body: envelope('[{"currency":"USD","balance":2}]'), headers: { 'x-ph-total': '2', 'x-ph-totalpages': '2' } }
      : { status: 200, body: envelope('[{"currency":"USD","balance":1}]'), headers: { 'x-ph-total': '2', 'x-ph-totalpages': '2', link: '</v1/data/wallets/balances?page=2>; rel="next"' } }), /USD/],
    ['a foreign next link', () => ({ status: 200, body: envelope('[{"currency":"USD","balance":1}]'), headers: { link: '<https://evil.example.com/v1/data/wallets/balances?page=2>; rel="next"' } }), /origin|evil/i],
    ['an empty list without X-PH-Total', () => ({ status: 200, body: envelope('[]') }), /no wallets/],
    ['a cycle through a reordered query', (p): Answer => (p.includes('page=2')
      ? { status: 200, body: envelope('[{"currency":"EUR","balance":2}]'), headers: { link: '</v1/data/wallets/balances?page=1&per_page=100>; rel="next"' } }
      : { status: 200, body: envelope('[{"currency":"USD","balance":1}]'), headers: { link: '</v1/data/wallets/balances?per_page=100&page=2>; rel="next"' } }), /loops/],
    ['a cycle', () => ({ status: 200, body: envelope('[{"currency":"USD","balance":1}]'), headers: { link: '</v1/data/wallets/balances?per_page=100>; rel="next"' } }), /loops/],
    ['a total that does not add up', () => ({ status: 200, body: envelope('[{"currency":"USD","balance":1}]'), headers: { 'x-ph-total': '5', 'x-ph-totalpages': '1' } }), /total|5/i],
    ['a 404 on the list', () => ({ status: 404, body: '{"code":404,"status":"error","message":"no"}' }), /404/],
  ];

  it.each(cases)('leaves no rows and one failed run with a message on %s', async (_name, handler, message) => {
    await t.handle.db.deleteFrom('balance_snapshots').execute();
    await t.handle.db.deleteFrom('snapshot_runs').execute();
    respond = handler;
    const logs = captureLogs();
    const ctx = createTestContext(t, { GATEWAY_SANDBOX_URL: url, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 'secret-xyz', GATEWAY_RETRY_ATTEMPTS: '0' }, { logger: logs.logger });
    const result = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(result.exitCode).toBe(1);
    const all = await runs();
    expect(all).toHaveLength(1);
    expect(all[0]!.status).toBe('failed');
    expect(all[0]!.error).toMatch(message);
    expect(await snapshotRowCount()).toBe(0);
    for (const secret of ['secret-xyz', 'tok-abc']) {
      expect(all[0]!.error).not.toContain(secret);
      expect(logs.text()).not.toContain(secret);
    }
  });
});
