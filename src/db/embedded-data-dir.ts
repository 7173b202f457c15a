import { chmodSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';

/** The file that marks a folder as wallet-recon's embedded database. */
export const DATA_DIR_MARKER = 'wallet-recon-data-dir';
const MARKER_TEXT = 'This folder holds the embedded PostgreSQL database (PGlite) of wallet-recon. Do not edit it; remove the whole folder to start afresh.\n';

/**
 * Makes sure RECON_DATA_DIR is ours before anything is written or any permission changed: a new
 * or empty folder, one marked as a wallet-recon data directory, or a PostgreSQL data directory
 * written by an earlier version (PG_VERSION, no marker yet). Anything else — a home folder, a
 * project folder — is refused rather than chmod-ed to 0700 and filled with database files.
 */
export function prepareDataDir(dataDir: string): { marked: boolean } {
  let entries: string[];
  try {
    entries = readdirSync(dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') throw new ConfigError(`RECON_DATA_DIR (${dataDir}) is a file, not a folder. Point it at a new or empty folder.`, ['RECON_DATA_DIR is a file']);
    if (code !== 'ENOENT') throw error;
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    entries = [];
  }
  const ours =
    entries.includes(DATA_DIR_MARKER) || entries.includes('PG_VERSION') || entries.every((name) => name.startsWith('wallet-recon.lock'));
  if (!ours) {
    throw new ConfigError(
      `RECON_DATA_DIR points at ${dataDir}, a folder that already holds other files and is not a wallet-recon data directory. ` +
        'wallet-recon neither puts its database there nor changes the folder\'s permissions. Point RECON_DATA_DIR at a new or empty folder (by default the database lives in the user data directory, ~/.local/share/wallet-recon/database).',
      ['RECON_DATA_DIR is a folder of other files'],
    );
  }
  chmodSync(dataDir, 0o700);
  const marked = entries.includes(DATA_DIR_MARKER);
  if (!marked) writeFileSync(path.join(dataDir, DATA_DIR_MARKER), MARKER_TEXT, { mode: 0o600 });
  return { marked };
}

/**
 * Takes group and other permissions off everything under `dir`. PGlite writes the files of a
 * new database with mode 0666 whatever the umask (they are unpacked from its bundle); files it
 * creates later follow the umask held by `holdOwnerOnlyUmask`. Walks every file (a thousand for
 * a new database): done when a database was just made by PGlite's initdb or a folder was not yet
 * marked (the versions that write the marker tightened their files), not at every open.
 */
export function restrictToOwner(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    const mode = lstatSync(full).mode & 0o7777;
    if (mode & 0o077) chmodSync(full, mode & 0o700);
    if (entry.isDirectory()) restrictToOwner(full);
  }
}

let umaskHolders = 0;
let previousUmask: number | undefined;

/**
 * Sets the process umask to 077 while at least one embedded database is open, so every file
 * PGlite creates (new tables, WAL segments) is owner-only. Returns the release. The umask is
 * process-wide: other files written meanwhile are owner-only too, which only tightens them.
 * Where the umask cannot be set (a worker thread), the 0700 folder still keeps others out.
 */
export function holdOwnerOnlyUmask(): () => void {
  try {
    if (umaskHolders === 0) previousUmask = process.umask(0o077);
  } catch {
    return () => undefined;
  }
  umaskHolders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    umaskHolders--;
    if (umaskHolders === 0 && previousUmask !== undefined) process.umask(previousUmask);
  };
}
