import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// The ledger import's dry run and a case's history print amounts as RECON_LOCALE writes numbers
// (de-DE: 12.500.000,00); their JSON stays canonical, whoever reads it.
const DATE = '2026-11-16';
const clock = new FixedClock('2026-11-17T06:00:00Z');

let t: TestDatabase;
let dir: string;
let env: Record<string, string>;

const cli = (locale: string, ...args: string[]) => runCliInProcess(args, { ...env, RECON_LOCALE: locale }, { clock });

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  await serveToCommands(t);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-locale-amounts-'));
  env = { DATABASE_URL: '', ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
  // The gateway held EUR 12,500,125.00 at the end of the day; the books will say 12,500,000.00.
  await withDatabase(t, async (db) => {
    const at = new Date(`${DATE}T23:55:00Z`);
    const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate: DATE, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
    await insertSnapshotRows(db, runId, 'default', at, [{ currency: 'EUR', balance: 1_250_012_500n, singleBalance: 1_250_012_500n }]);
    await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 2 });
  });
}, 120_000);

afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`amounts in the locale: ledger import dry run and case history (${backend})`, { timeout: 120_000 }, () => {
  it('writes the dry run of a books import in the locale', async () => {
    const books = path.join(dir, 'books.csv');
    writeFileSync(books, `business_date,currency,balance\n${DATE},EUR,12500000.00\n`);
    const de = await cli('de-DE', 'ledger', 'import', books, '--dry-run');
    expect(de.code, de.stderr).toBe(0);
    expect(de.stdout).toContain(`new       default ${DATE} EUR: 12.500.000,00`);
    const us = await cli('en-US', 'ledger', 'import', books, '--dry-run');
    expect(us.stdout).toContain(`new       default ${DATE} EUR: 12,500,000.00`);
    const imported = await cli('de-DE', 'ledger', 'import', books);
    expect(imported.code, imported.stderr).toBe(0);
    const reconciled = await cli('de-DE', 'reconcile', '--date', DATE);
    expect(reconciled.stdout).toContain('125,00');
  });

  it('shows the case history lines in the locale, and its JSON canonical', async () => {
    const id = await withDatabase(t, async (db) => (await db.selectFrom('reconciliation_cases').select('id').executeTakeFirstOrThrow()).id);
    const de = await cli('de-DE', 'cases', 'show', String(id));
    expect(de.code, de.stderr).toBe(0);
    const history = de.stdout.slice(de.stdout.indexOf('History:'));
    expect(history).toContain('difference EUR 125,00');
    expect(history).not.toContain('EUR 125.00');
    const us = await cli('en-US', 'cases', 'show', String(id));
    expect(us.stdout.slice(us.stdout.indexOf('History:'))).toContain('difference EUR 125.00');
    const json = await cli('de-DE', 'cases', 'show', String(id), '--json');
    const parsed = JSON.parse(json.stdout) as { events: { note: string | null }[] };
    expect(parsed.events.map((e) => e.note).join('\n')).toContain('difference EUR 125.00');
  });
});
