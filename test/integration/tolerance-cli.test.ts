import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { cutoffJustPassed, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: RECON_TOLERANCE=0.01 with a JPY wallet is an exact match for JPY, said in the report, never a configuration error.
let t: TestDatabase;
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 0 });
  sandbox.addWallet('EUR', 1_000n);
  sandbox.addWallet('JPY', 1_500n);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-tolerance-cli-'));
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: cutoffJustPassed(), RECON_TOLERANCE: '0.01' };
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCliInProcess(args, env);

describe(`a tolerance finer than a currency's minor unit (${backend})`, () => {
  it('is rounded down to it: exact for JPY, within one cent for EUR, and the report header says so', async () => {
    const captured = await cli('snapshot');
    expect(captured.code, captured.stdout + captured.stderr).toBe(0);
    const date = (await withDatabase(t, (db) => db.selectFrom('snapshot_runs').select('business_date').where('status', '=', 'succeeded').executeTakeFirstOrThrow())).business_date;

    // EUR one cent off (within 0.01), JPY one yen off (beyond the 0 yen that 0.01 rounds down to).
    const books = path.join(dir, 'books.csv');
    writeFileSync(books, `business_date,currency,balance\n${date},EUR,9.99\n${date},JPY,1499\n`);
    const imported = await cli('ledger', 'import', books);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);

    const reconciled = await cli('reconcile', '--date', date);
    expect(reconciled.stderr).not.toMatch(/more decimals|configuration/i);
    expect(reconciled.code).toBe(3);
    expect(reconciled.stdout).toContain("Tolerance: 0.01 by default; JPY 0 (0.01 rounded down to JPY's whole units: exact match) (in major units)");
    const results = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select(['currency', 'status', 'difference']).where('business_date', '=', date).orderBy('currency').execute());
    expect(results.map((r) => [r.currency, r.status, String(r.difference)])).toEqual([
      ['EUR', 'matched', '1'],
      ['JPY', 'break', '1'],
    ]);

    const report = await cli('report', '--date', date);
    expect(report.stdout).toContain("JPY 0 (0.01 rounded down to JPY's whole units: exact match)");
  });
});
