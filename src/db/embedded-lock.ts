import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { LockHeldError } from '../errors.js';

const LOCK_FILE = 'wallet-recon.lock';

interface LockHolder {
  pid: number;
  host: string;
  command: string;
  since: string;
  /** The kernel's boot id and the process's start time (Linux): a pid alone is reused. */
  boot?: string;
  processStart?: string;
}

function readProcFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** When a process started, in clock ticks since boot (field 22 of /proc/PID/stat), where Linux tells. */
function processStartOf(pid: number): string | undefined {
  const stat = readProcFile(`/proc/${pid}/stat`);
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  return stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

const bootId = () => readProcFile('/proc/sys/kernel/random/boot_id');

// Data directories this process holds: a second open from within it is refused, while a lock
// naming our own pid that we do not hold is a previous life's (a restarted container is pid 1 again).
const heldHere = new Set<string>();

/** Whether the process named in a lock on this host is still the one that wrote it. */
function isLiveHolder(holder: LockHolder, key: string): boolean {
  if (holder.pid === process.pid) return heldHere.has(key);
  if (holder.boot !== undefined && holder.boot !== bootId()) return false;
  if (holder.processStart !== undefined && processStartOf(holder.pid) !== holder.processStart) return false;
  return isAlive(holder.pid);
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
    const holder = JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
    return typeof holder.pid === 'number' ? holder : undefined;
  } catch {
    return undefined;
  }
}

const unique = () => `${process.pid}.${Math.random().toString(36).slice(2)}`;

/**
 * Creates the lock file with its content in one step: a hard link of a filled temp file either
 * appears whole or fails with EEXIST, so no reader ever sees an empty lock.
 */
function tryCreate(file: string, holder: LockHolder): boolean {
  const temp = `${file}.${unique()}`;
  writeFileSync(temp, JSON.stringify(holder), { mode: 0o600 });
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Removes a lock left by a dead process. Renaming is atomic, so of two processes taking over
 * the same stale lock one gets the stale file; a process that instead caught a fresh lock
 * (written by the winner meanwhile) puts it back.
 */
function removeStale(file: string, stale: LockHolder | undefined): void {
  const aside = `${file}.stale.${unique()}`;
  try {
    renameSync(file, aside);
  } catch {
    return;
  }
  const taken = readHolder(aside);
  const wasStale = stale === undefined ? taken === undefined : taken?.pid === stale.pid && taken.since === stale.since;
  if (!wasStale) {
    try {
      linkSync(aside, file);
    } catch {
      // Another process locked meanwhile; its lock stands.
    }
  }
  rmSync(aside, { force: true });
}

/** The command a worker holds the folder with: it runs until stopped, it never "finishes". */
export const WORKER_COMMAND = 'wallet-recon schedule';

/** Advice that fits who holds the folder and what was asked of it. */
function whatToDo(holderCommand: string, command: string): string {
  const server = 'set DATABASE_URL to a PostgreSQL server, where any number of workers share the night';
  if (holderCommand !== WORKER_COMMAND) return `Wait for it to finish, or ${server}.`;
  if (command === WORKER_COMMAND) return `One worker runs per embedded database, and that one runs until stopped: stop it (SIGTERM) before starting another here, or ${server}.`;
  return `That worker runs until stopped and captures at its slots (RECON_SCHEDULE); stop it (SIGTERM) to run "${command}" by hand, or ${server}.`;
}

/** Who holds an embedded database folder right now (its lock file), if anyone. */
export function dataDirHolder(dataDir: string): { pid: number; host: string; command: string; since: string } | undefined {
  return readHolder(path.join(dataDir, LOCK_FILE));
}

/**
 * PGlite is a single process: two processes opening one data directory corrupt it.
 * The lock file names the holder; a lock left by a dead process on this host is taken over.
 * Returns the release function.
 */
export function acquireDataDirLock(dataDir: string, command: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, LOCK_FILE);
  const key = path.resolve(dataDir);
  const me: LockHolder = { pid: process.pid, host: hostname(), command, since: new Date().toISOString(), boot: bootId(), processStart: processStartOf(process.pid) };
  for (let attempt = 0; attempt < 5; attempt++) {
    if (tryCreate(file, me)) {
      heldHere.add(key);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        heldHere.delete(key);
        if (readHolder(file)?.pid === process.pid) rmSync(file, { force: true });
      };
    }
    const holder = readHolder(file);
    if (holder === undefined || (holder.host === hostname() && !isLiveHolder(holder, key))) {
      removeStale(file, holder);
      continue;
    }
    throw new LockHeldError(
      `The embedded database in ${dataDir} is in use by another wallet-recon process ` +
        `(pid ${holder.pid} on ${holder.host}, "${holder.command}", since ${holder.since}). ` +
        whatToDo(holder.command, command),
    );
  }
  throw new LockHeldError(`Could not lock the embedded database in ${dataDir}: the lock file ${file} keeps changing.`);
}
