import { existsSync } from 'node:fs';
import path from 'node:path';
import envPaths from 'env-paths';
import { DATA_DIR_MARKER } from '../db/embedded-data-dir.js';
import type { Config } from './config-types.js';

/** The user's data directory for wallet-recon: `$XDG_DATA_HOME/wallet-recon`, else `~/.local/share/wallet-recon` (Linux). */
export function userDataRoot(): string {
  return envPaths('wallet-recon', { suffix: '' }).data;
}

/**
 * The embedded database's folder: RECON_DATA_DIR; else the `.data/` an earlier version created in
 * this folder, so an existing checkout never silently starts a fresh database; else the user's
 * data directory, whatever folder a cron job starts in.
 */
export function resolveDataDir(configured: string | undefined, cwd: string): Pick<Config, 'dataDir' | 'dataDirSource'> {
  if (configured !== undefined) return { dataDir: path.resolve(cwd, configured), dataDirSource: 'RECON_DATA_DIR' };
  const checkout = path.join(cwd, '.data');
  if (existsSync(path.join(checkout, DATA_DIR_MARKER)) || existsSync(path.join(checkout, 'PG_VERSION'))) return { dataDir: checkout, dataDirSource: 'checkout' };
  return { dataDir: path.join(userDataRoot(), 'database'), dataDirSource: 'user-data-dir' };
}
