import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { LOCK_SESSION_APPLICATION_NAME } from '../../src/snapshot/account-lock.js';
import { canRunPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { collect, spawnCli } from '../helpers/run-cli.js';
import { createMigratedDatabase, query, waitFor } from './fault-helpers.js';

let server: PrivatePostgres | undefined;
let sandbox: Sandbox;
let url: string;

beforeAll(async () => {
  server = await startPrivatePostgres();
  url = await createMigratedDatabase(server, 'wr_faults_lock');
  sandbox = await startSandbox({ port: 0, wallets: 30, seed: 5 });
});
afterAll(async () => {
  await sandbox?.close();
  server?.remove();
});

describe.skipIf(!canRunPrivatePostgres())('a capture whose lock session is terminated mid-run', () => {
  it('writes nothing while a second worker captures the account (built CLI, two processes)', async () => {
    // One wallet a page at 120 ms: the first capture is mid-listing for seconds.
    sandbox.setFaults({ latencyMs: 120 });
    const env = {
      DATABASE_URL: url,
      GATEWAY_ENV: 'sandbox',
      GATEWAY_SANDBOX_URL: sandbox.url,
      GATEWAY_API_KEY: sandbox.apiKey,
      GATEWAY_API_SECRET: sandbox.apiSecret,
      GATEWAY_PER_PAGE: '1',
      LOG_LEVEL: 'info',
    };
    const first = spawnCli(['snapshot'], env);
    const firstDone = collect(first);
    let firstLog = '';
    first.stderr?.on('data', (d: Buffer) => (firstLog += d.toString()));
    await waitFor(() => firstLog.includes('"msg":"snapshot run started"'), 60_000, 'the first capture to start');
    await new Promise((r) => setTimeout(r, 500));
    // The lock's session dies under the first capture: terminated on the server, as a failover does.
    const terminated = await query<{ pid: number }>(url, `select pid, pg_terminate_backend(pid) from (select pid from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid() offset 0) lock_sessions`, [LOCK_SESSION_APPLICATION_NAME]);
    expect(terminated).toHaveLength(1);
    const second = collect(spawnCli(['snapshot'], env));
    const [a, b] = await Promise.all([firstDone, second]);

    expect(a.code, a.stderr).toBe(1);
    console.log(`[faults] first snapshot's output: ${a.stdout.trim()}`);
    expect(a.stdout + a.stderr).toMatch(/the lock of account "default" was lost mid-run \(the database session holding account locks ended \(terminating connection due to administrator command\)\); nothing was written/);
    expect(b.code, b.stderr).toBe(0);
    const runs = await query<{ id: number; status: string; error: string | null; wallets_fetched: number | null; rows: string }>(
      url,
      `select r.id, r.status, r.error, r.wallets_fetched, (select count(*) from balance_snapshots s where s.run_id = r.id) as rows from snapshot_runs r order by r.id`,
    );
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatchObject({ status: 'failed', rows: '0' });
    expect(runs[0]!.error).toMatch(/lock of account "default" was lost mid-run/);
    expect(runs[1]).toMatchObject({ status: 'succeeded', wallets_fetched: 30, rows: '30' });
    console.log(`[faults] lock takeover: first run ${runs[0]!.status} with ${runs[0]!.rows} rows ("${runs[0]!.error}"), second run ${runs[1]!.status} with ${runs[1]!.rows} rows`);
  });
});
