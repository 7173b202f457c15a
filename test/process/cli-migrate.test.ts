import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess, runCliProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

describe('wallet-recon migrate', () => {
  it('exits 2 listing every configuration problem, touching nothing', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'wr-cli-'));
    const result = await runCliProcess(['migrate'], { DATABASE_URL: 'not-a-url', GATEWAY_ENV: 'moon', RECON_DATA_DIR: path.join(cwd, 'data') }, cwd);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/DATABASE_URL must be a postgres/);
    expect(result.stderr).toMatch(/GATEWAY_ENV must be one of: live, sandbox, got "moon"/);
    expect(() => statSync(path.join(cwd, 'data'))).toThrow();
    rmSync(cwd, { recursive: true, force: true });
  });

  it('prints every command with a description in --help, and the version', async () => {
    const help = await runCliProcess(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/migrate\s+create or update the database schema/);
    expect(help.stdout).toMatch(/Exit codes:/);
    const version = await runCliProcess(['--version']);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('refuses an unknown command with exit code 2 and a suggestion', async () => {
    // Refused before anything is read or opened: no process of its own needed.
    const result = await runCliInProcess(['migrat'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Did you mean migrate/);
  });
});

describe(`wallet-recon migrate on the ${backend} database`, () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase({ migrate: false, onDisk: true });
    // The embedded database allows one process: the children below must open it themselves.
    if (backend === 'embedded') await t.handle.close();
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('creates the schema, twice in a row, and from two processes at once', async () => {
    const [a, b] = await Promise.all([runCliProcess(['migrate'], t.childEnv), runCliProcess(['migrate'], t.childEnv)]);
    const outcomes = [a, b].map((r) => r.code);
    if (backend === 'postgres') {
      expect(outcomes).toEqual([0, 0]);
    } else {
      // The embedded database serves one process: the other is told who holds it, never opens it twice.
      expect(outcomes.sort()).toEqual([0, 4]);
      expect([a, b].find((r) => r.code === 4)!.stderr).toMatch(/in use by another wallet-recon process \(pid \d+/);
    }
    // Every migration file of this version, whatever their number.
    const count = readdirSync(new URL('../../migrations/', import.meta.url)).filter((f) => f !== 'index.ts' && f.endsWith('.ts')).length;
    expect(a.stdout + b.stdout).toMatch(new RegExp(`Applied ${count} migration`));
    // Once more, from the test's process: the schema is there, nothing to apply.
    const again = await runCliInProcess(['migrate'], { ...t.childEnv, LOG_LEVEL: 'silent' });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`up to date \\(${count} migrations\\)`));
    if (backend === 'embedded') {
      expect(statSync(t.childEnv.RECON_DATA_DIR!).mode & 0o777).toBe(0o700);
    }
  });

  it('makes again a view whose definition changed, says which, and then nothing more', async () => {
    // As a database looks to a version whose locked_dates differs from the one that made it.
    await withDatabase(t, (db) => sql`update schema_views set definition_sha256 = ${'0'.repeat(64)} where name = 'locked_dates'`.execute(db));
    const result = await runCliInProcess(['migrate'], { ...t.childEnv, LOG_LEVEL: 'silent' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/The migrations of the .* were all applied already \(\d+\)\.\nMade 1 view from its definition: locked_dates\.$/m);
    const again = await runCliInProcess(['migrate'], { ...t.childEnv, LOG_LEVEL: 'silent' });
    expect(again.stdout).toMatch(/is up to date \(\d+ migrations\)/);
    expect(again.stdout).not.toMatch(/view/);
  });

  it('says on stderr, in one line and without a password, which database every data command used', async () => {
    const expected =
      backend === 'postgres'
        ? `Database: PostgreSQL database "${new URL(t.childEnv.DATABASE_URL!).pathname.slice(1)}" on ${new URL(t.childEnv.DATABASE_URL!).hostname}:${new URL(t.childEnv.DATABASE_URL!).port || '5432'}`
        : `Database: embedded database in ${t.childEnv.RECON_DATA_DIR!}`;
    for (const args of [['runs'], ['cases'], ['users', 'list'], ['migrate']]) {
      const result = await runCliInProcess(args, { ...t.childEnv, LOG_LEVEL: 'silent' });
      expect(result.code, result.stderr).toBe(0);
      expect(result.database).toEqual([expected]);
    }
    // As an operator sees it: the built CLI, another folder, the line on stderr (stdout stays clean to pipe).
    const child = await runCliProcess(['runs', '--json'], { ...t.childEnv, LOG_LEVEL: 'silent' }, tmpdir());
    expect(child.code, child.stderr).toBe(0);
    expect(child.stderr.split('\n')).toContain(expected);
    expect(child.stdout).not.toContain('Database:');
    expect(child.stderr).not.toMatch(/:\/\/[^@\s]*:[^@\s]*@/);
  });
});
