import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync, chmodSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { LockHeldError } from '../errors.js';

const LOCK_FILE = 'wallet-recon.lock';

interface LockHolder {
  pid: number;
  host: string;
  command: string;
  since: string;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

/**
 * PGlite is a single process: two processes opening one data directory corrupt it.
 * An exclusive lock file names the holder; a lock left by a dead process on this host is taken over.
 */
export function acquireDataDirLock(dataDir: string, command: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      const holder: LockHolder = { pid: process.pid, host: hostname(), command, since: new Date().toISOString() };
      writeSync(fd, JSON.stringify(holder));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const current = readHolder(file);
        if (current?.pid === process.pid) rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHolder(file);
      if (holder && holder.host === hostname() && !isAlive(holder.pid)) {
        rmSync(file, { force: true });
        continue;
      }
      if (!holder) {
        // Written but not yet filled by a process starting right now: give it a moment.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
        if (readHolder(file) === undefined) rmSync(file, { force: true });
        continue;
      }
      throw new LockHeldError(
        `The embedded database in ${dataDir} is in use by another wallet-recon process ` +
          `(pid ${holder.pid} on ${holder.host}, "${holder.command}", since ${holder.since}). ` +
          `Wait for it to finish, or set DATABASE_URL to use a PostgreSQL server that several processes can share.`,
      );
    }
  }
  throw new LockHeldError(`Could not lock the embedded database in ${dataDir}: the lock file ${file} keeps changing.`);
}
