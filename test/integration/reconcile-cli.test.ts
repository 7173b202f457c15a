import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import type { Database } from '../../src/db/database.types.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one handle at a time: the CLI opens it per command.
  if (backend === 'embedded') await t.handle.close();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-reconcile-cli-'));
  // DATABASE_URL '' keeps a developer's .env from pointing the embedded run elsewhere.
  env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (...args: string[]) => runCliInProcess(args, env);

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

interface JsonReport {
  summary: { total: Record<string, number> };
  results: Array<{ currency: string | null; status: string; difference: string | null; gateway_balance: string | null }>;
}

describe(`reconcile, ledger import and report from the command line (${backend})`, () => {
  it('finds one break of 100, one missing on each side, the rest matched; corrected books exit 0', async () => {
    await withDb(async (db) => {
      const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'manual', businessDate: '2026-11-20', startedAt: new Date('2026-11-20T23:55:00Z') });
      await insertSnapshotRows(db, runId, 'default', new Date('2026-11-20T23:55:00Z'), [
        { currency: 'EUR', balance: 125_000n, singleBalance: 125_000n },
        { currency: 'GBP', balance: 9_007_199_254_740_993n, singleBalance: 9_007_199_254_740_993n },
        { currency: 'USD', balance: 50_000n, singleBalance: 50_000n },
        { currency: 'CHF', balance: 0n, singleBalance: 0n },
      ]);
      await markRunSucceeded(db, runId, new Date('2026-11-20T23:56:00Z'), { walletsReported: 4, walletsFetched: 4, pagesFetched: 1, requests: 5 });
    });

    // Omits GBP, misstates USD by 100, adds JPY the gateway lacks.
    const books = file('books-1.csv', 'business_date,currency,balance\n2026-11-20,EUR,125000\n2026-11-20,USD,49900\n2026-11-20,CHF,0\n2026-11-20,JPY,300\n');
    const imported = await cli('ledger', 'import', books);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toBe('Imported 4 expected balances from books-1.csv for default, 2026-11-20: 4 new, 0 replaced.');

    const reconciled = await cli('reconcile', '--date', '2026-11-20');
    expect(reconciled.code, reconciled.stderr).toBe(3);
    expect(reconciled.stdout).toMatch(/3 result\(s\) need attention/);
    expect(reconciled.stdout).toMatch(/USD\s+break\s+50000\s+50000\s+49900\s+100/);

    const json = await cli('report', '--date', '2026-11-20', '--format', 'json');
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as JsonReport;
    expect(report.results.map((r) => [r.currency, r.status])).toEqual([
      ['CHF', 'matched'],
      ['EUR', 'matched'],
      ['GBP', 'missing_in_ledger'],
      ['JPY', 'missing_in_gateway'],
      ['USD', 'break'],
    ]);
    expect(report.results.filter((r) => r.status === 'break')).toEqual([expect.objectContaining({ difference: '100' })]);
    expect(report.results.find((r) => r.currency === 'GBP')!.gateway_balance).toBe('9007199254740993');
    expect(report.summary.total).toMatchObject({ matched: 2, break: 1, missing_in_ledger: 1, missing_in_gateway: 1 });

    // The corrected books: JPY is not the gateway's; its row is replaced by the right currencies.
    const corrected = file(
      'books-2.jsonl',
      ['{"business_date":"2026-11-20","currency":"USD","balance":50000}', '{"business_date":"2026-11-20","currency":"GBP","balance":9007199254740993}'].join('\n'),
    );
    expect((await cli('ledger', 'import', corrected)).stdout).toMatch(/1 new, 1 replaced/);
    await withDb((db) => db.deleteFrom('expected_balances').where('currency', '=', 'JPY').execute());
    const clean = await cli('reconcile', '--date', '2026-11-20');
    expect(clean.code, clean.stdout).toBe(0);
    expect(clean.stdout).toMatch(/Every result matched\./);

    const rows = await withDb((db) => db.selectFrom('reconciliation_results').select(['currency', 'status']).where('business_date', '=', '2026-11-20').orderBy('currency').execute());
    expect(rows).toEqual(['CHF', 'EUR', 'GBP', 'USD'].map((currency) => ({ currency, status: 'matched' })));
    const sources = await withDb((db) => db.selectFrom('expected_balances').select(['currency', 'source']).orderBy('currency').execute());
    expect(sources).toEqual([
      { currency: 'CHF', source: 'books-1.csv' },
      { currency: 'EUR', source: 'books-1.csv' },
      { currency: 'GBP', source: 'books-2.jsonl' },
      { currency: 'USD', source: 'books-2.jsonl' },
    ]);
  });

  it('imports nothing from a books file with bad rows and names each bad line', async () => {
    const before = await withDb((db) => db.selectFrom('expected_balances').selectAll().orderBy('currency').execute());
    const bad = file('books-bad.csv', 'business_date,currency,balance\n2026-11-21,EUR,1\n2026-13-01,EUR,1\n2026-11-21,EURO,1\n2026-11-21,USD,1.5\n');
    const result = await cli('ledger', 'import', bad);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^InputFileError: books-bad\.csv has 3 problems; nothing was imported:/);
    expect(result.stderr).toMatch(/line 3: business_date "2026-13-01" is not a real date/);
    expect(result.stderr).toMatch(/line 4: currency "EURO" is not a three-letter/);
    expect(result.stderr).toMatch(/line 5: balance "1\.5" is not an exact integer/);
    expect(await withDb((db) => db.selectFrom('expected_balances').selectAll().orderBy('currency').execute())).toEqual(before);
  });

  it('refuses a row whose account contradicts --account, and an unknown --account', async () => {
    const books = file('books-acct.csv', 'business_date,currency,balance,account\n2026-11-21,EUR,1,other\n');
    const result = await cli('ledger', 'import', books, '--account', 'default');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/line 2: account "other" contradicts --account default/);
    const unknown = await cli('reconcile', '--date', '2026-11-20', '--account', 'asia');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/There is no account named "asia". Configured accounts: default\./);
  });

  it('exits 3 with one no_snapshot row for a date without a snapshot, and refuses a date that is not real', async () => {
    const result = await cli('reconcile', '--date', '2026-11-19');
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/2026-11-19\s+default\s+no_snapshot/);
    const bad = await cli('reconcile', '--date', '2026-02-30');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--date "2026-02-30" is not a real date: use YYYY-MM-DD/);
  });
});
