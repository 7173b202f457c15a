import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { ConfigError } from '../errors.js';

// PGlite reports a file it cannot read or write in its folder as a WebAssembly abort, or as a
// failed start, without the file's name or the system's error code.
const PGLITE_FILE_FAILURE = /Aborted\(|PGlite failed to initiali[sz]e/;
// How many entries the diagnosis of such a failure looks at before giving up on naming one.
const MAX_ENTRIES_CHECKED = 5_000;

/**
 * The error for a data directory the embedded database cannot use because of the file system:
 * read-only (EROFS), not this user's (EACCES, EPERM), or PGlite's abort on a file it may not
 * touch. It names RECON_DATA_DIR, the path, the permission needed and the fix (exit 2, as the
 * folder is configuration). Undefined for any other error, which keeps its own message.
 */
export function dataDirAccessError(dataDir: string, error: unknown): ConfigError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const failedPath = (error as NodeJS.ErrnoException | undefined)?.path ?? dataDir;
  if (code === 'EROFS') return readOnly(dataDir, error);
  if (code === 'EACCES' || code === 'EPERM') return notAllowed(dataDir, closedAncestor(dataDir) ?? failedPath, error);
  // A recursive mkdir under a read-only or foreign folder says ENOENT: ask the folder that exists.
  if (code === 'ENOENT' && (error as NodeJS.ErrnoException).syscall === 'mkdir') {
    const ancestor = nearestExisting(path.dirname(dataDir));
    const denied = ancestor === undefined ? undefined : accessProblem(ancestor, constants.W_OK | constants.X_OK);
    if (denied === 'EROFS') return readOnly(dataDir, error);
    if (denied !== undefined) return notAllowed(dataDir, ancestor!, error);
    return undefined;
  }
  if (error instanceof Error && PGLITE_FILE_FAILURE.test(error.message)) {
    if (accessProblem(dataDir, constants.W_OK) === 'EROFS') return readOnly(dataDir, error);
    const blocked = firstInaccessible(dataDir);
    if (blocked !== undefined) return notAllowed(dataDir, blocked, error);
  }
  return undefined;
}

function readOnly(dataDir: string, cause: unknown): ConfigError {
  return new ConfigError(
    `RECON_DATA_DIR (${dataDir}) is on a read-only file system, but the embedded database must write there (read and write permission on the folder and every file in it). ` +
      'Point RECON_DATA_DIR at a folder on a writable file system, mount this one read-write, or set DATABASE_URL to use a PostgreSQL server.',
    [`RECON_DATA_DIR (${dataDir}) is on a read-only file system`],
    { cause },
  );
}

function notAllowed(dataDir: string, blocked: string, cause: unknown): ConfigError {
  const user = currentUser();
  const owner = ownerOf(blocked);
  const what = blocked === dataDir ? 'the folder' : blocked.startsWith(dataDir + path.sep) ? `its file ${path.relative(dataDir, blocked)}` : `the folder above it, ${blocked},`;
  const belongs = owner === undefined || owner === process.getuid?.() ? '' : `; it belongs to uid ${owner}`;
  return new ConfigError(
    `RECON_DATA_DIR (${dataDir}): ${what} cannot be read and written by the user wallet-recon runs as, ${user}${belongs}. ` +
      'The embedded database needs read, write and search permission (rwx) on the folder and read and write permission on every file in it. ' +
      `Run wallet-recon as the folder's owner, give it to this user (chown -R ${user.split(' ')[0]} ${dataDir}), or point RECON_DATA_DIR at a new folder of this user.`,
    [`RECON_DATA_DIR (${dataDir}) cannot be written by ${user}`],
    { cause },
  );
}

/** `nobody (uid 65534)`, the user this process runs as. */
function currentUser(): string {
  const uid = process.getuid?.();
  try {
    return `${userInfo().username} (uid ${uid})`;
  } catch {
    return `uid ${uid}`;
  }
}

function ownerOf(file: string): number | undefined {
  try {
    return statSync(file).uid;
  } catch {
    return undefined;
  }
}

function accessProblem(file: string, mode: number): string | undefined {
  try {
    accessSync(file, mode);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'EACCES';
  }
}

/** The first folder above `dataDir` this process may not enter, which hides everything below it. */
function closedAncestor(dataDir: string): string | undefined {
  const ancestors: string[] = [];
  for (let current = path.dirname(dataDir); ; current = path.dirname(current)) {
    ancestors.unshift(current);
    if (path.dirname(current) === current) break;
  }
  return ancestors.find((dir) => existsSync(dir) && accessProblem(dir, constants.X_OK) !== undefined);
}

function nearestExisting(dir: string): string | undefined {
  for (let current = dir; ; current = path.dirname(current)) {
    if (existsSync(current)) return current;
    if (path.dirname(current) === current) return undefined;
  }
}

/** The first folder or file under `dataDir` this process may not read and write, if any. */
function firstInaccessible(dataDir: string): string | undefined {
  const pending = [dataDir];
  let checked = 0;
  while (pending.length > 0 && checked < MAX_ENTRIES_CHECKED) {
    const dir = pending.pop()!;
    if (accessProblem(dir, constants.R_OK | constants.W_OK | constants.X_OK) !== undefined) return dir;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      checked++;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) pending.push(full);
      else if (entry.isFile() && accessProblem(full, constants.R_OK | constants.W_OK) !== undefined) return full;
    }
  }
  return undefined;
}
