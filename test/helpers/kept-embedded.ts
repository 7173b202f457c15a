import path from 'node:path';
import { setEmbeddedOpener, type DatabaseHandle } from '../../src/db/open-database.js';

/**
 * Keeps a test database's embedded folder open in the worker while the test uses it, instead of
 * opening and closing it for every CLI command run in this process and every inspection: opening a
 * folder costs PGlite about half a second of CPU (its file bundle unpacked, PostgreSQL started), and
 * a test runs dozens of commands. Each open is lent the one instance (one PGlite, one connection
 * pool of one, so statements of several handles still take turns as on a single connection), and its
 * close only returns the loan.
 *
 * Only folders of `createTestDatabase` are kept (`keepOpen`): a test of the embedded database's
 * own opening, locking or files opens its folders as a command would. The instance is really
 * closed when nothing has it on loan and a process is about to use the folder (`releaseFolder`:
 * `runCliProcess` calls it, and `spawnCli` starts its child once it is done), when it is to be
 * served on its socket (`serveToCommands`), when the database is dropped, and after the file.
 */

interface Kept {
  opening: Promise<DatabaseHandle>;
  loans: number;
}

const eligible = new Set<string>();
const kept = new Map<string, Kept>();

const keyOf = (dataDir: string) => path.resolve(dataDir);

let installed = false;

/**
 * Installs the keeping for this worker (the suite's setup file does, with the hooks that close
 * what is kept after each test and file). Without it, `keepOpen` changes nothing.
 */
export function keepEmbeddedDatabasesOpen(): void {
  if (installed) return;
  installed = true;
  setEmbeddedOpener(lend);
}

async function lend(dataDir: string, options: { serve: boolean }, open: () => Promise<DatabaseHandle>): Promise<DatabaseHandle> {
  const key = keyOf(dataDir);
  if (!eligible.has(key)) return open();
  if (options.serve) {
    await releaseFolder(dataDir);
    return open();
  }
  let entry = kept.get(key);
  if (entry === undefined) {
    entry = { opening: open(), loans: 0 };
    kept.set(key, entry);
    entry.opening.catch(() => kept.delete(key));
  }
  const real = await entry.opening;
  entry.loans++;
  let returned = false;
  const loan: DatabaseHandle = {
    db: real.db,
    kind: real.kind,
    description: real.description,
    connectDedicated: () => real.connectDedicated(),
    async close() {
      if (returned) return;
      returned = true;
      entry.loans--;
    },
  };
  return loan;
}

/** Makes the embedded test database in `dataDir` one this worker keeps open between commands. */
export function keepOpen(dataDir: string): void {
  eligible.add(keyOf(dataDir));
}

/** Stops keeping `dataDir` (it is about to be removed): closes its instance. */
export async function forgetFolder(dataDir: string): Promise<void> {
  await closeKept(keyOf(dataDir), true);
  eligible.delete(keyOf(dataDir));
}

/**
 * Closes the instance kept for `dataDir`, if nothing has it on loan, so another process may open
 * the folder. One on loan stays open (and holds the folder's lock, as the handle would have).
 */
export async function releaseFolder(dataDir: string | undefined): Promise<void> {
  if (dataDir !== undefined) await closeKept(keyOf(dataDir), false);
}

/** Whether an instance of `dataDir` is kept open in this process right now. */
export function isKeptOpen(dataDir: string | undefined): boolean {
  return dataDir !== undefined && kept.has(keyOf(dataDir));
}

/** Closes every kept instance nothing has on loan; with `all`, every one (after each file). */
export async function releaseAll(all = false): Promise<void> {
  for (const key of [...kept.keys()]) await closeKept(key, all);
}

async function closeKept(key: string, evenOnLoan: boolean): Promise<void> {
  const entry = kept.get(key);
  if (entry === undefined || (entry.loans > 0 && !evenOnLoan)) return;
  kept.delete(key);
  const real = await entry.opening.catch(() => undefined);
  await real?.close().catch(() => undefined);
}
