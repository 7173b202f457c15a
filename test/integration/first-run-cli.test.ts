import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: the README's first run (migrate, snapshot, ledger import, reconcile) must not reconcile the day before the tool existed.
let t: TestDatabase;
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true, migrate: false });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 2 });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-first-run-'));
  // A cut-off six hours ahead: now is outside every capture window, so the snapshot is an intraday
  // one of the current business date, and the latest closed date is the one before the tool existed.
  const ahead = new Date(Date.now() + 6 * 3_600_000);
  const cutoff = `${String(ahead.getUTCHours()).padStart(2, '0')}:${String(ahead.getUTCMinutes()).padStart(2, '0')}`;
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: cutoff };
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCliInProcess(args, env);

describe(`the README's first run (${backend})`, () => {
  it('reconciles only dates the tool could have captured: no no_snapshot case for the day before it existed', async () => {
    expect((await cli('migrate')).code).toBe(0);
    const captured = await cli('snapshot');
    expect(captured.code, captured.stderr).toBe(0);
    const date = (await withDatabase(t, (db) => db.selectFrom('snapshot_runs').select('business_date').executeTakeFirstOrThrow())).business_date;
    const books = path.join(dir, 'books.csv');
    writeFileSync(books, `business_date,currency,balance\n${sandbox.wallets.map((w) => `${date},${w.currency},${w.balance}`).join('\n')}\n`);
    expect((await cli('ledger', 'import', '--amounts', 'minor', books)).code).toBe(0);

    const reconciled = await cli('reconcile');
    expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(0);
    expect(reconciled.stdout).toMatch(new RegExp(`^Not reconciled: account "default" was first captured for ${date}, so \\d{4}-\\d{2}-\\d{2} \\(the latest business date whose cut-off has passed\\) could not have been captured\\. Run "wallet-recon reconcile --date ${date}" once its cut-off has passed\\.`));
    expect(await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select('status').where('status', '=', 'no_snapshot').execute())).toEqual([]);
    expect(await withDatabase(t, (db) => db.selectFrom('reconciliation_cases').selectAll().execute())).toEqual([]);
  });
});
