import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { cutoffJustPassed, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: a new exotic wallet (XAG, no ISO 4217 decimals) is captured raw and flagged, never costing the account its night.
let t: TestDatabase;
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 0 });
  sandbox.addWallet('EUR', 1_000n);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-unknown-decimals-'));
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: cutoffJustPassed() };
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[], extra: Record<string, string> = {}) => runCliInProcess(args, { ...env, ...extra });

describe(`a wallet whose currency has unknown decimals (${backend})`, () => {
  it('is captured with its raw integer, flagged with the setting to add, and the rest of the account reconciles', async () => {
    // The silver wallet appears in the listing (between pages, for the account it is just one more wallet).
    sandbox.addWallet('XAG', 123_456n);
    const captured = await cli(['snapshot']);
    expect(captured.code, captured.stdout + captured.stderr).toBe(0);
    const run = await withDatabase(t, (db) => db.selectFrom('snapshot_runs').select(['id', 'status', 'business_date', 'warning']).executeTakeFirstOrThrow());
    expect(run.status).toBe('succeeded');
    expect(run.warning).toContain('set GATEWAY_AMOUNT_DECIMALS_XAG to the number of decimals');
    const rows = await withDatabase(t, (db) => db.selectFrom('balance_snapshots').select(['currency', 'balance', 'scale']).where('run_id', '=', run.id).orderBy('currency').execute());
    expect(rows.map((r) => [r.currency, String(r.balance), r.scale])).toEqual([
      ['EUR', '1000', 2],
      ['XAG', '123456', null],
    ]);

    const books = path.join(dir, 'books.csv');
    writeFileSync(books, `business_date,currency,balance\n${run.business_date},EUR,10.00\n`);
    expect((await cli(['ledger', 'import', books])).code).toBe(0);
    const reconciled = await cli(['reconcile', '--date', run.business_date]);
    expect(reconciled.code, reconciled.stderr).toBe(3);
    const results = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select(['currency', 'status', 'gateway_balance', 'difference', 'note', 'scale']).where('business_date', '=', run.business_date).orderBy('currency').execute());
    expect(results.map((r) => [r.currency, r.status, String(r.gateway_balance), r.difference, r.scale])).toEqual([
      ['EUR', 'matched', '1000', '0', 2],
      ['XAG', 'unknown_decimals', '123456', null, null],
    ]);
    expect(results[1]!.note).toMatch(/^XAG has no known decimals .* set GATEWAY_AMOUNT_DECIMALS_XAG .* or amountDecimals\.XAG for account "default" in RECON_ACCOUNTS_FILE, then reconcile the date again$/);
    const cases = await withDatabase(t, (db) => db.selectFrom('reconciliation_cases').select(['currency', 'kind', 'state', 'latest_difference']).execute());
    expect(cases).toEqual([{ currency: 'XAG', kind: 'unknown_decimals', state: 'open', latest_difference: null }]);

    // With the setting added, the raw integer is read in it and compared: 123.456 troy ounces.
    writeFileSync(books, `business_date,currency,balance\n${run.business_date},EUR,1000\n${run.business_date},XAG,123456\n`);
    const withSetting = { GATEWAY_AMOUNT_DECIMALS_XAG: '3' };
    const reimported = await cli(['ledger', 'import', '--amounts', 'minor', books], withSetting);
    expect(reimported.code, reimported.stderr).toBe(0);
    const again = await cli(['reconcile', '--date', run.business_date], withSetting);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const xag = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select(['status', 'gateway_balance', 'scale']).where('currency', '=', 'XAG').executeTakeFirstOrThrow());
    expect([xag.status, String(xag.gateway_balance), xag.scale]).toEqual(['matched', '123456', 3]);
    expect(await withDatabase(t, (db) => db.selectFrom('reconciliation_cases').select(['state', 'resolution']).execute())).toEqual([{ state: 'resolved', resolution: 'auto' }]);
  });
});
