import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountNames, generateHistory } from '../../bench/history.js';
import { collect, spawnCli } from '../helpers/run-cli.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A stop signal mid-report leaves nothing behind: no temporary file and no report under the final
// name. The report is held mid-way deterministically: another session holds snapshot_runs, which
// the summary reads after its first pass over the results.
const SHAPE = { accounts: 2, currencies: 3, days: 40, lastDate: '2026-11-25' };

let t: TestDatabase;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  if (backend !== 'postgres') return;
  t = await createTestDatabase();
  await generateHistory(t.handle.db, SHAPE, (d) => new Date(`${d}T23:00:00Z`), new Date('2026-11-26T08:00:00Z'));
  dir = mkdtempSync(path.join(tmpdir(), 'wr-report-stop-'));
  const accountsFile = path.join(dir, 'accounts.json');
  writeFileSync(accountsFile, JSON.stringify({ accounts: accountNames(SHAPE).map((name) => ({ name, environment: 'sandbox', apiKeyEnv: 'KEY', apiSecretEnv: 'SECRET' })) }));
  env = { ...t.childEnv, RECON_ACCOUNTS_FILE: accountsFile, KEY: 'k', SECRET: 's', LOG_LEVEL: 'silent' };
}, 120_000);

afterAll(async () => {
  await t?.drop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts a JSON report into `out` and returns once it is held mid-way by the lock `holder` took. */
async function startHeldReport(holder: pg.Client, out: string) {
  await holder.query('begin');
  await holder.query('lock table snapshot_runs in access exclusive mode');
  const child = spawnCli(['report', '--from', '2026-10-01', '--to', '2026-11-25', '--format', 'json', '--out', out], env);
  const done = collect(child);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const signalled = () => until('the child to take the signal', () => stderr.includes('SIGTERM received'));
  await until('the report to wait for the lock', async () => (await holder.query(`select 1 from pg_locks where not granted and relation = 'snapshot_runs'::regclass`)).rowCount! > 0);
  return { child, done, signalled };
}

describe.skipIf(backend !== 'postgres')('a range report stopped by a signal (postgres)', () => {
  it('stops on SIGTERM, exits 143 and leaves neither its temporary file nor a report', async () => {
    const holder = new pg.Client({ connectionString: env.DATABASE_URL });
    await holder.connect();
    try {
      const out = path.join(dir, 'stopped.json');
      const { child, done, signalled } = await startHeldReport(holder, out);
      child.kill('SIGTERM');
      await signalled();
      await holder.query('rollback');
      const result = await done;
      expect(existsSync(out)).toBe(false);
      expect(result.code, result.stderr).toBe(143);
      expect(result.stderr).toContain(`Stopped by SIGTERM before the json report was complete: ${out} was not written.`);
      expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      await holder.end();
    }
  }, 60_000);

  it('removes its temporary file when a second SIGTERM ends it at once', async () => {
    const holder = new pg.Client({ connectionString: env.DATABASE_URL });
    await holder.connect();
    try {
      const out = path.join(dir, 'forced.json');
      const { child, done, signalled } = await startHeldReport(holder, out);
      // The report's file is opened before its first read: a temporary file is there to remove.
      expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toHaveLength(1);
      child.kill('SIGTERM');
      await signalled();
      child.kill('SIGTERM');
      const result = await done;
      expect(result.code, result.stderr).toBe(143);
      expect(existsSync(out)).toBe(false);
      expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    } finally {
      await holder.query('rollback').catch(() => undefined);
      await holder.end();
    }
  }, 60_000);
});
