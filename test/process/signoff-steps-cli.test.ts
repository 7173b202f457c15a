import { spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import { addDays } from '../../src/business-date/zoned-time.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import type { Database } from '../../src/db/database.types.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { childEnvironment, collect, runCliProcess, type CliResult } from '../helpers/run-cli.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 39: a sign-off's transitions are a chain of steps, and a key can be pinned outside the
// database. Each edit below is made past the triggers (session_replication_role = replica), as a
// database owner could; `signoff verify` must exit 1 naming what broke, the date must stay locked,
// and the console must show the sign-off as not verifying. Each edit is undone before the next.
const DATE = addDays(new Date().toISOString().slice(0, 10), -2);
const root = path.join(import.meta.dirname, '..', '..');
const PASSWORD = { anna: 'anna-preparer-pw-1', ben: 'ben-approver-pw-22' };
let t: TestDatabase;
let dir: string;
let env: Record<string, string>;
let publicOnly: Record<string, string>;

const write = (name: string, content: string, mode = 0o600) => {
  const p = path.join(dir, name);
  writeFileSync(p, content, { mode });
  return p;
};
const cli = (e: Record<string, string>, ...args: string[]) => runCliProcess(args, e);
function signoff(step: string, user: keyof typeof PASSWORD, ...extra: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, ['--liftoff-only', path.join(root, 'bin', 'wallet-recon.js'), 'signoff', step, '--date', DATE, '--as', user, '--password-stdin', ...extra], {
    cwd: root,
    env: childEnvironment(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(PASSWORD[user]);
  return collect(child);
}
const pastTheTriggers = (fn: (db: Kysely<Database>) => Promise<unknown>) =>
  withDatabase(t, (db) =>
    db.transaction().execute(async (trx) => {
      await sql`set local session_replication_role = replica`.execute(trx);
      await fn(trx);
    }),
  );
/** Rows of a table as they are, to put back after an edit (under replica: no trigger recomputes them). */
const saved = (table: 'signoff_steps' | 'signoff_signatures') => withDatabase(t, async (db) => (await sql<{ rows: unknown }>`select coalesce(json_agg(x), '[]') as rows from ${sql.table(table)} x`.execute(db)).rows[0]!.rows);
const restore = (table: 'signoff_steps' | 'signoff_signatures', rows: unknown) =>
  pastTheTriggers(async (db) => {
    await sql`delete from ${sql.table(table)}`.execute(db);
    await sql`insert into ${sql.table(table)} select * from json_populate_recordset(null::${sql.table(table)}, ${JSON.stringify(rows)}::json)`.execute(db);
  });

/** What the console shows of the date: its day page, the overview and the sealed report's headers. */
async function consoleShows(): Promise<{ day: string; overview: string; reportHeaders: Record<string, unknown> }> {
  return withDatabase(t, async (db) => {
    const base = createTestContext(t, env);
    const app = await buildConsoleApp({ ctx: { ...base, database: { ...base.database, db } } });
    try {
      const client = new ConsoleClient(app);
      await client.signIn('ben', PASSWORD.ben);
      const day = await client.get(`/day?date=${DATE}`);
      const overview = await client.get('/overview');
      const report = await client.get('/signoffs/1/report');
      expect(report.statusCode).toBe(200);
      return { day: day.body, overview: overview.body, reportHeaders: report.headers };
    } finally {
      await app.close();
    }
  });
}

async function expectShownBroken(): Promise<void> {
  const shown = await consoleShows();
  expect(shown.day).toMatch(/This sign-off does not verify: [^<]*sign-off #1/);
  expect(shown.day).toContain('<strong class="signoff-state">broken seal</strong>');
  expect(shown.day).not.toContain('This date is locked');
  expect(shown.overview).toMatch(/<td class="cell state-broken-seal"><a href="\/day\?date=[^"]+" title="default, [^"]+: broken seal">broken seal<\/a><\/td>/);
  expect(shown.reportHeaders['x-signoff-approved']).toBeUndefined();
  expect(String(shown.reportHeaders['x-signoff-does-not-verify'])).toContain('sign-off #1');
}

async function expectLockedStill(): Promise<void> {
  const changed = await cli(env, 'ledger', 'import', write(`books-${Math.random()}.csv`, `business_date,currency,balance\n${DATE},EUR,77.00\n`));
  expect(changed.code, changed.stderr).toBe(2);
  expect(changed.stderr).toContain(`${DATE} of account "default" is signed off and locked (sign-off #1, approved by ben`);
}

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-signoff-steps-'));
  const pair = generateKeyPairSync('ed25519');
  const keyFile = write('signing-key.pem', pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const publicFile = write('signing-key.pub.pem', createPublicKey(pair.privateKey).export({ type: 'spki', format: 'pem' }).toString(), 0o644);
  const since = new Date(Date.now() - 3_600_000).toISOString();
  const base = { DATABASE_URL: '', ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent', RECON_AUTO_PREPARE: 'off', RECON_TIMEZONE: 'UTC', RECON_CUTOFF: '00:00', RECON_BOOKS_DEADLINE: '3d' };
  env = { ...base, RECON_SIGNING_KEY_FILE: keyFile, RECON_SIGNING_PUBLIC_KEY_FILE: publicFile, RECON_SIGNING_SINCE: since };
  publicOnly = { ...base, RECON_SIGNING_PUBLIC_KEY_FILE: publicFile, RECON_SIGNING_SINCE: since };
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
  rmSync(dir, { recursive: true, force: true });
});

describe(`sign-off steps and a pinned key through the built CLI (${backend})`, { timeout: 600_000 }, () => {
  it('records prepare and approve as signed steps; verify checks them against the pinned public key without the private key', async () => {
    expect((await cli(env, 'ledger', 'import', write('books.csv', `business_date,currency,balance\n${DATE},EUR,40.00\n`))).code).toBe(0);
    const prepared = await signoff('prepare', 'anna');
    expect(prepared.code, prepared.stderr).toBe(0);
    const approved = await signoff('approve', 'ben');
    expect(approved.code, approved.stderr).toBe(0);
    const steps = await withDatabase(t, (db) => db.selectFrom('signoff_steps').select(['signoff_id', 'kind', 'actor', 'chain_seq', 'prev_hash', 'hash', 'signature']).orderBy('chain_seq').execute());
    expect(steps.map((s) => [s.signoff_id, s.kind, s.actor])).toEqual([
      [1, 'prepared', 'anna'],
      [1, 'approved', 'ben'],
    ]);
    expect(steps[1]!.prev_hash).toBe(steps[0]!.hash);
    expect(steps.every((s) => s.signature !== null)).toBe(true);

    const verified = await cli(publicOnly, 'signoff', 'verify');
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toContain('Sign-off steps: 2 step(s) chained, 2 signed; every step since');
    expect(verified.stdout).toContain('is signed by the pinned key');
    const unpinned = await cli({ ...env, RECON_SIGNING_PUBLIC_KEY_FILE: '', RECON_SIGNING_SINCE: '' }, 'signoff', 'verify');
    expect(unpinned.code, unpinned.stderr).toBe(0);
    expect(unpinned.stdout).toContain('The key is not pinned');
    const shown = await consoleShows();
    expect(shown.day).toContain('<strong class="signoff-state">approved</strong>');
    expect(shown.reportHeaders['x-signoff-approved']).toMatch(/^ben /);
  });

  it('nulling the approval past the triggers: verify exits 1 naming the sign-off, the date stays locked, the console shows it as not verifying', async () => {
    // The time as text: a JavaScript Date would drop its microseconds, and the approval's hash covers them.
    const before = await withDatabase(t, async (db) => (await sql<{ approved_by: string; approved_at: string; approval_hash: string }>`select approved_by, approved_at::text as approved_at, approval_hash from signoffs where id = 1`.execute(db)).rows[0]!);
    await pastTheTriggers((db) => sql`update signoffs set approved_by = null, approved_at = null, approval_hash = null where id = 1`.execute(db));
    const broken = await cli(publicOnly, 'signoff', 'verify');
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(new RegExp(`Seal broken: sign-off #1 of ${DATE}: its approved step \\(signoff_steps row \\d+\\) is not recorded by its row`));
    await expectLockedStill();
    await expectShownBroken();
    const shown = await cli(publicOnly, 'signoff', 'show', '--date', DATE);
    expect(shown.code).toBe(1);
    expect(shown.stdout).toContain(`${DATE}: broken seal`);
    expect(shown.stderr).toContain(`This sign-off does not verify: sign-off #1 of ${DATE}: its approved step`);
    await pastTheTriggers((db) => sql`update signoffs set approved_by = ${before.approved_by}, approved_at = ${before.approved_at}::timestamptz, approval_hash = ${before.approval_hash} where id = 1`.execute(db));
    expect((await cli(publicOnly, 'signoff', 'verify')).code).toBe(0);
  });

  it('deleting every signature with a pinned key: verify exits 1 naming the step; a different pinned key too', async () => {
    const steps = await saved('signoff_steps');
    const signatures = await saved('signoff_signatures');
    await pastTheTriggers(async (db) => {
      await sql`delete from signoff_signatures`.execute(db);
      await sql`update signoff_steps set signature = null, public_key = null`.execute(db);
    });
    const broken = await cli(publicOnly, 'signoff', 'verify');
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(new RegExp(`Seal broken: sign-off #1 of ${DATE}: its prepared step \\(signoff_steps row \\d+\\) carries no signature, and every step since .* must be signed by the pinned key`));
    await expectShownBroken();
    await restore('signoff_steps', steps);
    await restore('signoff_signatures', signatures);
    expect((await cli(publicOnly, 'signoff', 'verify')).code).toBe(0);

    const other = write('other.pub.pem', createPublicKey(generateKeyPairSync('ed25519').privateKey).export({ type: 'spki', format: 'pem' }).toString(), 0o644);
    const otherKey = await cli({ ...publicOnly, RECON_SIGNING_PUBLIC_KEY_FILE: other }, 'signoff', 'verify');
    expect(otherKey.code).toBe(1);
    expect(otherKey.stderr).toContain(`sign-off #1 of ${DATE}: its prepared step`);
    expect(otherKey.stderr).toContain('is signed with another key than the pinned one');
  });

  it("altering a locked date's reconciliation_results: verify exits 1 naming the date and the account, the console shows it as not verifying", async () => {
    const before = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select(['expected_balance']).where('business_date', '=', DATE).executeTakeFirstOrThrow());
    await pastTheTriggers((db) => sql`update reconciliation_results set expected_balance = 99999 where business_date = ${DATE}`.execute(db));
    const broken = await cli(publicOnly, 'signoff', 'verify');
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`${DATE} of account "default" (sign-off #1): its results differ from the sealed ones`);
    await expectShownBroken();
    await pastTheTriggers((db) => sql`update reconciliation_results set expected_balance = ${before.expected_balance} where business_date = ${DATE}`.execute(db));
    expect((await cli(publicOnly, 'signoff', 'verify')).code).toBe(0);
  });

  it('deleting the reopening step: verify exits 1 naming the sign-off, and the date is locked again rather than left open', async () => {
    const reopened = await signoff('reopen', 'ben', '--note', 'the EUR fee was booked on the wrong day');
    expect(reopened.code, reopened.stderr).toBe(0);
    expect((await cli(publicOnly, 'signoff', 'verify')).code).toBe(0);
    const steps = await saved('signoff_steps');
    await pastTheTriggers((db) => sql`delete from signoff_steps where kind = 'reopened'`.execute(db));
    const broken = await cli(publicOnly, 'signoff', 'verify');
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`Seal broken: sign-off #1 of ${DATE}: its reopened step is missing from signoff_steps`);
    await expectLockedStill();
    await expectShownBroken();

    // A step that a later step follows, removed: the row after it is named.
    await restore('signoff_steps', steps);
    await pastTheTriggers((db) => sql`delete from signoff_steps where kind = 'approved'`.execute(db));
    const gap = await cli(publicOnly, 'signoff', 'verify');
    expect(gap.code).toBe(1);
    expect(gap.stderr).toMatch(/its reopened step \(signoff_steps row \d+\) follows a step that was removed/);
    await restore('signoff_steps', steps);
    expect((await cli(publicOnly, 'signoff', 'verify')).code).toBe(0);
  });

  it('refuses, in the database, a step rewritten or removed, and a step no transition made', async () => {
    await withDatabase(t, async (db) => {
      await expect(sql`update signoff_steps set actor = 'eve'`.execute(db)).rejects.toThrow(/signoff_steps is append-only/);
      await expect(sql`delete from signoff_steps`.execute(db)).rejects.toThrow(/signoff_steps is append-only/);
      await expect(sql`insert into signoff_steps (signoff_id, kind, actor, at, detail) values (1, 'invalidated', 'eve', now(), '{}')`.execute(db)).rejects.toThrow(/that the sign-off does not record is refused/);
    });
  });
});
