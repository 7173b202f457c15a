import { existsSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { DatabaseError } from '../errors.js';

/**
 * Room the embedded database needs to write safely: PostgreSQL writes ahead in 16 MB WAL
 * segments and a checkpoint may start a new one before it recycles the old; a run itself adds
 * kilobytes. Below this, a run would fail half-way with a bare "no space left on device".
 */
export const MIN_FREE_BYTES = 48 * 1024 * 1024;
// A new folder also receives the database itself, copied from the bundled cluster (about 40 MB).
const NEW_DATABASE_BYTES = 48 * 1024 * 1024;

// Free space rounded down, room needed rounded up: never "96 MB free, 96 MB needed" for a refusal.
const mbFree = (bytes: number) => `${Math.floor(bytes / (1024 * 1024))} MB`;
const mbNeeded = (bytes: number) => `${Math.ceil(bytes / (1024 * 1024))} MB`;

/** The free space of the file system that holds `dir` (or its nearest existing parent). */
function freeBytes(dir: string): number | undefined {
  let probe = path.resolve(dir);
  while (!existsSync(probe) && path.dirname(probe) !== probe) probe = path.dirname(probe);
  try {
    const stats = statfsSync(probe);
    return Number(stats.bavail) * Number(stats.bsize);
  } catch {
    return undefined;
  }
}

/** The error of a data directory whose disk is full, naming it and the room needed. */
export class DataDirFullError extends DatabaseError {
  constructor(dataDir: string, free: number | undefined, needed: number, options?: { cause?: unknown }) {
    super(
      `The disk of the embedded database is full: RECON_DATA_DIR (${dataDir}) has ${free === undefined ? 'too little' : mbFree(free)} free and wallet-recon needs at least ${mbNeeded(needed)} free there to write safely. ` +
        'Nothing was written. Free some space on that disk (or point RECON_DATA_DIR at a folder on a disk with room) and run the command again.',
      options,
    );
  }
}

/** Refuses to open the embedded database on a disk too full to write safely, before anything is written. */
export function assertRoomToWrite(dataDir: string): void {
  const needed = MIN_FREE_BYTES + (existsSync(path.join(dataDir, 'PG_VERSION')) ? 0 : NEW_DATABASE_BYTES);
  const free = freeBytes(dataDir);
  if (free !== undefined && free < needed) throw new DataDirFullError(dataDir, free, needed);
}

/** Whether an error, or one it was caused by, is the disk being full. */
export function isNoSpace(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === 'ENOSPC' || /no space left on device|could not extend file/i.test(e.message)) return true;
  }
  return false;
}

/** The clear error for a write that found the embedded database's disk full. */
export function noSpaceError(dataDir: string, error: unknown): DataDirFullError {
  return new DataDirFullError(dataDir, freeBytes(dataDir), MIN_FREE_BYTES, { cause: error });
}
