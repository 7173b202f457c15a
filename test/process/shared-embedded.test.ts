import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedSocketPath } from '../../src/db/open-database.js';
import { collect, runCliInProcess, runCliProcess, spawnCli, type CliResult } from '../helpers/run-cli.js';
import { copyEmbeddedTemplate } from '../helpers/test-database.js';

const run = promisify(execFile);

// While the worker holds the embedded database, the other commands work through its socket.
// This is about the embedded database, so it runs on it whatever TEST_DATABASE_URL says.
let dir: string;
let env: Record<string, string>;
let worker: ReturnType<typeof spawnCli>;
let workerDone: Promise<CliResult>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'wr-shared-'));
  env = {
    RECON_DATA_DIR: path.join(dir, 'db'),
    GATEWAY_API_KEY: 'key',
    GATEWAY_API_SECRET: 'secret',
    RECON_CATCH_UP: 'false',
    LOG_LEVEL: 'info',
  };
  // A migrated database is there already (a copy of the suite's template): what is tested is
  // the sharing, and the worker starts without seconds of initdb.
  copyEmbeddedTemplate(env.RECON_DATA_DIR!);
  worker = spawnCli(['schedule'], env);
  workerDone = collect(worker);
  let stdout = '';
  worker.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  // Started when it logs its next slot: the database is open and served by then.
  await new Promise<void>((resolve, reject) => {
    const check = () => (stdout.includes('next run at') ? resolve() : undefined);
    worker.stdout?.on('data', check);
    worker.on('exit', () => reject(new Error(`the worker exited early: ${stdout}`)));
  });
}, 60_000);

afterAll(async () => {
  if (worker.exitCode === null) worker.kill('SIGTERM');
  await workerDone;
  rmSync(dir, { recursive: true, force: true });
});

describe('the embedded database while schedule holds it', () => {
  it('is served on an owner-only socket in its owner-only folder', () => {
    const socket = embeddedSocketPath(env.RECON_DATA_DIR!);
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(socket).mode & 0o077).toBe(0);
    expect(statSync(env.RECON_DATA_DIR!).mode & 0o077).toBe(0);
  });

  it('lets runs, ledger import, reconcile and report work through it', async () => {
    const runs = await runCliProcess(['runs'], env);
    expect(runs.code, runs.stderr).toBe(0);
    // The advice fits the lock state: a manual snapshot would be refused (exit 4) beside the worker.
    expect(runs.stdout.trim()).toMatch(
      /^No snapshot runs yet\. The worker holding this database \(pid \d+ on .+\) captures at its next slot \(RECON_SCHEDULE\); "wallet-recon snapshot" can run once it has stopped\.$/,
    );

    // The others from this test's process: as much another process than the worker as a child
    // is, and they reach the database the same way, through the socket.
    const quiet = { ...env, LOG_LEVEL: 'silent' };
    writeFileSync(path.join(dir, 'books.csv'), 'business_date,currency,balance\n2026-11-01,EUR,100\n');
    const imported = await runCliInProcess(['ledger', 'import', '--amounts', 'minor', path.join(dir, 'books.csv')], quiet);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/1 new, 0 changed, 0 unchanged, 0 removed\./);

    const reconciled = await runCliInProcess(['reconcile', '--date', '2026-11-01'], quiet);
    expect(reconciled.code, reconciled.stderr).toBe(3);
    expect(reconciled.stdout).toMatch(/2026-11-01\s+default\s+no_snapshot/);

    const report = await runCliInProcess(['report', '--date', '2026-11-01', '--format', 'json'], quiet);
    expect(report.code, report.stderr).toBe(0);
    expect((JSON.parse(report.stdout) as { summary: { total: { no_snapshot: number } } }).summary.total.no_snapshot).toBe(1);
  }, 120_000);

  it('still refuses a capture beside the worker (exit 4), which holds the account locks', async () => {
    const snapshot = await runCliProcess(['snapshot'], env);
    expect(snapshot.code).toBe(4);
    expect(snapshot.stderr.trim()).toMatch(/^The embedded database in .* is in use by another wallet-recon process \(pid \d+ on .*, "wallet-recon schedule"/);
    expect(snapshot.stderr).toContain('That worker runs until stopped and captures at its slots (RECON_SCHEDULE); stop it (SIGTERM) to run "wallet-recon snapshot" by hand');
    expect(snapshot.stderr).not.toContain('Wait for it to finish');
  }, 60_000);

  it('tells a second worker that one worker runs per embedded database, never to wait for the first to finish (exit 4)', async () => {
    const second = await runCliProcess(['schedule'], env);
    expect(second.code, second.stderr).toBe(4);
    expect(second.stderr).toMatch(/is in use by another wallet-recon process \(pid \d+ on .*, "wallet-recon schedule", since .*\)\. One worker runs per embedded database, and that one runs until stopped: stop it \(SIGTERM\) before starting another here, or set DATABASE_URL to a PostgreSQL server, where any number of workers share the night\./);
    expect(second.stderr).not.toContain('Wait for it to finish');
  }, 60_000);

  it.runIf(existsSync('/usr/bin/psql'))('gives psql the connection: wallet-recon sql --print, and the README queries run', async () => {
    // Printing the URL needs no process of its own; psql, the other process, gets it.
    const printed = await runCliInProcess(['sql', '--print'], { ...env, LOG_LEVEL: 'silent' });
    expect(printed.code, printed.stderr).toBe(0);
    const url = printed.stdout.trim();
    expect(url).toBe(`postgresql://postgres@/postgres?host=${encodeURIComponent(env.RECON_DATA_DIR!)}&port=5432`);
    const { stdout } = await run('psql', [url, '-Atc', 'select count(*) from expected_balances']);
    expect(stdout.trim()).toBe('1');
  }, 60_000);

  it('stops cleanly on SIGTERM and removes its socket', async () => {
    worker.kill('SIGTERM');
    const result = await workerDone;
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(embeddedSocketPath(env.RECON_DATA_DIR!))).toBe(false);
  }, 60_000);
});
