import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.types.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { collect, runCliInProcess, runCliProcess, spawnCli, type CliResult } from '../helpers/run-cli.js';
import { writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let sandbox: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one process: the CLI children open it, this file reopens it to look.
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 30, seed: 3 });
  env = {
    ...t.childEnv,
    GATEWAY_ENV: 'sandbox',
    GATEWAY_SANDBOX_URL: sandbox.url,
    GATEWAY_API_KEY: sandbox.apiKey,
    GATEWAY_API_SECRET: sandbox.apiSecret,
    GATEWAY_RETRY_BASE_DELAY_MS: '20',
  };
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
});

// What needs no process of its own (no signal, no second process, no process start) runs in
// this one: the same command, output and exit code, without a process start each time.
const inProcess = (args: string[], childEnv: Record<string, string>) => runCliInProcess(args, { ...childEnv, LOG_LEVEL: 'silent' });

const inspect = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const runsOf = () => inspect((db) => db.selectFrom('snapshot_runs').selectAll().orderBy('id').execute());

async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Starts a snapshot child and resolves once it is mid-run: its run is recorded (its log says so;
 * the gateway reads begin before that, while the database opens) and a few requests went out.
 */
async function startSnapshotMidRun(env: Record<string, string>, requests = 3): Promise<{ child: ChildProcess; done: Promise<CliResult> }> {
  const child = spawnCli(['snapshot'], { ...env, GATEWAY_PER_PAGE: '1', LOG_LEVEL: 'info' });
  const done = collect(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const requestsBefore = sandbox.stats.requests;
  await waitFor(() => stderr.includes('"msg":"snapshot run started"') && sandbox.stats.requests >= requestsBefore + requests);
  return { child, done };
}

describe(`wallet-recon snapshot as a process (${backend})`, () => {
  beforeEach(async () => {
    sandbox.setFaults({ latencyMs: 0 });
    await inspect(async (db) => {
      await db.deleteFrom('balance_snapshots').execute();
      await db.deleteFrom('snapshot_runs').execute();
    });
  });

  it('captures and prints a summary; --json is machine-readable', async () => {
    const result = await runCliProcess(['snapshot', '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { exitCode: number; accounts: Array<{ account: string; status: string; walletsFetched: number }> };
    expect(summary.accounts).toEqual([expect.objectContaining({ account: 'default', status: 'succeeded', walletsFetched: 30 })]);
    const listing = await inProcess(['runs', '--limit', '5'], env);
    expect(listing.code).toBe(0);
    // The business date with how the capture stands to its cut-off (real clock: either is possible).
    expect(listing.stdout).toMatch(/default\s+\d{4}-\d{2}-\d{2}\s+(no \(intraday\)|yes(, [^\n]+?)?)\s+manual\s+succeeded/);

    // Without --json or --quiet it prints the balances it captured, in each currency's units.
    const printed = await inProcess(['snapshot'], env);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/Balances of default captured in run \d+ \(business date \d{4}-\d{2}-\d{2}\):\ncurrency\s+balance\s+single-wallet read/);
    expect(printed.stdout).toMatch(/\nJPY\s+[\d,-]+\s+same\n/);
    const quiet = await inProcess(['snapshot', '--quiet'], env);
    expect(quiet.stdout).not.toContain('Balances of');
  });

  it('with several accounts, prints the failure sentence last, after the balance tables', async () => {
    const file = writeAccountsFile([
      { name: 'eu-main', apiKeyEnv: 'EU_KEY', apiSecretEnv: 'EU_SECRET' },
      { name: 'us-broken', apiKeyEnv: 'EU_KEY', apiSecretEnv: 'US_SECRET' },
      { name: 'apac', apiKeyEnv: 'EU_KEY', apiSecretEnv: 'EU_SECRET' },
    ]);
    const result = await inProcess(['snapshot'], { ...env, RECON_ACCOUNTS_FILE: file, EU_KEY: sandbox.apiKey, EU_SECRET: sandbox.apiSecret, US_SECRET: 'not-the-secret' });
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^us-broken: the gateway refused the API key\/secret for account "us-broken"/);
    expect(result.stdout.indexOf('us-broken: the gateway refused')).toBeGreaterThan(result.stdout.lastIndexOf('Balances of '));
    expect(result.stdout.match(/us-broken: the gateway refused/g)).toHaveLength(1);
  });

  it('lets one of two processes run and the other exit 4 naming the holder', async () => {
    // Slow enough (30 pages at 400 ms) that the first is still running whatever the machine's load.
    sandbox.setFaults({ latencyMs: 400 });
    // Mid-run means holding the lock: its run is recorded (the gateway reads start before that,
    // while the database opens, so requests alone do not say the lock is taken on a loaded machine).
    const { done: firstDone } = await startSnapshotMidRun(env, 2);
    // The second is this test's own process: another process than the child that holds the lock.
    const second = await inProcess(['snapshot'], env);
    sandbox.setFaults({ latencyMs: 0 });
    expect(second.code).toBe(4);
    expect(second.stderr + second.stdout).toMatch(backend === 'postgres' ? /another process holds the lock of account "default" \(run \d+/ : /in use by another wallet-recon process \(pid \d+/);
    const firstResult = await firstDone;
    expect(firstResult.code, firstResult.stderr).toBe(0);
    expect((await runsOf()).map((r) => r.status)).toEqual(['succeeded']);
  });

  it('after kill -9 mid-run, the next run marks it abandoned and succeeds', async () => {
    sandbox.setFaults({ latencyMs: 60 });
    const { child, done } = await startSnapshotMidRun(env);
    child.kill('SIGKILL');
    expect((await done).signal).toBe('SIGKILL');
    sandbox.setFaults({ latencyMs: 0 });
    // The next run is this test's own process, which finds the killed child's run and lock.
    const next = await inProcess(['snapshot'], env);
    expect(next.code, next.stderr).toBe(0);
    const all = await runsOf();
    expect(all.map((r) => r.status)).toEqual(['abandoned', 'succeeded']);
    expect(all[0]!.error).toMatch(/abandoned/);
    const rows = await inspect((db) => db.selectFrom('balance_snapshots').select('run_id').execute());
    expect(new Set(rows.map((r) => r.run_id))).toEqual(new Set([all[1]!.id]));
  });

  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('on %s mid-run records the run as interrupted, says how far it got and exits %i within 10 seconds', async (signal, code) => {
    sandbox.setFaults({ latencyMs: 80 });
    const { child, done } = await startSnapshotMidRun(env);
    const sentAt = Date.now();
    child.kill(signal);
    const result = await done;
    expect(Date.now() - sentAt).toBeLessThan(10_000);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(/Interrupted while default: (listing page \d+ of \d+|reading balances \d+ of \d+).*; the run is recorded as interrupted\./);
    const all = await runsOf();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ status: 'failed', error: 'interrupted' });
    expect(await inspect((db) => db.selectFrom('balance_snapshots').selectAll().execute())).toEqual([]);
  });

  it('exits 2 naming the missing credentials, touching nothing', async () => {
    const result = await inProcess(['snapshot'], { ...t.childEnv, GATEWAY_SANDBOX_URL: sandbox.url });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/GATEWAY_API_KEY is not set[\s\S]*GATEWAY_API_SECRET is not set/);
    expect(await runsOf()).toEqual([]);
  });
});

describe(`wallet-recon schedule as a process (${backend})`, () => {
  it('resumes the slot whose window is open, captures it as end of day, logs the next run and stops cleanly on SIGTERM', async () => {
    sandbox.setFaults({ latencyMs: 0 });
    // A slot a minute ago with its cut-off at the same time: its window (±1 h) is open now.
    const slot = new Date(Date.now() - 60_000);
    const hh = String(slot.getUTCHours()).padStart(2, '0');
    const mm = String(slot.getUTCMinutes()).padStart(2, '0');
    const child = spawnCli(['schedule'], { ...env, LOG_LEVEL: 'info', RECON_SCHEDULE: `${mm} ${hh} * * *`, RECON_CUTOFF: `${hh}:${mm}`, RECON_CAPTURE_WINDOW: '1h' });
    const done = collect(child);
    let stdout = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    await waitFor(() => /night of \d{4}-\d{2}-\d{2} settled/.test(stdout) && stdout.includes('next run at'), 30_000);
    child.kill('SIGTERM');
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; nextRun?: string; reason?: string });
    expect(lines.some((l) => /^resuming the night of \d{4}-\d{2}-\d{2}: its capture window is still open$/.test(l.msg))).toBe(true);
    expect(lines.filter((l) => l.nextRun).length).toBeGreaterThanOrEqual(1);
    expect(lines.at(-1)?.msg).toBe('scheduler stopped');
    const runs = await runsOf();
    expect(runs.at(-1)).toMatchObject({ trigger: 'schedule', status: 'succeeded', end_of_day: true });
    expect(Math.abs(runs.at(-1)!.cutoff_drift_seconds!)).toBeLessThan(3600);
    const days = await inspect((db) => db.selectFrom('capture_days').selectAll().where('run_id', '=', runs.at(-1)!.id).execute());
    expect(days).toEqual([expect.objectContaining({ status: 'captured', attempts: 1 })]);
  });

  it('refuses a schedule outside every capture window with exit code 2, saying so', async () => {
    const result = await inProcess(['schedule'], { ...env, RECON_SCHEDULE: '0 12 * * *', RECON_CUTOFF: '00:00', RECON_CAPTURE_WINDOW: '3h' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/RECON_SCHEDULE "0 12 \* \* \*" fires at 12:00:00 \(UTC\) on 2026-01-01, 12 h from the nearest cut-off, outside the capture window of ±3 h/);
  });
});

describe('wallet-recon demo', () => {
  it('runs the whole job from nothing in its own database: snapshot, books with one break, reconciliation, HTML report', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-demo-'));
    try {
      const result = await runCliProcess(['demo'], { XDG_DATA_HOME: path.join(dir, 'xdg') }, dir);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/Gateway emulator listening on http:\/\/127\.0\.0\.1:\d+/);
      // Its own embedded database in the user data directory, never the real one.
      const demoDatabase = path.join(dir, 'xdg', 'wallet-recon', 'demo');
      expect(result.stderr.split('\n')).toContain(`Database: embedded database in ${demoDatabase}`);
      expect(result.stdout).toMatch(/Prepared the demo's database \(embedded database in .*\): \d+ migrations applied\./);
      expect(result.stdout).toMatch(/demo\s+succeeded/);
      // A mid-size merchant's balances: every wallet holds thousands to millions (yen: up to a few hundred million), none negative.
      const balances = [...result.stdout.matchAll(/^([A-Z]{3})\s+([\d,.-]+)\s+same$/gm)].map((m) => [m[1]!, Number(m[2]!.replaceAll(',', ''))] as const);
      expect(balances).toHaveLength(12);
      for (const [currency, balance] of balances) expect(balance, currency).toBeGreaterThanOrEqual(1_000);
      for (const [currency, balance] of balances) expect(balance, currency).toBeLessThan(currency === 'JPY' || currency === 'INR' ? 500_000_000 : 50_000_000);
      expect(result.stdout).toMatch(/one deliberate break: the books hold EUR [\d,.-]+, the gateway EUR [\d,.-]+\./);
      expect(result.stdout).toMatch(/\d{4}-\d{2}-\d{2}\s+demo\s+gateway\s+EUR\s+break\s+[\d,.-]+\s+[\d,.-]+\s+[\d,.-]+\s+123\.45/);
      // The demo bank account's camt.053 statement, imported and reconciled beside the gateway's wallets.
      expect(result.stdout).toMatch(/Wrote a camt\.053 statement of bank account "demo-bank" \(IBAN DE89370400440532013000\) closing on \d{4}-\d{2}-\d{2} at EUR [\d,.]+, imported it \(new, proof ok\)/);
      expect(result.stdout).toMatch(/^demo\s+gateway\s+11\s+1\s/m);
      expect(result.stdout).toMatch(/^demo-bank\s+bank\s+1\s+0\s/m);
      const report = path.join(dir, 'xdg', 'wallet-recon', 'demo-report.html');
      expect(result.stdout).toContain(`The HTML report is in ${report}`);
      const html = readFileSync(report, 'utf8');
      expect(html).toContain('<h1>Reconciliation ');
      expect(html).toContain('<tr><td>demo</td><td>gateway</td>');
      expect(html).toContain('<tr><td>demo-bank</td><td>bank</td>');
      // It ends saying how to open the console on its data.
      expect(result.stdout).toContain(`RECON_DATA_DIR=${demoDatabase} wallet-recon users add me --role admin`);
      expect(result.stdout).toContain(`RECON_DATA_DIR=${demoDatabase} wallet-recon console`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a database that holds other accounts’ data, writing nothing', async () => {
    // Its own database holding exactly one other account's capture: what the earlier tests of this
    // file left in theirs (results and books of other accounts, depending on the time of day the
    // suite runs) is not what this test is about.
    const own = await createTestDatabase({ onDisk: true });
    try {
      const at = new Date();
      await own.handle.db
        .insertInto('snapshot_runs')
        .values({ account: 'default', environment: 'sandbox', trigger: 'manual', status: 'succeeded', started_at: at, finished_at: at, business_date: at.toISOString().slice(0, 10) })
        .execute();
      if (backend === 'embedded') await own.handle.close();
      const result = await inProcess(['demo'], { ...own.childEnv, XDG_DATA_HOME: path.join(tmpdir(), 'wr-demo-unused') });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.trim()).toMatch(/^The .* already holds data of other accounts \(default\): the demo writes only into an empty database or one an earlier demo filled\./);
      const accounts = await withDatabase(own, (db) => db.selectFrom('snapshot_runs').select('account').execute());
      expect(accounts).toEqual([{ account: 'default' }]);
    } finally {
      await own.drop();
    }
  });
});
