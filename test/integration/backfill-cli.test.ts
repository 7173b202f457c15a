import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgressBar } from '../../src/cli/progress-line.js';
import { FixedClock, previousDate } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { sandboxEnv } from '../helpers/test-context.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

// The command and the test read "now" from one frozen clock: just after the cut-off of "today",
// inside its capture window (a date is reconciled only once its cut-off has passed).
const clock = new FixedClock('2026-11-22T00:30:00Z');
const today = '2026-11-21';
const yesterday = previousDate(today);
const dayBefore = previousDate(yesterday);

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (...args: string[]) => runCliInProcess(args, env, { clock });

function balanceFile(name: string, dates: readonly string[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, `business_date,currency,balance\n${dates.flatMap((d) => sandbox.wallets.map((w) => `${d},${w.currency},${w.balance}`)).join('\n')}\n`);
  return file;
}

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 3, seed: 9 });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-backfill-cli-'));
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`wallet-recon backfill (${backend})`, () => {
  it('prints the plan with --dry-run and writes nothing', async () => {
    const result = await cli('backfill', '--from', dayBefore, '--to', today, '--dry-run');
    expect(result.code).toBe(3);
    expect(result.stdout.split('\n')).toEqual([
      'Dry run: nothing will be written. The plan:',
      `${dayBefore}  GAP (past date: the gateway cannot report it; use --import)  gaps 1`,
      `${yesterday}  GAP (past date: the gateway cannot report it; use --import)  gaps 1`,
      `${today}  would capture now (its capture window is open)  gaps 0`,
      `Would leave gaps on ${dayBefore}, ${yesterday}: import the gateway's statements for them with --import FILE.`,
    ]);
    expect(await withDb((db) => db.selectFrom('snapshot_runs').selectAll().execute())).toEqual([]);
  }, 60_000);

  it('over three days with two past gaps exits 3 naming them; with the statements it exits 0 and daily_balances covers all three', async () => {
    expect((await cli('ledger', 'import', '--amounts', 'minor', balanceFile('books.csv', [dayBefore, yesterday, today]))).code).toBe(0);

    const gaps = await cli('backfill', '--from', dayBefore, '--to', today);
    expect(gaps.code, gaps.stderr).toBe(3);
    expect(gaps.stdout).toMatch(new RegExp(`^${dayBefore}  GAP .*  matched 0  not matched 0 \\(breaks 0\\)  gaps 1$`, 'm'));
    expect(gaps.stdout).toMatch(new RegExp(`^${today}  captured now \\(run \\d+\\)  matched 3  not matched 0 \\(breaks 0\\)  gaps 0$`, 'm'));
    expect(gaps.stdout).toContain(`Gaps remain on ${dayBefore}, ${yesterday}`);

    const filled = await cli('backfill', '--from', dayBefore, '--to', today, '--import', balanceFile('statements.csv', [dayBefore, yesterday]));
    expect(filled.code, filled.stdout + filled.stderr).toBe(0);
    expect(filled.stdout).toMatch(new RegExp(`^${dayBefore}  imported from statements.csv \\(run \\d+\\)  matched 3  not matched 0 \\(breaks 0\\)  gaps 0$`, 'm'));
    expect(filled.stdout).toMatch(new RegExp(`^${today}  already captured \\(run \\d+\\)  matched 3  not matched 0 \\(breaks 0\\)  gaps 0$`, 'm'));
    expect(filled.stdout).toMatch(/Every date has a snapshot and reconciles clean\.$/);
    const covered = await withDb((db) => db.selectFrom('daily_balances').select('business_date').distinct().orderBy('business_date').execute());
    expect(covered.map((r) => r.business_date)).toEqual([dayBefore, yesterday, today]);
  }, 60_000);

  it("reads statements in the gateway's unit and decimals: GBP 45000 is 45,000 when GATEWAY_AMOUNT_UNIT=major, a non-ISO code gets its configured scale", async () => {
    const date = '2026-11-10';
    const file = path.join(dir, 'gateway-statements.csv');
    writeFileSync(file, `business_date,currency,balance\n${date},GBP,45000\n${date},QQQ,1500\n`);
    const major = { ...env, GATEWAY_AMOUNT_UNIT: 'major' };

    // In minor units, a code whose decimals nobody set is refused before anything is written, naming the line and the setting.
    const refused = await runCliInProcess(['backfill', '--from', date, '--to', date, '--import', file], env, { clock });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('gateway-statements.csv line 3: currency QQQ is not an ISO 4217 currency and GATEWAY_AMOUNT_DECIMALS_QQQ');
    expect(refused.stderr).toContain('nothing was written');
    const runsOf = () => withDb((db) => db.selectFrom('snapshot_runs').select('id').where('business_date', '=', date).execute());
    expect(await runsOf()).toEqual([]);

    const filled = await runCliInProcess(['backfill', '--from', date, '--to', date, '--import', file], { ...major, GATEWAY_AMOUNT_DECIMALS_QQQ: '3' }, { clock });
    expect(filled.stdout).toMatch(new RegExp(`^${date}  imported from gateway-statements.csv \\(run \\d+\\)`, 'm'));
    const rows = await withDb((db) =>
      db.selectFrom('balance_snapshots').innerJoin('snapshot_runs', 'snapshot_runs.id', 'balance_snapshots.run_id').select(['currency', 'balance', 'scale']).where('snapshot_runs.business_date', '=', date).orderBy('currency').execute(),
    );
    // Stored as the gateway wrote them, with the scale that says what the integer means: GBP 45000 whole pounds, QQQ 1.500.
    expect(rows).toEqual([
      { currency: 'GBP', balance: '45000', scale: 0 },
      { currency: 'QQQ', balance: '1500', scale: 3 },
    ]);
  }, 60_000);

  it('refuses a future date and a missing --to with exit code 2', async () => {
    const future = await cli('backfill', '--from', today, '--to', '2999-01-01');
    expect(future.code).toBe(2);
    expect(future.stderr).toMatch(/--to 2999-01-01 is in the future/);
    const missing = await cli('backfill', '--from', today);
    expect(missing.code).toBe(2);
  }, 60_000);

  it('for a capture that failed while its window is open, points at the cause, not at statements', async () => {
    const later = new FixedClock('2026-11-24T23:30:00Z');
    const result = await runCliInProcess(['backfill', '--from', '2026-11-24', '--to', '2026-11-24'], { ...env, GATEWAY_API_SECRET: 'wrong-secret-for-this-test' }, { clock: later });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^2026-11-24 {2}capture failed: .*GATEWAY_API_SECRET.*$/m);
    expect(result.stdout).toContain(
      "The capture of 2026-11-24 failed while its capture window is still open (until 2026-11-25 03:00 UTC): the gateway can still report that day, so no statements are needed. Fix what the failure above says (for a refused API key or secret, the account's credentials) and run backfill again before the window closes, or let the worker capture it.",
    );
    expect(result.stdout).not.toContain('--import');
  }, 60_000);

  it('draws its progress bar only on a terminal', () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (text: string) => written.push(text) };
    const bar = createProgressBar(terminal, 10);
    bar.update(1, 4);
    bar.update(4, 4);
    bar.done();
    expect(written).toEqual(['\r\x1b[2K[###.......] 1/4', '\r\x1b[2K[##########] 4/4', '\r\x1b[2K']);
    const pipe = { isTTY: false, write: (text: string) => written.push(text) };
    createProgressBar(pipe).update(1, 2);
    createProgressBar(undefined).update(1, 2);
    expect(written).toHaveLength(3);
  });
});
