import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { importBooksFile } from '../../src/books/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one handle at a time: the CLI opens it per command.
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 3, seed: 4 });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-business-date-'));
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const at = (iso: string, ...args: string[]) => runCliInProcess(args, env, { clock: new FixedClock(iso) });

function books(name: string, date: string, wallets: ReadonlyArray<{ currency: string; balance: bigint }>): string {
  const file = path.join(dir, name);
  writeFileSync(file, ['business_date,currency,balance', ...wallets.map((w) => `${date},${w.currency},${w.balance}`)].join('\n'));
  return file;
}

describe(`business dates on the command line (${backend})`, () => {
  it('snapshot and runs say which business date a capture serves and how it stands to the cut-off', async () => {
    const nightly = await at('2026-11-20T23:55:00Z', 'snapshot');
    expect(nightly.code, nightly.stderr).toBe(0);
    expect(nightly.stdout).toContain('2026-11-20, end of day, 5 min before cut-off');
    const afternoon = await at('2026-11-21T14:00:00Z', 'snapshot');
    expect(afternoon.stdout).toContain('2026-11-21, intraday');
    const runs = await at('2026-11-21T14:00:00Z', 'runs');
    expect(runs.stdout).toMatch(/default\s+2026-11-21\s+no \(intraday\)\s+manual\s+succeeded/);
    expect(runs.stdout).toMatch(/default\s+2026-11-20\s+yes, 5 min before\s+manual\s+succeeded/);
  });

  it('reconcile without --date takes the latest business date whose cut-off has passed, not today', async () => {
    const result = await at('2026-11-21T14:00:00Z', 'reconcile');
    expect(result.stdout).toContain('2026-11-20');
    const dates = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select('business_date').distinct().execute());
    expect(dates).toEqual([{ business_date: '2026-11-20' }]);
  });

  it('ledger import reconciles again the dates it changed, and says how many', async () => {
    const result = await at('2026-11-21T15:00:00Z', 'ledger', 'import', '--amounts', 'minor', books('books-20.csv', '2026-11-20', sandbox.wallets));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Re-reconciled 1 date whose books changed\.$/);
    const statuses = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select('status').where('business_date', '=', '2026-11-20').execute());
    expect(statuses.every((r) => r.status === 'matched')).toBe(true);
  });

  it('a later end-of-day capture nearer the cut-off becomes the snapshot and re-reconciles the date', async () => {
    sandbox.setBalance(sandbox.wallets[0]!.currency, 1n);
    // 23:58 is nearer the cut-off than 23:55: it is the day's snapshot now, and it breaks.
    const result = await at('2026-11-20T23:58:00Z', 'snapshot');
    expect(result.stdout).toContain('2026-11-20, end of day, 2 min before cut-off');
    // Before the cut-off the date cannot be reconciled: the snapshot says when it will be.
    expect(result.stdout).toContain('2026-11-20 is reconciled once its cut-off passes (2026-11-21 00:00 UTC)');
    // The next command after the cut-off that changes an input, or the worker, pays what is owed.
    const settled = await at('2026-11-21T00:01:00Z', 'reconcile', '--date', '2026-11-20');
    expect(settled.code, settled.stderr).toBe(3);
    const broken = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select(['currency', 'status']).where('status', '=', 'break').execute());
    expect(broken).toEqual([{ currency: sandbox.wallets[0]!.currency, status: 'break' }]);
  });

  it.skipIf(backend !== 'postgres')('two imports of the same account and date take turns: the day ends as one file, never their union', async () => {
    const ctx: AppContext = createTestContext(t, sandboxEnv(sandbox), { clock: new FixedClock('2026-11-22T12:00:00Z') });
    const a = books('books-a.csv', '2026-11-21', [{ currency: 'EUR', balance: 1n }, { currency: 'USD', balance: 2n }]);
    const b = books('books-b.csv', '2026-11-21', [{ currency: 'EUR', balance: 3n }, { currency: 'GBP', balance: 4n }]);
    for (let round = 0; round < 5; round++) {
      await Promise.all([importBooksFile(ctx, a, { amounts: 'minor', replaceDay: true }), importBooksFile(ctx, b, { amounts: 'minor', replaceDay: true })]);
      const day = await t.handle.db.selectFrom('expected_balances').select(['currency', 'source']).where('business_date', '=', '2026-11-21').orderBy('currency').execute();
      const sources = new Set(day.map((r) => r.source));
      expect(sources.size).toBe(1);
      expect(day.map((r) => r.currency)).toEqual(sources.has('books-a.csv') ? ['EUR', 'USD'] : ['EUR', 'GBP']);
    }
  });
});
