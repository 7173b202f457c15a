import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import { addDays } from '../../src/business-date/zoned-time.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { childEnvironment, collect, runCliProcess, type CliResult } from '../helpers/run-cli.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// The built CLI runs on the real clock: the signed date is the day before yesterday (UTC), whose
// cut-off and capture window are over while its books (deadline 3 days) are still awaited.
const DATE = addDays(new Date().toISOString().slice(0, 10), -2);
const root = path.join(import.meta.dirname, '..', '..');
const PASSWORD = { anna: 'anna-preparer-pw-1', ben: 'ben-approver-pw-22' };
let t: TestDatabase;
let dir: string;
let env: Record<string, string>;

const books = (name: string, eur: string) => {
  const file = path.join(dir, name);
  writeFileSync(file, `business_date,currency,balance\n${DATE},EUR,${eur}\n${DATE},USD,5000.00\n`);
  return file;
};
const cli = (...args: string[]) => runCliProcess(args, env);
function cliWithStdin(input: string, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, ['--liftoff-only', path.join(root, 'bin', 'wallet-recon.js'), ...args], { cwd: root, env: childEnvironment(env), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(input);
  return collect(child);
}
const signoff = (step: string, user: keyof typeof PASSWORD, ...extra: string[]) => cliWithStdin(PASSWORD[user], 'signoff', step, '--date', DATE, '--as', user, '--password-stdin', ...extra);
const storedBooks = () => withDatabase(t, (db) => db.selectFrom('expected_balances').select(['currency', 'balance', 'import_id']).where('business_date', '=', DATE).orderBy('currency').execute());

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-signoff-close-'));
  env = { DATABASE_URL: '', ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent', RECON_AUTO_PREPARE: 'off', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: '00:00', RECON_BOOKS_DEADLINE: '3d' };
  const ctx = createTestContext(t, env);
  const cutoffAt = new Date(`${addDays(DATE, 1)}T00:00:00Z`);
  const at = new Date(cutoffAt.getTime() - 300_000);
  const runId = await insertRunningRun(t.handle.db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate: DATE, startedAt: at, timing: { cutoffAt, driftSeconds: -300, endOfDay: true } });
  await insertSnapshotRows(t.handle.db, runId, 'default', at, [
    { currency: 'EUR', balance: 1_234_567_890n, singleBalance: 1_234_567_890n },
    { currency: 'USD', balance: 500_000n, singleBalance: 500_000n },
  ]);
  await markRunSucceeded(t.handle.db, runId, at, { walletsReported: 2, walletsFetched: 2, pagesFetched: 1, requests: 3 });
  await runReconcileJob(ctx, { date: DATE });
  await addUser(ctx, 'anna', 'preparer', PASSWORD.anna, 'test');
  await addUser(ctx, 'ben', 'approver', PASSWORD.ben, 'test');
  await serveToCommands(t);
}, 120_000);

afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

// One story, step by step, each step a process of the built CLI (the "Done when").
describe(`the close as evidence through the built CLI (${backend})`, { timeout: 240_000 }, () => {
  it('refuses to prepare a date awaiting books, exit 2 naming the account and awaiting_books; prepares and approves it once its books are in', async () => {
    const awaiting = await signoff('prepare', 'anna');
    expect(awaiting.code, awaiting.stderr).toBe(2);
    expect(awaiting.stderr).toContain(`${DATE} cannot be signed yet: default is awaiting_books (its books have not been imported`);
    expect(await withDatabase(t, (db) => db.selectFrom('signoffs').selectAll().execute())).toEqual([]);

    const imported = await cli('ledger', 'import', books('books.csv', '12345678.90'));
    expect(imported.code, imported.stderr).toBe(0);
    const prepared = await signoff('prepare', 'anna');
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(prepared.stdout).toMatch(new RegExp(`Sign-off #1 of ${DATE} prepared by anna`));
    const approved = await signoff('approve', 'ben');
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toContain(`${DATE} is now locked for default`);
  });

  it('lists what was sealed in signoff show --json: run, books imports, previous run, tolerance, accounts, case states, results digest', async () => {
    const shown = await cli('signoff', 'show', '--date', DATE, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const json = JSON.parse(shown.stdout);
    expect(json.state).toBe('approved');
    const run = await withDatabase(t, (db) => db.selectFrom('snapshot_runs').select('id').where('business_date', '=', DATE).executeTakeFirstOrThrow());
    const importId = (await storedBooks())[0]!.import_id;
    expect(json.signoffs[0].inputs).toMatchObject({
      accountSet: ['default'],
      tolerance: { default: '0', bps: 0, byCurrency: {} },
      accounts: [{ account: 'default', runId: run.id, booksImportId: importId, booksImportIds: [importId], previousRunId: null, cases: {} }],
    });
    expect(json.signoffs[0].inputs.accounts[0].resultsDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(json.signoffs[0]).toMatchObject({ prepared_by: 'anna', approved_by: 'ben', report_matches_seal: true });
  });

  it('refuses a changed ledger import of the locked date (exit 2 naming sign-off and approver, books unchanged) and takes an identical one as unchanged', async () => {
    const before = await storedBooks();
    const changed = await cli('ledger', 'import', books('books-changed.csv', '12345677.90'));
    expect(changed.code).toBe(2);
    expect(changed.stderr).toContain(`${DATE} of account "default" is signed off and locked (sign-off #1, approved by ben`);
    expect(changed.stderr).toContain(`wallet-recon signoff reopen --date ${DATE}`);
    expect(await storedBooks()).toEqual(before);

    // A multi-date file that would change the locked date is refused whole.
    const other = addDays(DATE, -1);
    const multi = path.join(dir, 'books-multi.csv');
    writeFileSync(multi, `business_date,currency,balance\n${other},EUR,1.00\n${DATE},EUR,12345677.90\n${DATE},USD,5000.00\n`);
    expect((await cli('ledger', 'import', multi)).code).toBe(2);
    expect(await withDatabase(t, (db) => db.selectFrom('expected_balances').select('currency').where('business_date', '=', other).execute())).toEqual([]);

    // One whose rows for the locked date are identical goes in for its other dates.
    const mixed = path.join(dir, 'books-mixed.csv');
    writeFileSync(mixed, `business_date,currency,balance\n${other},EUR,1.00\n${DATE},EUR,12345678.90\n${DATE},USD,5000.00\n`);
    const mixedImport = await cli('ledger', 'import', mixed);
    expect(mixedImport.code, mixedImport.stderr).toBe(0);
    expect(mixedImport.stdout).toContain('1 new, 0 changed, 2 unchanged, 0 removed');
    expect(await withDatabase(t, (db) => db.selectFrom('expected_balances').select('currency').where('business_date', '=', other).execute())).toEqual([{ currency: 'EUR' }]);
    expect(await storedBooks()).toEqual(before);

    const same = await cli('ledger', 'import', books('books-same.csv', '12345678.90'));
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toContain('0 new, 0 changed, 2 unchanged, 0 removed');
    expect(await storedBooks()).toEqual(before);

    const reconciled = await cli('reconcile', '--date', DATE);
    expect(reconciled.code, reconciled.stderr).toBe(0);
    expect(JSON.parse((await cli('signoff', 'show', '--date', DATE, '--json')).stdout).state).toBe('approved');
  });

  it('reopens with a note: the changed import then goes in and the date shows reopened, its sign-off kept in the history', async () => {
    const noNote = await signoff('reopen', 'ben', '--note', ' ');
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toContain('signoff reopen needs --note TEXT');
    const byPreparer = await signoff('reopen', 'anna', '--note', 'typo');
    expect(byPreparer.code).toBe(1);
    expect(byPreparer.stderr).toContain('only an approver or an admin can reopen a sign-off');
    const reopened = await signoff('reopen', 'ben', '--note', 'EUR fee booked on the wrong day');
    expect(reopened.code, reopened.stderr).toBe(0);
    expect(reopened.stdout).toContain(`Sign-off #1 of ${DATE} reopened by ben`);
    const changed = await cli('ledger', 'import', books('books-changed-2.csv', '12345677.90'));
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toContain('0 new, 1 changed, 1 unchanged, 0 removed');
    const shown = await cli('signoff', 'show', '--date', DATE);
    expect(shown.stdout).toMatch(new RegExp(`^${DATE}: reopened`));
    expect(shown.stdout).toContain('Reopened by ben at');
    expect(shown.stdout).toContain('EUR fee booked on the wrong day');
  });

  it('verifies every seal (exit 0), then names the sign-off whose report was altered past the triggers (exit 1); show and the console refuse it (409)', async () => {
    const clean = await cli('signoff', 'verify');
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/^Every seal holds: 1 sign-off\(s\), 1 sealed report\(s\), \d+ case event\(s\), \d+ audit row\(s\), 0 signature\(s\)\.$/m);

    const copy = path.join(dir, 'sealed.html');
    const written = await cli('signoff', 'show', '--date', DATE, '--report', copy);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toMatch(/Wrote the sealed report of sign-off #1 to .*sealed\.html \(SHA-256 [0-9a-f]{64}; prepared by anna at [^;]+ UTC; approved by ben at [^)]+ UTC\)\./);
    expect(readFileSync(copy, 'utf8')).toMatch(/<tr><th>Prepared by<\/th><td>anna<\/td>/);

    await withDatabase(t, (db) =>
      db.transaction().execute(async (trx) => {
        await sql`set local session_replication_role = replica`.execute(trx);
        await sql`update signoffs set report_html = replace(report_html, '</body>', '<p>nothing to see</p></body>') where id = 1`.execute(trx);
      }),
    );
    const broken = await cli('signoff', 'verify');
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`Seal broken: sign-off #1 of ${DATE}: its sealed report does not match its seal`);
    expect((await cli('signoff', 'verify', '--date', DATE)).code).toBe(1);
    const shown = await cli('signoff', 'show', '--date', DATE);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('This sealed report does not match its seal: sign-off #1');

    await withDatabase(t, async (db) => {
      const base = createTestContext(t, env);
      const app = await buildConsoleApp({ ctx: { ...base, database: { ...base.database, db } } });
      try {
        const client = new ConsoleClient(app);
        await client.signIn('ben', PASSWORD.ben);
        const report = await client.get('/signoffs/1/report');
        expect(report.statusCode).toBe(409);
        expect(report.body).toContain('This sealed report does not match its seal');
        expect(report.body).not.toContain('nothing to see');
      } finally {
        await app.close();
      }
    });
  });

  it('refuses, in the database, an insert that already carries an approval, and rewriting a chained audit row', async () => {
    await withDatabase(t, async (db) => {
      await expect(
        sql`insert into signoffs (account_set, business_date, prepared_by, prepared_at, approved_by, approved_at, report_sha256, report_html, inputs)
          values ('{default}', ${addDays(DATE, -5)}, 'mallory', now(), 'eve', now(), ${'0'.repeat(64)}, '<html></html>', '{}')`.execute(db),
      ).rejects.toThrow(/an insert that already carries an approval, invalidation or reopening is refused/);
      await expect(sql`update console_audit set user_name = 'eve'`.execute(db)).rejects.toThrow(/console_audit is append-only/);
    });
  });
});
