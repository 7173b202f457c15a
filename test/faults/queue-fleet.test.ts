import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { canRunPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { collect, runCliProcess, spawnCli, type CliResult } from '../helpers/run-cli.js';
import { writeAccountsFile } from '../helpers/test-context.js';
import { createMigratedDatabase, query, waitFor } from './fault-helpers.js';

// A fleet of three `schedule` workers sharing one night of 200 accounts through the job queue,
// one of them killed with SIGKILL mid-night, and one account the gateway refuses all night.
let server: PrivatePostgres | undefined;
let sandbox: Sandbox;
let url: string;

beforeAll(async () => {
  server = await startPrivatePostgres();
  // Through the built CLI: `migrate` creates the tables and the job queue's schema.
  url = await createMigratedDatabase(server, 'wr_faults_fleet');
  sandbox = await startSandbox({ port: 0, wallets: 3, seed: 31 });
});
afterAll(async () => {
  await sandbox?.close();
  server?.remove();
});

const ACCOUNTS = 200;
const pad = (n: number) => String(n).padStart(2, '0');

describe.skipIf(!canRunPrivatePostgres())('a fleet of workers on the job queue', () => {
  it('captures every account once, by several workers, through a SIGKILL; a refused account is dead-lettered and missed once', async () => {
    const schema = await query<{ n: string }>(url, `select count(*) as n from information_schema.tables where table_schema = 'pgboss' and table_name in ('job', 'queue', 'archive')`);
    expect(Number(schema[0]!.n)).toBe(3);

    const names = Array.from({ length: ACCOUNTS }, (_, i) => `m${String(i).padStart(3, '0')}`);
    const accountsFile = writeAccountsFile([
      ...names.map((name) => ({ name, apiKeyEnv: 'SANDBOX_KEY', apiSecretEnv: 'SANDBOX_SECRET' })),
      { name: 'refused', apiKeyEnv: 'SANDBOX_KEY', apiSecretEnv: 'WRONG_SECRET' },
    ]);
    sandbox.setFaults({ latencyMs: 40 });
    // A cut-off on the next minute at least 70 s away, a window of ±60 s and one slot 55 s before
    // the cut-off (six-field cron, UTC): the night starts within seconds and closes in about 3 min.
    const cutoff = new Date(Math.ceil((Date.now() + 70_000) / 60_000) * 60_000);
    const slot = new Date(cutoff.getTime() - 55_000);
    // The date whose cut-off that is (a 00:00 cut-off ends the day before).
    const midnight = cutoff.getUTCHours() === 0 && cutoff.getUTCMinutes() === 0;
    const businessDate = new Date(cutoff.getTime() - (midnight ? 86_400_000 : 0)).toISOString().slice(0, 10);
    const env = {
      DATABASE_URL: url,
      GATEWAY_ENV: 'sandbox',
      GATEWAY_SANDBOX_URL: sandbox.url,
      SANDBOX_KEY: sandbox.apiKey,
      SANDBOX_SECRET: sandbox.apiSecret,
      WRONG_SECRET: 'not-the-secret',
      RECON_ACCOUNTS_FILE: accountsFile,
      RECON_TIMEZONE: 'UTC',
      RECON_CUTOFF: `${pad(cutoff.getUTCHours())}:${pad(cutoff.getUTCMinutes())}`,
      RECON_SCHEDULE: `${slot.getUTCSeconds()} ${slot.getUTCMinutes()} ${slot.getUTCHours()} * * *`,
      RECON_CAPTURE_WINDOW: '60s',
      RECON_RETRY_DELAYS: '10s',
      RECON_QUEUE_JOB_EXPIRY: '5s',
      RECON_ACCOUNT_CONCURRENCY: '2',
      GATEWAY_RETRY_BASE_DELAY_MS: '20',
      RECON_WEBHOOK_URL: 'http://127.0.0.1:9/unreachable',
      RECON_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      LOG_LEVEL: 'info',
    };
    const workers: Array<{ child: ChildProcess; done: Promise<CliResult>; stdout: () => string }> = [];
    for (let i = 0; i < 3; i++) {
      const child = spawnCli(['schedule'], env);
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      workers.push({ child, done: collect(child), stdout: () => out });
    }
    const [victim, ...survivors] = workers as [(typeof workers)[number], (typeof workers)[number], (typeof workers)[number]];
    const runsBy = async (pid: number) => Number((await query<{ n: string }>(url, `select count(*) as n from snapshot_runs where worker like '%:' || $1`, [String(pid)]))[0]!.n);
    try {
      // Mid-night: the victim has made a few runs and others remain.
      await waitFor(async () => (await runsBy(victim.child.pid!)) >= 5, 120_000, 'the victim to take capture jobs');
      const killedAt = new Date();
      victim.child.kill('SIGKILL');
      const remaining = await query<{ n: string }>(url, `select count(*) as n from snapshot_runs where status = 'succeeded' and end_of_day`);
      expect(Number(remaining[0]!.n)).toBeLessThan(ACCOUNTS);

      // Every good account's date captured; the refused one dead-lettered once its window closed and settled as missed.
      await waitFor(
        async () => Number((await query<{ n: string }>(url, `select count(*) as n from snapshot_runs where status = 'succeeded' and end_of_day and business_date = $1`, [businessDate]))[0]!.n) === ACCOUNTS,
        150_000,
        'every account to be captured',
      );
      await waitFor(async () => (await query(url, 'select 1 from missed_dates')).length > 0, 150_000, 'the refused account to be recorded missed');

      const perAccount = await query<{ account: string; n: string }>(
        url,
        `select account, count(*) as n from snapshot_runs where status = 'succeeded' and end_of_day and business_date = $1 group by account`,
        [businessDate],
      );
      expect(perAccount).toHaveLength(ACCOUNTS);
      expect(perAccount.every((r) => Number(r.n) === 1)).toBe(true);
      const byWorker = await query<{ worker: string; n: string }>(url, `select worker, count(*) as n from snapshot_runs where status = 'succeeded' group by worker`);
      expect(byWorker.length).toBeGreaterThanOrEqual(2);
      // The victim's unfinished runs: taken over, each account captured by another worker, within the shortest retry delay.
      const cut = await query<{ account: string; status: string }>(url, `select account, status from snapshot_runs where worker like '%:' || $1 and status <> 'succeeded'`, [String(victim.child.pid)]);
      expect(cut.length).toBeGreaterThanOrEqual(1);
      for (const run of cut) {
        expect(run.status).toMatch(/^(abandoned|running)$/);
        const taken = await query<{ worker: string; started_at: Date }>(url, `select worker, started_at from snapshot_runs where account = $1 and status = 'succeeded'`, [run.account]);
        expect(taken).toHaveLength(1);
        expect(taken[0]!.worker).not.toMatch(new RegExp(`:${victim.child.pid}$`));
        expect(taken[0]!.started_at.getTime() - killedAt.getTime()).toBeLessThan(10_000);
      }

      const missed = await query<{ account: string; business_date: string }>(url, 'select account, business_date::text as business_date from missed_dates');
      expect(missed).toEqual([{ account: 'refused', business_date: businessDate }]);
      const alarms = await query(url, `select 1 from notifications where event_type = 'date.missed'`);
      expect(alarms).toHaveLength(1);

      // What the queue says, through the built CLI.
      const shown = await runCliProcess(['queue', '--json'], { DATABASE_URL: url, RECON_TIMEZONE: 'UTC', RECON_CUTOFF: env.RECON_CUTOFF, RECON_CAPTURE_WINDOW: '60s', GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's' });
      expect(shown.code, shown.stderr).toBe(0);
      const queues = JSON.parse(shown.stdout) as Array<Record<string, unknown>>;
      const capture = queues.find((q) => q.queue === 'capture')!;
      expect(Object.keys(capture).sort()).toEqual(['active', 'completed', 'created', 'dead_letter', 'failed', 'oldest_waiting_seconds', 'queue', 'retry']);
      expect(capture).toMatchObject({ active: 0, created: 0, dead_letter: 1, failed: 1 });
      expect(capture.completed as number).toBeGreaterThanOrEqual(ACCOUNTS);
      const dead = await query<{ data: { account: string } }>(url, `select data from pgboss.job where name = 'capture-dead'`);
      expect(dead.map((d) => d.data.account)).toEqual(['refused']);

      for (const w of survivors) w.child.kill('SIGTERM');
      for (const w of survivors) expect((await w.done).code).toBe(0);
      console.log(`[faults] fleet: ${byWorker.map((w) => `${w.worker} ${w.n}`).join(', ')}; victim's ${cut.length} cut run(s) taken over`);
    } catch (error) {
      for (const [i, w] of workers.entries()) console.error(`worker ${i} (pid ${w.child.pid}) output:\n${w.stdout().split('\n').slice(-40).join('\n')}`);
      throw error;
    } finally {
      for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    }
  }, 420_000);
});
