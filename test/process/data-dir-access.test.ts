import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnvironment, collect, runCliProcess, type CliResult } from '../helpers/run-cli.js';
import { copyEmbeddedTemplate } from '../helpers/test-database.js';

// A data directory the embedded database may not write: each ends with a message naming
// RECON_DATA_DIR, the path, the permission needed and the fix, exit 2 (the folder is
// configuration). Whatever TEST_DATABASE_URL says, these commands use the embedded database.
// Root passes every permission check, so the read-only cases use a read-only tmpfs and the
// foreign-owner cases run the CLI as the user nobody.
const isRoot = process.getuid?.() === 0;
const bin = path.join(import.meta.dirname, '..', '..', 'bin', 'wallet-recon.js');
const NOBODY = 65534;
// Not the test scratch folder (owner-only): the user nobody must reach these folders.
const base = mkdtempSync('/tmp/wr-data-dir-access-');
chmodSync(base, 0o755);

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

function canMountTmpfs(): boolean {
  if (!isRoot) return false;
  const probe = path.join(base, 'probe');
  mkdirSync(probe);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// The user nobody must be able to run this checkout's CLI: a clone in an owner-only folder (a
// fresh temporary directory, as CI makes) cannot be read by it, and the cases are skipped there.
function canRunAsNobody(): boolean {
  if (!isRoot) return false;
  try {
    execFileSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, bin, '--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The built CLI run as the user nobody (exec'd by setpriv, so the exit code is the CLI's). */
function runAsNobody(args: string[], env: Record<string, string>): Promise<CliResult> {
  const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath, '--liftoff-only', bin, ...args], {
    cwd: base,
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

const FIX = /Point RECON_DATA_DIR at a folder on a writable file system, mount this one read-write, or set DATABASE_URL to use a PostgreSQL server\.$/;

describe.skipIf(!canMountTmpfs())('a read-only data directory (a tmpfs mounted read-only)', () => {
  it('names RECON_DATA_DIR, the folder, the permission and the fix, for the folder and for a folder to create in it', async () => {
    const readOnly = path.join(base, 'read-only');
    mkdirSync(readOnly);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', readOnly]);
    try {
      for (const dataDir of [readOnly, path.join(readOnly, 'database')]) {
        const result = await runCliProcess(['runs'], { RECON_DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, base);
        expect(result.code).toBe(2);
        expect(result.stderr.trim()).toMatch(new RegExp(`^RECON_DATA_DIR \\(${dataDir}\\) is on a read-only file system, but the embedded database must write there \\(read and write permission on the folder and every file in it\\)\\. `));
        expect(result.stderr.trim()).toMatch(FIX);
        expect(result.stderr).not.toMatch(/Unexpected error|EROFS|ENOENT/);
      }
    } finally {
      execFileSync('umount', [readOnly]);
    }
  }, 60_000);
});

describe.skipIf(!canRunAsNobody())('a data directory of another user (the CLI run as nobody)', () => {
  it('names the folder, whom it belongs to, the permission needed and the fix', async () => {
    const foreign = path.join(base, 'foreign');
    mkdirSync(foreign, { mode: 0o700 });
    for (const [dataDir, what] of [
      [foreign, 'the folder'],
      [path.join(foreign, 'database'), `the folder above it, ${foreign},`],
    ] as const) {
      const result = await runAsNobody(['runs'], { RECON_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(
        `RECON_DATA_DIR (${dataDir}): ${what} cannot be read and written by the user wallet-recon runs as, nobody (uid ${NOBODY}); it belongs to uid 0. ` +
          'The embedded database needs read, write and search permission (rwx) on the folder and read and write permission on every file in it. ' +
          `Run wallet-recon as the folder's owner, give it to this user (chown -R nobody ${dataDir}), or point RECON_DATA_DIR at a new folder of this user.`,
      );
    }
  }, 60_000);

  it("turns PGlite's failure on a file it may not open into the same advice, naming the file", async (context) => {
    // A database whose folder was given to nobody but whose files still belong to root.
    const dataDir = path.join(base, 'half-chowned');
    if (!copyEmbeddedTemplate(dataDir)) context.skip('the suite runs without its embedded template');
    chownSync(dataDir, NOBODY, NOBODY);
    const result = await runAsNobody(['runs'], { RECON_DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toMatch(
      new RegExp(`^RECON_DATA_DIR \\(${dataDir}\\): its file \\S+ cannot be read and written by the user wallet-recon runs as, nobody \\(uid ${NOBODY}\\); it belongs to uid 0\\. `),
    );
    expect(result.stderr).toContain(`chown -R nobody ${dataDir}`);
    expect(result.stderr).not.toMatch(/Aborted|PGlite failed/);
  }, 60_000);
});
