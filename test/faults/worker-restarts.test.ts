import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { canRunPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { collect, spawnCli } from '../helpers/run-cli.js';
import { writeAccountsFile } from '../helpers/test-context.js';
import { createMigratedDatabase, freePort, health, query, waitFor } from './fault-helpers.js';

// A `schedule` worker of three accounts on a PostgreSQL cluster of this file's own, restarted in
// the middle of a capture and again while the worker sleeps until its next slot.
let server: PrivatePostgres | undefined;
let sandbox: Sandbox;
let url: string;

beforeAll(async () => {
  server = await startPrivatePostgres();
  url = await createMigratedDatabase(server, 'wr_faults_worker');
  sandbox = await startSandbox({ port: 0, wallets: 30, seed: 11 });
});
afterAll(async () => {
  await sandbox?.close();
  server?.remove();
});

describe.skipIf(!canRunPrivatePostgres())('a schedule worker outlives PostgreSQL restarts', () => {
  it('survives a restart mid-capture and one during its sleep: every account captured exactly once, /healthz 503 while the database is down', async () => {
    const accountsFile = writeAccountsFile(['eu-main', 'us-main', 'apac'].map((name) => ({ name, apiKeyEnv: 'SANDBOX_KEY', apiSecretEnv: 'SANDBOX_SECRET' })));
    // Pages of 2 wallets at 150 ms each: a capture takes seconds, long enough to restart the server under it.
    sandbox.setFaults({ latencyMs: 150 });
    const metricsPort = await freePort();
    // A slot a minute ago with its cut-off at the same time: the window (±1 h) is open now.
    const slot = new Date(Date.now() - 60_000);
    const hh = String(slot.getUTCHours()).padStart(2, '0');
    const mm = String(slot.getUTCMinutes()).padStart(2, '0');
    const env = {
      DATABASE_URL: url,
      GATEWAY_ENV: 'sandbox',
      GATEWAY_SANDBOX_URL: sandbox.url,
      SANDBOX_KEY: sandbox.apiKey,
      SANDBOX_SECRET: sandbox.apiSecret,
      RECON_ACCOUNTS_FILE: accountsFile,
      GATEWAY_PER_PAGE: '2',
      GATEWAY_RETRY_BASE_DELAY_MS: '20',
      RECON_SCHEDULE: `${mm} ${hh} * * *`,
      RECON_CUTOFF: `${hh}:${mm}`,
      RECON_CAPTURE_WINDOW: '1h',
      RECON_RETRY_DELAYS: '2s',
      RECON_METRICS_PORT: String(metricsPort),
      DATABASE_CONNECT_TIMEOUT: '3s',
      LOG_LEVEL: 'info',
    };
    const started = Date.now();
    const worker: ChildProcess = spawnCli(['schedule'], env);
    const done = collect(worker);
    let stdout = '';
    worker.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    let stderr = '';
    worker.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      // 1. A restart while the first captures are under way.
      await waitFor(() => stdout.includes('"msg":"snapshot run started"'), 60_000, 'a capture to start');
      const restartAt = Date.now();
      server!.restart();
      const restartMs = Date.now() - restartAt;

      // 2. The night settles with all three captured; the worker sleeps until tomorrow's slot.
      await waitFor(() => /night of \d{4}-\d{2}-\d{2} settled/.test(stdout) && stdout.includes('next run at'), 90_000, 'the night to settle');
      const settledAfterMs = Date.now() - started;
      const metricsUrl = `http://127.0.0.1:${metricsPort}`;
      expect((await health(metricsUrl)).status).toBe(200);

      // 3. The server stops while the worker sleeps: unhealthy, then healthy again once it is back.
      server!.stop();
      await waitFor(async () => (await health(metricsUrl)).status === 503, 30_000, '/healthz to report the database down');
      const down = await health(metricsUrl);
      expect(JSON.parse(down.body)).toMatchObject({ ok: false, checks: { scheduler: 'ok' } });
      expect(JSON.parse(down.body).checks.database).not.toBe('ok');
      server!.start();
      const back = Date.now();
      await waitFor(async () => (await health(metricsUrl)).status === 200, 30_000, '/healthz to recover');
      const healthyAfterMs = Date.now() - back;
      expect(worker.exitCode).toBeNull();

      worker.kill('SIGTERM');
      const result = await done;
      expect(result.code, result.stderr).toBe(0);

      // By SQL: each account's date is captured, by exactly one succeeded end-of-day run, whole.
      const days = await query<{ account: string; status: string; attempts: number }>(url, 'select account, status, attempts from capture_days order by account');
      expect(days.map((d) => [d.account, d.status])).toEqual([
        ['apac', 'captured'],
        ['eu-main', 'captured'],
        ['us-main', 'captured'],
      ]);
      const succeeded = await query<{ account: string; n: string }>(url, `select account, count(*) as n from snapshot_runs where status = 'succeeded' and end_of_day group by account order by account`);
      expect(succeeded.map((r) => [r.account, Number(r.n)])).toEqual([
        ['apac', 1],
        ['eu-main', 1],
        ['us-main', 1],
      ]);
      const whole = await query<{ id: number; wallets_fetched: number; rows: string }>(
        url,
        `select r.id, r.wallets_fetched, (select count(*) from balance_snapshots s where s.run_id = r.id) as rows from snapshot_runs r where r.status = 'succeeded'`,
      );
      for (const run of whole) expect(Number(run.rows)).toBe(run.wallets_fetched);
      expect(whole.every((r) => r.wallets_fetched === 30)).toBe(true);
      // The runs the restart cut short: recorded failed, each naming the database (or its lock's session), none left running.
      const broken = await query<{ status: string; error: string }>(url, `select status, error from snapshot_runs where status <> 'succeeded' order by id`);
      expect(broken.length).toBeGreaterThanOrEqual(1);
      for (const run of broken) {
        expect(run.status).toMatch(/^(failed|abandoned)$/);
        expect(run.error).toMatch(/database/);
      }
      const missed = await query(url, 'select * from missed_dates');
      expect(missed).toEqual([]);
      console.log(
        `[faults] worker: restart took ${restartMs} ms; night settled ${settledAfterMs} ms after start with ${broken.length} interrupted run(s) (${broken.map((b) => b.error).join(' | ')}); healthy ${healthyAfterMs} ms after the server came back`,
      );
    } catch (error) {
      // What the worker said is what explains a failure here.
      console.error(`worker (exit ${worker.exitCode}, signal ${worker.signalCode}) output:\n${stdout.split('\n').slice(-60).join('\n')}\n${stderr.slice(-3000)}`);
      throw error;
    } finally {
      if (worker.exitCode === null) worker.kill('SIGKILL');
    }
  });
});
