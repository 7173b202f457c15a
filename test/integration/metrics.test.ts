import PgBoss from 'pg-boss';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { businessCalendarOf } from '../../src/config/index.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { enqueueEvent } from '../../src/notifications/outbox.js';
import { checkHealth, startMetricsServer, type MetricsServer } from '../../src/metrics/metrics-server.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { createSilentLogger } from '../../src/logger.js';
import { ConfigError } from '../../src/errors.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { parsePrometheus, samplesOf, type Sample } from '../helpers/receivers.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let sandbox: Sandbox;
const servers: MetricsServer[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 5 });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await sandbox?.close();
  await t?.drop();
});
beforeEach(async () => {
  for (const table of ['notifications', 'reconciliation_results', 'balance_snapshots', 'snapshot_runs', 'reconciliation_owed'] as const) await t.handle.db.deleteFrom(table).execute();
});

async function serve(metrics: Metrics, health = () => checkHealth(t.handle.db, () => true)): Promise<MetricsServer> {
  const server = await startMetricsServer({ host: '127.0.0.1', port: 0, metrics, health, logger: createSilentLogger() });
  servers.push(server);
  return server;
}

async function scrape(server: MetricsServer): Promise<Sample[]> {
  const response = await fetch(`${server.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return parsePrometheus(await response.text());
}

function withMetrics(perAccount: boolean, env: Record<string, string> = {}): { ctx: AppContext; metrics: Metrics } {
  const base = createTestContext(t, sandboxEnv(sandbox, { GATEWAY_PER_PAGE: '2', ...env }));
  const metrics = new Metrics({ perAccount, accounts: ['default'], processDefaults: true, db: t.handle.db });
  return { ctx: { ...base, metrics }, metrics };
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) => samplesOf(samples, name, labels).map((s) => s.value);

describe(`/metrics and /healthz on the ${backend} database`, () => {
  it('shows a capture run while it runs and after it, with the last success of the account to the millisecond', async () => {
    const { ctx, metrics } = withMetrics(true);
    const server = await serve(metrics);
    let during: Promise<Sample[]> | undefined;
    const result = await runSnapshotJob(ctx, {
      trigger: 'manual',
      // Scraped from inside the run, after its first page: deterministic, no timer.
      onProgress: (p) => void (during ??= p.phase === 'listing' ? scrape(server) : undefined),
    });
    expect(result.accounts[0]!.status).toBe('succeeded');

    const midRun = await during!;
    expect(value(midRun, 'wallet_recon_gateway_requests_total', { endpoint: 'token', status_class: '2xx' })).toEqual([1]);
    expect(value(midRun, 'wallet_recon_runs_total')).toEqual([]);
    expect(value(midRun, 'wallet_recon_notifications_pending')).toEqual([0]);
    expect(samplesOf(midRun, 'process_resident_memory_bytes')).toHaveLength(1);

    const after = await scrape(server);
    const [run] = await t.handle.db.selectFrom('snapshot_runs').select(['finished_at']).execute();
    expect(value(after, 'wallet_recon_last_success_timestamp_seconds', { account: 'default' })).toEqual([run!.finished_at!.getTime() / 1000]);
    expect(value(after, 'wallet_recon_runs_total', { trigger: 'manual', status: 'succeeded' })).toEqual([1]);
    expect(value(after, 'wallet_recon_run_duration_seconds_count', { trigger: 'manual' })).toEqual([1]);
    // 5 wallets at 2 a page: 3 pages of the listing.
    expect(value(after, 'wallet_recon_gateway_requests_total', { endpoint: 'balances', status_class: '2xx' })[0]).toBeGreaterThanOrEqual(3);
    expect(value(after, 'wallet_recon_reconciliation_results')).toEqual([]);

    // Reconciled just after its cut-off (no date is reconciled before), before any books: awaited.
    const date = (await t.handle.db.selectFrom('snapshot_runs').select('business_date').executeTakeFirstOrThrow()).business_date;
    const afterCutoff = new FixedClock(new Date(businessCalendarOf(ctx.config).cutoffOf(date).getTime() + 60_000));
    await runReconcileJob({ ...ctx, clock: afterCutoff }, { date });
    await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'x' }, 'k', new Date(0));
    const reconciled = await scrape(server);
    expect(value(reconciled, 'wallet_recon_reconciliation_results', { status: 'awaiting_books', account: 'default' })).toEqual([5]);
    expect(value(reconciled, 'wallet_recon_reconciliation_results', { status: 'matched', account: 'default' })).toEqual([0]);
    expect(value(reconciled, 'wallet_recon_reconciliation_business_date_seconds')).toHaveLength(1);
    expect(value(reconciled, 'wallet_recon_notifications_pending')).toEqual([0]);
  });

  it('counts gateway captures only in the last success: a statement import finished later does not move it', async () => {
    const { ctx, metrics } = withMetrics(true);
    const server = await serve(metrics);
    expect((await runSnapshotJob(ctx, { trigger: 'manual' })).accounts[0]!.status).toBe('succeeded');
    const [captured] = await t.handle.db.selectFrom('snapshot_runs').select(['finished_at']).execute();
    // A backfill from statements an hour later, as `backfill --from-statements` records it.
    const later = new Date(captured!.finished_at!.getTime() + 3_600_000);
    const timing = { cutoffAt: later, driftSeconds: 0, endOfDay: true };
    const imported = await insertRunningRun(t.handle.db, { account: 'default', environment: 'sandbox', trigger: 'backfill', businessDate: '2026-10-01', startedAt: later, source: 'statements.csv', timing });
    await markRunSucceeded(t.handle.db, imported, later, { walletsReported: null, walletsFetched: 1, pagesFetched: 0, requests: 0 });
    expect(value(await scrape(server), 'wallet_recon_last_success_timestamp_seconds', { account: 'default' })).toEqual([captured!.finished_at!.getTime() / 1000]);

    // Statements alone: no capture from the gateway has succeeded, so no series.
    await t.handle.db.deleteFrom('balance_snapshots').execute();
    await t.handle.db.deleteFrom('snapshot_runs').where('source', 'is', null).execute();
    expect(value(await scrape(server), 'wallet_recon_last_success_timestamp_seconds', { account: 'default' })).toEqual([]);
  });

  it('counts pending notifications and gateway failures by status class, with no label beyond the bounded sets', async () => {
    const { ctx, metrics } = withMetrics(true, { RECON_WEBHOOK_URL: 'https://hooks.example.test/x', RECON_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}` });
    const server = await serve(metrics);
    await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'x' }, 'k', new Date(0));
    sandbox.setFaults({ failRate: 1 });
    try {
      const result = await runSnapshotJob(ctx, { trigger: 'manual' });
      expect(result.accounts[0]!.status).toBe('failed');
    } finally {
      sandbox.setFaults({ failRate: 0 });
    }
    const samples = await scrape(server);
    expect(value(samples, 'wallet_recon_notifications_pending')).toEqual([1]);
    expect(value(samples, 'wallet_recon_runs_total', { trigger: 'manual', status: 'failed' })).toEqual([1]);
    expect(samplesOf(samples, 'wallet_recon_gateway_requests_total').every((s) => /^(token|balances|other)$/.test(s.labels.endpoint!) && /^([1-5]xx|network)$/.test(s.labels.status_class!))).toBe(true);
    expect(value(samples, 'wallet_recon_gateway_requests_total', { status_class: '5xx' }).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const own = samples.filter((s) => s.name.startsWith('wallet_recon_'));
    const labelNames = new Set(own.flatMap((s) => Object.keys(s.labels)));
    expect([...labelNames].sort()).toEqual(['account', 'channel', 'decision', 'endpoint', 'le', 'status', 'status_class', 'trigger'].filter((l) => labelNames.has(l)));
    // The notification decisions (issue 45) are labelled by channel and decision, both closed sets.
    expect(samplesOf(samples, 'wallet_recon_notifications_total').every((s) => /^(webhook|slack|email)$/.test(s.labels.channel!) && /^(sent|folded|repeat|snoozed|quiet|immaterial)$/.test(s.labels.decision!))).toBe(true);
    expect(labelNames.has('currency') || labelNames.has('run_id')).toBe(false);
  });

  it('drops the account label with RECON_METRICS_PER_ACCOUNT=false: the last success is the stalest account\'s', async () => {
    const { ctx, metrics } = withMetrics(false);
    const server = await serve(metrics);
    await runSnapshotJob(ctx, { trigger: 'manual' });
    metrics.recordMissedDate('default');
    const samples = await scrape(server);
    const [run] = await t.handle.db.selectFrom('snapshot_runs').select(['finished_at']).execute();
    expect(samplesOf(samples, 'wallet_recon_last_success_timestamp_seconds')).toEqual([{ name: 'wallet_recon_last_success_timestamp_seconds', labels: {}, value: run!.finished_at!.getTime() / 1000 }]);
    expect(samplesOf(samples, 'wallet_recon_missed_dates_total')).toEqual([{ name: 'wallet_recon_missed_dates_total', labels: {}, value: 1 }]);
    expect(samples.some((s) => 'account' in s.labels)).toBe(false);
  });

  it('answers /healthz 200 while the scheduler and the database live, 503 when either is gone', async () => {
    const other = await createTestDatabase();
    let schedulerAlive = true;
    const metrics = new Metrics({ perAccount: true, accounts: ['default'], processDefaults: false, db: other.handle.db });
    const server = await serve(metrics, () => checkHealth(other.handle.db, () => schedulerAlive));
    const health = async () => {
      const response = await fetch(`${server.url}/healthz`);
      return { status: response.status, body: (await response.json()) as { ok: boolean; checks: Record<string, string> } };
    };
    expect(await health()).toEqual({ status: 200, body: { ok: true, checks: { scheduler: 'ok', database: 'ok' } } });
    schedulerAlive = false;
    expect(await health()).toEqual({ status: 503, body: { ok: false, checks: { scheduler: 'stopped', database: 'ok' } } });
    schedulerAlive = true;

    await other.drop();
    const gone = await health();
    expect(gone.status).toBe(503);
    expect(gone.body.checks.scheduler).toBe('ok');
    expect(gone.body.checks.database).not.toBe('ok');
    // /metrics still answers (process metrics) while the database is away.
    expect(samplesOf(await scrape(server), 'wallet_recon_notifications_pending')).toHaveLength(1);
    expect((await fetch(`${server.url}/nothing`)).status).toBe(404);
  });

  it.runIf(backend === 'postgres')('exports each job queue\'s depth and how long its longest-due job has waited', async () => {
    const boss = new PgBoss({ connectionString: t.childEnv.DATABASE_URL!, schema: 'pgboss', migrate: false, supervise: false, schedule: false, max: 1 });
    boss.on('error', () => undefined);
    try {
      await boss.start();
      const due = new Date(Date.now() - 90_000);
      await boss.send('capture', { account: 'a', businessDate: '2026-11-20', slot: due.toISOString(), attempt: 1 }, { singletonKey: 'a|2026-11-20', startAfter: due });
      await boss.send('capture', { account: 'b', businessDate: '2026-11-20', slot: due.toISOString(), attempt: 1 }, { singletonKey: 'b|2026-11-20', startAfter: new Date(Date.now() + 3_600_000) });
      const metrics = new Metrics({ perAccount: false, accounts: [], processDefaults: false, db: t.handle.db, queueSchema: 'pgboss' });
      const samples = await scrape(await serve(metrics));
      expect(value(samples, 'wallet_recon_queue_depth', { queue: 'capture' })).toEqual([2]);
      expect(value(samples, 'wallet_recon_queue_depth', { queue: 'settle-date' })).toEqual([0]);
      const oldest = value(samples, 'wallet_recon_queue_oldest_waiting_seconds', { queue: 'capture' })[0]!;
      expect(oldest).toBeGreaterThanOrEqual(89);
      expect(oldest).toBeLessThan(200);
      expect(value(samples, 'wallet_recon_queue_oldest_waiting_seconds', { queue: 'settle-date' })).toEqual([0]);
    } finally {
      await t.handle.db.executeQuery(sql`delete from pgboss.job`.compile(t.handle.db));
      await boss.stop({ graceful: false });
    }
  });

  it('says which port is taken instead of failing obscurely', async () => {
    const metrics = new Metrics({ perAccount: true, accounts: [], processDefaults: false, db: t.handle.db });
    const first = await serve(metrics);
    const port = Number(new URL(first.url).port);
    // A second worker on the same host: a setting to change (exit 2) naming the variable.
    const refused = await startMetricsServer({ host: '127.0.0.1', port, metrics, health: () => checkHealth(t.handle.db, () => true), logger: createSilentLogger() }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).exitCode).toBe(2);
    expect((refused as ConfigError).message).toBe(
      `RECON_METRICS_PORT: port ${port} on 127.0.0.1 is already in use (another worker on this host?). Give each worker on a host its own RECON_METRICS_PORT, or leave it unset for no metrics endpoint.`,
    );
    await first.close();
  });
});
