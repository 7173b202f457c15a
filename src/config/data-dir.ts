import { existsSync } from 'node:fs';
import path from 'node:path';
import envPaths from 'env-paths';
import { DATA_DIR_MARKER } from '../db/embedded-data-dir.js';
import { describeIssue } from './config-problems.js';
import type { Config } from './config-types.js';

/** RECON_DATA_DIR for an embedded database held in memory only (PGlite's own name for it). */
export const IN_MEMORY_DATA_DIR = 'memory://';

/** The user's data directory for wallet-recon: `$XDG_DATA_HOME/wallet-recon`, else `~/.local/share/wallet-recon` (Linux). */
export function userDataRoot(): string {
  return envPaths('wallet-recon', { suffix: '' }).data;
}

/** Whether a data directory is the in-memory one, which keeps nothing once the process ends. */
export function isInMemoryDataDir(dataDir: string): boolean {
  return dataDir.startsWith(IN_MEMORY_DATA_DIR);
}

/**
 * The embedded database's folder: RECON_DATA_DIR (an absolute path, or memory://); else the
 * `.data/` an earlier version created in this folder, so an existing checkout never silently
 * starts a fresh database; else the user's data directory, whatever folder a cron job starts in.
 */
export function resolveDataDir(configured: string | undefined, cwd: string, problems: string[]): Pick<Config, 'dataDir' | 'dataDirSource'> {
  if (configured !== undefined) {
    if (isInMemoryDataDir(configured)) return { dataDir: configured, dataDirSource: 'RECON_DATA_DIR' };
    // A relative path would name another folder whenever the job starts elsewhere (cron starts in $HOME).
    if (!path.isAbsolute(configured)) {
      problems.push(describeIssue('RECON_DATA_DIR', configured, `must be an absolute path such as /var/lib/wallet-recon, or ${IN_MEMORY_DATA_DIR} for an in-memory database that keeps nothing (a relative path depends on the folder the job is started in)`));
    }
    return { dataDir: path.resolve(cwd, configured), dataDirSource: 'RECON_DATA_DIR' };
  }
  const checkout = path.join(cwd, '.data');
  if (existsSync(path.join(checkout, DATA_DIR_MARKER)) || existsSync(path.join(checkout, 'PG_VERSION'))) return { dataDir: checkout, dataDirSource: 'checkout' };
  return { dataDir: path.join(userDataRoot(), 'database'), dataDirSource: 'user-data-dir' };
}
