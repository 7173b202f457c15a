import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { MORNING, NIGHT, produceNightWithBreak, writeNightBooks } from '../helpers/console-night.js';
import { childEnvironment, collect, runCliInProcess, type CliResult } from '../helpers/run-cli.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

const root = path.join(import.meta.dirname, '..', '..');
let t: TestDatabase;
let dir: string;
let env: Record<string, string>;
const clock = new FixedClock(MORNING);

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-cli-'));
  env = { DATABASE_URL: '', ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent' };
  await produceNightWithBreak(createTestContext(t, env, { clock }), dir);
  // Embedded: served by this process from now on, so each command reaches it through its socket.
  await serveToCommands(t);
}, 120_000);

afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCliInProcess(args, env, { clock });

/** The built CLI with `input` on its standard input (as `printf %s "$PW" | wallet-recon …`). */
function cliWithStdin(input: string, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, ['--liftoff-only', path.join(root, 'bin', 'wallet-recon.js'), ...args], { cwd: root, env: childEnvironment(env), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(input);
  return collect(child);
}

// Each step is a process of the built CLI, and each password check a deliberately costly scrypt.
describe(`wallet-recon users and signoff (${backend})`, { timeout: 180_000 }, () => {
  it('adds users from standard input or with a generated password shown once, lists, re-roles and disables them', async () => {
    for (const [name, role] of [['vic', 'viewer'], ['anna', 'preparer'], ['ben', 'approver']]) {
      const added = await cliWithStdin(`${name}-password-123\n`, 'users', 'add', name!, '--role', role!, '--password-stdin');
      expect(added.code, added.stderr).toBe(0);
      expect(added.stdout).toContain(`Added user "${name}" with the ${role} role.`);
      expect(added.stdout).not.toContain('password-123');
    }
    const generated = await cli('users', 'add', 'zed', '--role', 'admin');
    expect(generated.code).toBe(0);
    expect(generated.stdout).toMatch(/Password \(shown only now\): [A-Za-z0-9_-]{20}/);
    const taken = await cli('users', 'add', 'zed', '--role', 'viewer');
    expect(taken.code).toBe(2);
    expect(taken.stderr).toContain('There is already a user named "zed"');
    const badRole = await cli('users', 'add', 'yan', '--role', 'boss');
    expect(badRole.code).toBe(2);
    const short = await cliWithStdin('short', 'users', 'add', 'yan', '--role', 'viewer', '--password-stdin');
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('at least 12 characters');
    expect((await cli('users', 'set-role', 'zed', 'viewer')).stdout).toContain('User "zed": admin -> viewer.');
    expect((await cli('users', 'disable', 'zed')).stdout).toContain('Disabled user "zed"; 0 sessions ended.');
    const list = await cli('users', 'list', '--json');
    expect(JSON.parse(list.stdout).map((u: { name: string; role: string; disabled_at: string | null }) => [u.name, u.role, u.disabled_at !== null])).toEqual([
      ['anna', 'preparer', false],
      ['ben', 'approver', false],
      ['vic', 'viewer', false],
      ['zed', 'viewer', true],
    ]);
  });

  it('signs a date off from the command line: open case refused, the preparer cannot approve, the approver can; identical books leave it approved', async () => {
    const open = await cliWithStdin('anna-password-123', 'signoff', 'prepare', '--date', NIGHT, '--as', 'anna', '--password-stdin');
    expect(open.code).toBe(1);
    expect(open.stderr).toContain('cannot be signed while a case is open');
    expect((await cli('cases', 'accept', '1', '--by', 'anna', '--note', 'timing difference')).code).toBe(0);
    const wrong = await cliWithStdin('not-her-password', 'signoff', 'prepare', '--date', NIGHT, '--as', 'anna', '--password-stdin');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('Could not sign in as "anna"');
    const viewer = await cliWithStdin('vic-password-123', 'signoff', 'prepare', '--date', NIGHT, '--as', 'vic', '--password-stdin');
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toContain('only a preparer or an admin can prepare');
    const prepared = await cliWithStdin('anna-password-123', 'signoff', 'prepare', '--date', NIGHT, '--as', 'anna', '--password-stdin');
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(prepared.stdout).toMatch(/Sign-off #1 of 2026-11-21 prepared by anna \(report SHA-256 [0-9a-f]{64}\)/);
    const self = await cliWithStdin('anna-password-123', 'signoff', 'approve', '--date', NIGHT, '--as', 'anna', '--password-stdin');
    expect(self.code).toBe(1);
    expect(self.stderr).toContain('"anna" prepared this sign-off and cannot also approve it');
    const approved = await cliWithStdin('ben-password-123', 'signoff', 'approve', '--date', NIGHT, '--as', 'ben', '--password-stdin');
    expect(approved.code, approved.stderr).toBe(0);
    expect((await cli('signoff', 'show', '--date', NIGHT)).stdout).toMatch(/^2026-11-21: approved/);
    const reimported = await cli('ledger', 'import', writeNightBooks(dir, 'books-again.csv'));
    expect(reimported.code).toBe(0);
    expect(reimported.stdout).toContain('0 new, 0 changed, 2 unchanged, 0 removed');
    const shown = JSON.parse((await cli('signoff', 'show', '--date', NIGHT, '--json')).stdout);
    expect(shown.state).toBe('approved');
    expect(shown.signoffs[0]).toMatchObject({ prepared_by: 'anna', approved_by: 'ben', changes: null, report_matches_seal: true });
  });

  it('refuses a sign-off without --password-stdin and a date that does not exist', async () => {
    const noStdin = await cli('signoff', 'prepare', '--date', NIGHT, '--as', 'anna');
    expect(noStdin.code).toBe(2);
    expect(noStdin.stderr).toContain('needs --password-stdin');
    const badDate = await cli('signoff', 'show', '--date', '2026-02-30');
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toContain('--date "2026-02-30" is not a real date');
  });

  it('recovers a locked-out user: unlock, reset-password (generated, or from stdin, never logged), enable; each audited', async () => {
    const asAnna = (password: string) => cliWithStdin(password, 'signoff', 'approve', '--date', NIGHT, '--as', 'anna', '--password-stdin');
    for (let i = 0; i < 5; i++) expect((await asAnna(`wrong-password-${i}`)).stderr).toContain('Could not sign in as "anna"');
    const locked = await asAnna('anna-password-123');
    expect(locked.code).toBe(1);
    expect(locked.stderr).toContain('Too many failed sign-ins for "anna"');
    expect(locked.stderr).toContain('"wallet-recon users unlock anna"');
    const unlocked = await cli('users', 'unlock', 'anna');
    expect(unlocked.code, unlocked.stderr).toBe(0);
    // The five, and the wrong password of the sign-off test above.
    expect(unlocked.stdout).toBe('Unlocked user "anna": 6 failed sign-ins forgotten.');
    const after = await asAnna('anna-password-123');
    expect(after.stderr).not.toMatch(/Could not sign in|Too many failed/);

    const generated = await cliWithStdin('', 'users', 'reset-password', 'anna');
    expect(generated.code, generated.stderr).toBe(0);
    const password = /^Password \(shown only now\): ([A-Za-z0-9_-]{20})$/m.exec(generated.stdout)![1]!;
    expect(generated.stdout).toContain('New password set for "anna"; 0 sessions ended.');
    expect((await asAnna('anna-password-123')).stderr).toContain('Could not sign in as "anna"');
    expect((await asAnna(password)).stderr).not.toMatch(/Could not sign in|Too many failed/);
    const fromStdin = await cliWithStdin('anna-chosen-password-9\n', 'users', 'reset-password', 'anna', '--password-stdin');
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(fromStdin.stdout.trim()).toBe('New password set for "anna"; 0 sessions ended.');
    expect((await asAnna('anna-chosen-password-9')).stderr).not.toMatch(/Could not sign in|Too many failed/);
    const short = await cliWithStdin('short', 'users', 'reset-password', 'anna', '--password-stdin');
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('at least 12 characters');

    expect((await cli('users', 'enable', 'zed')).stdout).toBe('Enabled user "zed": they can sign in again.');
    expect((await cli('users', 'enable', 'nobody')).code).toBe(2);
    const audit = await withDatabase(t, (db) => db.selectFrom('console_audit').select(['action', 'target', 'detail']).where('action', 'in', ['user.unlock', 'user.reset-password', 'user.enable']).orderBy('id').execute());
    expect(audit.map((a) => `${a.action} ${a.target}`)).toEqual(['user.unlock anna', 'user.reset-password anna', 'user.reset-password anna', 'user.enable zed']);
    expect(JSON.stringify(audit)).not.toContain(password);
    for (const r of [generated, fromStdin]) expect(r.stderr).not.toContain('anna-chosen-password-9');
  });
});
