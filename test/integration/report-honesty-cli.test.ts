import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { cutoffJustPassed, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: report gives no advice the tool then refuses, and does not exit 0 while results are owed.
let t: TestDatabase;
let sandbox: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 2 });
  // A cut-off ten minutes ago: the capture is the end of day of a closed date, and today's cut-off is a day ahead.
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: cutoffJustPassed() };
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
});

const cli = (...args: string[]) => runCliInProcess(args, env);
const nextDay = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

describe(`report tells the truth about what can be done (${backend})`, () => {
  it('never lists today (cut-off ahead) as left unreconciled, and exits 3 while results are owed', async () => {
    expect((await cli('snapshot')).code).toBe(0);
    const date = (await withDatabase(t, (db) => db.selectFrom('snapshot_runs').select('business_date').executeTakeFirstOrThrow())).business_date;
    const today = nextDay(date);

    const range = await cli('report', '--from', date, '--to', today);
    expect(range.code, range.stderr).toBe(0);
    expect(range.stdout).not.toContain(`not reconciled: default ${today}`);
    expect(range.stdout).not.toContain('reconcile --date');
    // What the advice would have led to: reconcile refuses a date whose cut-off is ahead.
    expect((await cli('reconcile', '--date', today)).code).toBe(2);

    // An input of the date changed since its results were computed: owed.
    await withDatabase(t, (db) => sql`select owe_reconciliation('default', ${date}::date, 'books changed')`.execute(db));
    const owed = await cli('report', '--date', date);
    expect(owed.code).toBe(3);
    expect(owed.stdout).toContain(`results owed (an input changed since they were computed; the worker or the next command recomputes them): default ${date}`);
    const json = await cli('report', '--date', date, '--format', 'json');
    expect(json.code).toBe(3);
    expect((JSON.parse(json.stdout) as { summary: { exitCode: number } }).summary.exitCode).toBe(3);
    expect((await cli('report', '--help')).stdout).toContain('3 written but some results are owed');
  });
});
