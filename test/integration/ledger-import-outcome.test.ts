import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.types.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { cutoffJustPassed, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one handle at a time: the CLI opens it per command.
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 2, seed: 5 });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-import-outcome-'));
  // A cut-off ten minutes ago: the snapshot taken now is the end of day of a date that can be reconciled.
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: cutoffJustPassed() };
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (...args: string[]) => runCliInProcess(args, env);

describe(`what ledger import says happened (${backend})`, () => {
  it('a file that does not exist is a usage error (exit 2) and touches nothing', async () => {
    const missing = await cli('ledger', 'import', path.join(dir, 'nonexistent.csv'));
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toContain('nonexistent.csv: there is no such file.');
    expect(await withDb((db) => db.selectFrom('books_imports').select('id').execute())).toEqual([]);
  });

  it('says the books were imported, and exits 1, when reconciling their date again fails after the commit', async () => {
    const captured = await cli('snapshot');
    expect(captured.code, captured.stdout + captured.stderr).toBe(0);
    const run = await withDb((db) => db.selectFrom('snapshot_runs').select(['business_date']).where('status', '=', 'succeeded').executeTakeFirstOrThrow());
    const date = run.business_date;
    // A failure the import cannot foresee (here the database refuses the results) comes after the books are committed.
    await withDb(async (db) => {
      await sql`create function wr_test_refuse_results() returns trigger language plpgsql as $$ begin raise exception 'results refused by the test'; end $$`.execute(db);
      await sql`create trigger wr_test_refuse_results before insert or update on reconciliation_results for each row execute function wr_test_refuse_results()`.execute(db);
    });
    const csv = path.join(dir, 'books.csv');
    writeFileSync(csv, `business_date,currency,balance\n${sandbox.wallets.map((w) => `${date},${w.currency},${w.balance}`).join('\n')}\n`);
    const result = await cli('ledger', 'import', '--amounts', 'minor', csv);
    expect(result.stdout).toBe(`Imported 2 expected balances from books.csv for default, ${date}: 2 new, 0 changed, 0 unchanged, 0 removed.`);
    expect(result.stderr).toContain('The books were imported, but reconciling their dates again failed: ');
    expect(result.stderr).toContain('results refused by the test');
    expect(result.stderr).toContain(`then run "wallet-recon reconcile --date ${date}"`);
    expect(result.stderr).not.toMatch(/nothing was (touched|imported)/);
    expect(result.code).toBe(1);
    expect(await withDb((db) => db.selectFrom('expected_balances').select('currency').where('business_date', '=', date).execute())).toHaveLength(2);
  });
});
