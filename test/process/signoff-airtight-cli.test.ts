import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import { addDays } from '../../src/business-date/zoned-time.js';
import { addUser } from '../../src/console/console-users.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { loadSealedDigests } from '../../src/db/signoff.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { writeCamt053 } from '../../src/statements/index.js';
import { childEnvironment, collect, runCliProcess, type CliResult } from '../helpers/run-cli.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// The built CLI runs on the real clock: the signed date is the day before yesterday (UTC), whose
// cut-off and capture window are over.
const DATE = addDays(new Date().toISOString().slice(0, 10), -2);
const root = path.join(import.meta.dirname, '..', '..');
const PASSWORD = { anna: 'anna-preparer-pw-1', ben: 'ben-approver-pw-22' };
const IBAN = 'DE89370400440532013000';
let dir: string;

function cliWithStdin(env: Record<string, string>, input: string, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, ['--liftoff-only', path.join(root, 'bin', 'wallet-recon.js'), ...args], { cwd: root, env: childEnvironment(env), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(input);
  return collect(child);
}
const signoffOf = (env: Record<string, string>) => (step: string, user: keyof typeof PASSWORD, ...extra: string[]) =>
  cliWithStdin(env, PASSWORD[user], 'signoff', step, '--date', DATE, '--as', user, '--password-stdin', ...extra);
const file = (name: string, content: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
};

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'wr-signoff-airtight-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe(`an import racing an approval through the built CLI (${backend})`, { timeout: 600_000 }, () => {
  let t: TestDatabase;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await createTestDatabase({ onDisk: true });
    env = { DATABASE_URL: '', ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent', RECON_AUTO_PREPARE: 'off', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: '00:00', RECON_BOOKS_DEADLINE: '3d' };
    const ctx = createTestContext(t, env);
    const cutoffAt = new Date(`${addDays(DATE, 1)}T00:00:00Z`);
    const at = new Date(cutoffAt.getTime() - 300_000);
    const runId = await insertRunningRun(t.handle.db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate: DATE, startedAt: at, timing: { cutoffAt, driftSeconds: -300, endOfDay: true } });
    await insertSnapshotRows(t.handle.db, runId, 'default', at, [{ currency: 'EUR', balance: 4_000n, singleBalance: 4_000n }]);
    await markRunSucceeded(t.handle.db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 2 });
    await runReconcileJob(ctx, { date: DATE });
    await addUser(ctx, 'anna', 'preparer', PASSWORD.anna, 'test');
    await addUser(ctx, 'ben', 'approver', PASSWORD.ben, 'test');
    await serveToCommands(t);
  }, 120_000);
  afterAll(async () => {
    await t?.drop();
  });

  it('a 60,000-line ledger import racing signoff approve ends with one of them refused (exit 2), never an approved date whose books differ from its seal', async () => {
    const cli = (...args: string[]) => runCliProcess(args, env);
    const signoff = signoffOf(env);
    expect((await cli('ledger', 'import', file('books.csv', `business_date,currency,balance\n${DATE},EUR,40.00\n`))).code).toBe(0);
    const prepared = await signoff('prepare', 'anna');
    expect(prepared.code, prepared.stderr).toBe(0);

    // 59,999 lines of earlier days (three currencies a day), then the signed date at 999.00.
    const lines = ['business_date,currency,balance'];
    for (let day = 1; lines.length < 60_000; day++) for (const currency of ['EUR', 'USD', 'GBP']) if (lines.length < 60_000) lines.push(`${addDays(DATE, -day - 30)},${currency},1.00`);
    lines.push(`${DATE},EUR,999.00`);
    const big = file('big.csv', `${lines.join('\n')}\n`);

    const [imported, approved] = await Promise.all([cli('ledger', 'import', big), signoff('approve', 'ben')]);
    const outcome = `import: ${imported.stderr}\napprove: ${approved.stderr}`;
    // One wins. On PostgreSQL the other waits for the inputs lock and is refused (exit 2); the embedded
    // database serves one command at a time, so there the other may instead be turned away at once
    // (exit 4, "in use by another wallet-recon process", nothing written): they never interleave.
    const codes = [imported.code, approved.code];
    expect(codes.filter((c) => c === 0), outcome).toHaveLength(1);
    expect(backend === 'postgres' ? [2] : [2, 4], outcome).toContain(codes.find((c) => c !== 0));
    const shown = JSON.parse((await cli('signoff', 'show', '--date', DATE, '--json')).stdout);
    const books = await withDatabase(t, (db) => db.selectFrom('expected_balances').select(['balance']).where('business_date', '=', DATE).execute());
    if (approved.code === 0) {
      if (imported.code === 2) expect(imported.stderr).toContain(`${DATE} of account "default" is signed off and locked (sign-off #1, approved by ben`);
      expect(shown.state).toBe('approved');
      expect(books.map((b) => String(b.balance))).toEqual(['4000']);
    } else {
      // The import won: the approval meets the date either reconciled with the new books (changed
      // since prepared) or still owed its reconciliation by the import's transaction (owed): both
      // refuse, naming the books.
      if (approved.code === 2) {
        expect(approved.stderr).toMatch(new RegExp(`${DATE} changed since sign-off #1 was prepared: .*default: the books|${DATE} cannot be approved: default is owed \\(results owed \\(books changed\\)`));
      }
      expect(shown.state).not.toBe('approved');
      expect(books.map((b) => String(b.balance))).toEqual(['99900']);
    }
    // Whatever won, an approved date's books are the sealed ones.
    if (shown.state === 'approved') {
      const now = await withDatabase(t, (db) => loadSealedDigests(db, ['default'], DATE));
      expect(now.get('default')!.books).toBe(shown.signoffs[0].inputs.accounts[0].booksDigest);
    }
  });
});

describe(`a bank account's statements as sealed inputs through the built CLI (${backend})`, { timeout: 300_000 }, () => {
  let t: TestDatabase;
  let env: Record<string, string>;
  const statement = (name: string, closingEntry: bigint, sequence = 3) =>
    file(name, writeCamt053({ iban: IBAN, currency: 'EUR', opening: 100_000n, days: [{ sequence, date: DATE, entries: [closingEntry] }] }));
  beforeAll(async () => {
    t = await createTestDatabase({ onDisk: true });
    const accounts = file('accounts.yaml', `bankAccounts:\n  - { name: eu-bank, iban: ${IBAN}, currency: EUR }\n  - { name: nl-bank, iban: NL91ABNA0417164300, currency: EUR }\n`);
    env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', RECON_AUTO_PREPARE: 'off', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: '00:00', RECON_BOOKS_DEADLINE: '3d', RECON_STATEMENT_DEADLINE: '5d', RECON_ACCOUNTS_FILE: accounts };
    const ctx = createTestContext(t, env);
    await addUser(ctx, 'anna', 'preparer', PASSWORD.anna, 'test');
    await addUser(ctx, 'ben', 'approver', PASSWORD.ben, 'test');
    await serveToCommands(t);
  }, 120_000);
  afterAll(async () => {
    await t?.drop();
  });

  it('refuses to prepare while a bank account with books has no statement (exit 2 naming it and awaiting_statement); once it has one, seals its statements with their file SHA-256; a new or replacing statement of the approved date is refused with the lock message', async () => {
    const cli = (...args: string[]) => runCliProcess(args, env);
    const signoff = signoffOf(env);
    expect((await cli('statements', 'import', statement('eu.xml', 5_000n))).code).toBe(0);
    const booked = await cli('ledger', 'import', file('bank-books.csv', `account,business_date,currency,balance\neu-bank,${DATE},EUR,1050.00\nnl-bank,${DATE},EUR,10.00\n`));
    expect(booked.code, booked.stderr).toBe(0);
    const awaiting = await signoff('prepare', 'anna');
    expect(awaiting.code, awaiting.stderr).toBe(2);
    expect(awaiting.stderr).toContain('nl-bank is awaiting_statement');
    expect(await withDatabase(t, (db) => db.selectFrom('signoffs').selectAll().execute())).toEqual([]);

    const us = file('nl.xml', writeCamt053({ iban: 'NL91ABNA0417164300', currency: 'EUR', opening: 0n, days: [{ sequence: 1, date: DATE, entries: [1_000n] }] }));
    const usImported = await cli('statements', 'import', us);
    expect(usImported.code, usImported.stderr).toBe(0);
    const prepared = await signoff('prepare', 'anna');
    expect(prepared.code, prepared.stderr).toBe(0);
    const approved = await signoff('approve', 'ben');
    expect(approved.code, approved.stderr).toBe(0);

    const shown = JSON.parse((await cli('signoff', 'show', '--date', DATE, '--json')).stdout);
    const stored = await withDatabase(t, (db) => db.selectFrom('bank_statements').select(['account', 'statement_id', 'file_sha256']).orderBy('account').execute());
    for (const s of stored) {
      const sealed = shown.signoffs[0].inputs.accounts.find((a: { account: string }) => a.account === s.account);
      expect(sealed.statements).toEqual([{ statement_id: s.statement_id, file_sha256: s.file_sha256 }]);
      expect(s.file_sha256).toMatch(/^[0-9a-f]{64}$/);
    }

    const listed = (await cli('statements', 'list', '--json')).stdout;
    const other = await cli('statements', 'import', statement('eu-other.xml', 6_000n, 4));
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(`${DATE} of account "eu-bank" is signed off and locked (sign-off #1, approved by ben`);
    expect(other.stderr).toContain(`wallet-recon signoff reopen --date ${DATE}`);
    const replaced = await cli('statements', 'import', '--replace', statement('eu-replace.xml', 7_000n));
    expect(replaced.code).toBe(2);
    expect(replaced.stderr).toContain('would replace its stored statement');
    expect((await cli('statements', 'list', '--json')).stdout).toBe(listed);

    // Past the application: the statement tables refuse a write to the locked date themselves.
    await withDatabase(t, async (db) => {
      await expect(db.updateTable('bank_statements').set({ closing: '1' }).where('account', '=', 'eu-bank').execute()).rejects.toThrow(/bank_statements of account "eu-bank" on .* are locked/);
      await expect(db.deleteFrom('bank_statement_entries').execute()).rejects.toThrow(/bank_statement_entries of account .* are locked/);
      await expect(db.updateTable('bank_statement_balances').set({ amount: '1' }).execute()).rejects.toThrow(/bank_statement_balances of account .* are locked/);
    });
  });

  it('verify re-reads the approved day: results altered past the triggers exit 1 naming the date and the account', async () => {
    const cli = (...args: string[]) => runCliProcess(args, env);
    const clean = await cli('signoff', 'verify');
    expect(clean.code, clean.stderr).toBe(0);
    await withDatabase(t, (db) =>
      db.transaction().execute(async (trx) => {
        await sql`set local session_replication_role = replica`.execute(trx);
        await sql`update reconciliation_results set expected_balance = 99999 where account = 'eu-bank' and business_date = ${DATE}`.execute(trx);
      }),
    );
    const broken = await cli('signoff', 'verify', '--date', DATE);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`${DATE} of account "eu-bank" (sign-off #1): its results differ from the sealed ones`);
  });
});
