import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
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
  sandbox = await startSandbox({ port: 0, wallets: 6, seed: 11 });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-reconcile-cli-'));
  // DATABASE_URL '' keeps a developer's .env from pointing the embedded run elsewhere.
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

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

function booksCsv(name: string, businessDate: string, balances: ReadonlyArray<{ currency: string; balance: bigint }>): string {
  return file(name, `business_date,currency,balance\n${balances.map((b) => `${businessDate},${b.currency},${b.balance}`).join('\n')}\n`);
}

interface JsonReport {
  summary: { total: Record<string, number>; exitCode: number; unreconciledDates: string[] };
  results: Array<{ currency: string | null; status: string; difference: string | null; gateway_balance: string | null; expected_balance: string | null }>;
}

describe(`reconcile, ledger import and report from the command line (${backend})`, () => {
  it('with a snapshot from the emulator finds one break of 100, one missing on each side, the rest matched; corrected books exit 0', async () => {
    const captured = await cli('snapshot');
    expect(captured.code, captured.stdout + captured.stderr).toBe(0);
    // The business date is the run's own, so a test crossing midnight reconciles the day it captured.
    const run = await withDb((db) => db.selectFrom('snapshot_runs').select(['id', 'business_date']).where('status', '=', 'succeeded').executeTakeFirstOrThrow());
    const date = run.business_date;
    const wallets = sandbox.wallets;
    expect(wallets).toHaveLength(6);
    const [omitted, misstated, ...rest] = wallets;
    const extra = ['XTS', 'ZZZ'].find((c) => !wallets.some((w) => w.currency === c))!;

    // Omits one currency, misstates another by 100 (the books say 100 less), adds one the gateway lacks.
    const books = booksCsv('books-1.csv', date, [{ currency: misstated!.currency, balance: misstated!.balance - 100n }, ...rest, { currency: extra, balance: 300n }]);
    const imported = await cli('ledger', 'import', '--amounts', 'minor', books);
    expect(imported.code, imported.stderr).toBe(0);
    // The snapshot's date was reconciled at once (awaiting its books): the books make it current.
    expect(imported.stdout).toBe(`Imported 6 expected balances from books-1.csv for default, ${date}: 6 new, 0 changed, 0 unchanged, 0 removed. Re-reconciled 1 date whose books changed.`);

    const reconciled = await cli('reconcile', '--date', date);
    expect(reconciled.code, reconciled.stderr).toBe(3);
    expect(reconciled.stdout).toMatch(/3 results need attention/);

    const json = await cli('report', '--date', date, '--format', 'json');
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as JsonReport;
    const byStatus = (status: string) => report.results.filter((r) => r.status === status);
    // difference = gateway − books = 100.
    expect(byStatus('break')).toEqual([
      expect.objectContaining({ currency: misstated!.currency, difference: '100', gateway_balance: misstated!.balance.toString(), expected_balance: (misstated!.balance - 100n).toString() }),
    ]);
    expect(byStatus('missing_in_ledger')).toEqual([expect.objectContaining({ currency: omitted!.currency, gateway_balance: omitted!.balance.toString() })]);
    expect(byStatus('missing_in_gateway')).toEqual([expect.objectContaining({ currency: extra, gateway_balance: null })]);
    expect(byStatus('matched').map((r) => r.currency)).toEqual(rest.map((w) => w.currency));
    expect(report.results).toHaveLength(7);
    expect(report.summary.total).toMatchObject({ matched: 4, break: 1, missing_in_ledger: 1, missing_in_gateway: 1, endpoint_mismatch: 0, no_snapshot: 0 });
    expect(report.summary.exitCode).toBe(3);

    // The corrected books: a full file for the day. Its currency the gateway lacks is removed
    // by the import itself; nothing else touches expected_balances.
    const corrected = booksCsv('books-2.csv', date, wallets);
    const reimported = await cli('ledger', 'import', '--amounts', 'minor', '--replace-day', corrected);
    expect(reimported.code, reimported.stderr).toBe(0);
    // The date was reconciled with the first books: it is reconciled again with the corrected ones.
    expect(reimported.stdout).toMatch(/: 1 new, 1 changed, 4 unchanged, 1 removed\. Re-reconciled 1 date whose books changed\.$/);
    const clean = await cli('reconcile', '--date', date);
    expect(clean.code, clean.stdout).toBe(0);
    expect(clean.stdout).toMatch(/Every result matched\.$/);

    const rows = await withDb((db) => db.selectFrom('reconciliation_results').select(['currency', 'status', 'run_id']).where('business_date', '=', date).orderBy('currency').execute());
    expect(rows).toEqual(wallets.map((w) => ({ currency: w.currency, status: 'matched', run_id: run.id })));
    const sources = await withDb((db) => db.selectFrom('expected_balances').select(['currency', 'source']).orderBy('currency').execute());
    expect(sources).toEqual(wallets.map((w) => ({ currency: w.currency, source: 'books-2.csv' })));
  });

  it('imports nothing from a books file with bad rows and names each bad line', async () => {
    const before = await withDb((db) => db.selectFrom('expected_balances').selectAll().orderBy('currency').execute());
    const bad = file('books-bad.csv', 'business_date,currency,balance\n2026-11-21,EUR,1\n2026-13-01,EUR,1\n2026-11-21,EURO,1\n2026-11-21,USD,1.5\n');
    const result = await cli('ledger', 'import', '--amounts', 'minor', bad);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^books-bad\.csv has 3 problems; nothing was imported:/);
    expect(result.stderr).toMatch(/line 3: business_date "2026-13-01" is not a real date/);
    expect(result.stderr).toMatch(/line 4: currency "EURO" is not a three-letter/);
    expect(result.stderr).toMatch(/line 5: balance "1\.5" is not an exact integer/);
    expect(await withDb((db) => db.selectFrom('expected_balances').selectAll().orderBy('currency').execute())).toEqual(before);
  });

  it('refuses a row whose account contradicts --account, and an unknown --account once, with exit code 2', async () => {
    const books = file('books-acct.csv', 'business_date,currency,balance,account\n2026-11-21,EUR,1,other\n');
    const result = await cli('ledger', 'import', '--amounts', 'minor', books, '--account', 'default');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/line 2: account "other" contradicts --account default/);
    const unknown = await cli('reconcile', '--date', '2026-11-20', '--account', 'asia');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/There is no account named "asia". Configured accounts: default\./);

    const many = file('books-many.csv', 'business_date,currency,balance\n2026-11-20,EUR,1\n2026-11-20,USD,2\n2026-11-20,GBP,3\n');
    const typo = await cli('ledger', 'import', '--amounts', 'minor', many, '--account', 'defualt');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe('There is no account named "defualt". Configured accounts: default.');
    const report = await cli('report', '--date', '2026-11-20', '--account', 'defualt');
    expect(report.code).toBe(2);
    expect(report.stdout).toBe('');
    expect(report.stderr).toBe('There is no account named "defualt". Configured accounts: default.');
  });

  it('exits 3 with one no_snapshot row for a date without a snapshot, and refuses a date that is not real', async () => {
    const result = await cli('reconcile', '--date', '2026-11-19');
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/2026-11-19\s+default\s+no_snapshot/);
    const bad = await cli('reconcile', '--date', '2026-02-30');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--date "2026-02-30" is not a real date: use YYYY-MM-DD/);
  });

  it('refuses a date after today in RECON_TIMEZONE with exit code 2 and stores nothing for it', async () => {
    const future = await cli('reconcile', '--date', '2999-01-01');
    expect(future.code).toBe(2);
    expect(future.stderr).toMatch(/^--date 2999-01-01 is in the future \(the current business date is \d{4}-\d{2}-\d{2} in UTC\)/);
    expect(await withDb((db) => db.selectFrom('reconciliation_results').selectAll().where('business_date', '=', '2999-01-01').execute())).toEqual([]);
  });

  it('says when a date can be reconciled in local time with its zone, not in UTC', async () => {
    // The current business date in Berlin: its cut-off (midnight that ends it) is still ahead.
    const berlinToday = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
    const early = await runCliInProcess(['reconcile', '--date', berlinToday], { ...env, RECON_TIMEZONE: 'Europe/Berlin', RECON_CUTOFF: '00:00' });
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(/cannot be reconciled yet: its cut-off is \d{4}-\d{2}-\d{2} 00:00 CES?T \(RECON_CUTOFF 00:00 in Europe\/Berlin\)/);
    expect(early.stderr).not.toMatch(/\d{2}:\d{2}:\d{2}\.\d{3}Z/);
  });
});
