import path from 'node:path';
import { sql, type Kysely, type KyselyPlugin } from 'kysely';
import type { Database } from '../../src/db/database.types.js';
import { holdOwnerOnlyUmask } from '../../src/db/embedded-data-dir.js';
import { setEmbeddedOpener, type DatabaseHandle } from '../../src/db/open-database.js';
import { emptyForReuse, shapeOf, type RunQuery } from './database-reuse.js';

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
 * served on its socket (`serveToCommands`), and when the database is dropped or its file ends,
 * unless it is parked.
 *
 * Parking: a copy of the migrated template still open when its test is done with it (dropped, or
 * its file over) is emptied (database-reuse.ts) and kept open, folder and instance, for the next
 * test database of the worker (`takeParked`): the copy of the template and the open, about 0.6 s
 * of CPU, become a few tens of milliseconds of emptying. One a process has used since (the
 * instance was closed for it), one still on loan, one whose shape is no longer the template's
 * (a file that migrated it or changed its schema) and one a session setting cannot be reset on
 * are closed and dropped as before. A parked instance holds no umask: the owner-only umask an open
 * embedded database holds (embedded-data-dir.ts) is held here while the instance is in use, let go
 * while it is parked, so the next file starts under the worker's own umask, as the setup file
 * checks; nothing writes to a parked database.
 */

interface Kept {
  opening: Promise<DatabaseHandle>;
  loans: number;
  /** Lets the owner-only umask this instance holds go; undefined while it is parked. */
  releaseUmask?: () => void;
  parked: boolean;
  /** Counts the parkings: a loan made before the last one is of a database its test dropped. */
  generation: number;
}

const eligible = new Set<string>();
/** Folders that are copies of the migrated template, which may be parked. */
const templateCopies = new Set<string>();
const kept = new Map<string, Kept>();
/** Parked folders, the last parked first out. */
const parked: string[] = [];
/**
 * At most this many parked per worker: an open PGlite holds tens of megabytes, and a file rarely
 * has more than two databases at once.
 */
const MAX_PARKED = 2;
/** The template's shape (database-reuse.ts), taken from the worker's first copy before any test touches it. */
let templateShape: string | undefined;

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

export function keepingInstalled(): boolean {
  return installed;
}

async function lend(dataDir: string, options: { serve: boolean }, open: (how?: { holdUmask?: boolean }) => Promise<DatabaseHandle>): Promise<DatabaseHandle> {
  const key = keyOf(dataDir);
  if (!eligible.has(key)) return open();
  if (options.serve) {
    await releaseFolder(dataDir);
    return open();
  }
  let entry = kept.get(key);
  if (entry === undefined) {
    // Held before the open: PGlite writes files as it starts.
    const releaseUmask = holdOwnerOnlyUmask();
    const created: Kept = { opening: open({ holdUmask: false }), loans: 0, releaseUmask, parked: false, generation: 0 };
    entry = created;
    kept.set(key, created);
    created.opening.catch(() => {
      kept.delete(key);
      created.releaseUmask?.();
    });
  }
  const real = await entry.opening;
  entry.loans++;
  let returned = false;
  const loaned = entry;
  const generation = entry.generation;
  const loan: DatabaseHandle = {
    // Refuses once the database was parked: a handle of a dropped database, as on the server,
    // fails rather than reach the emptied one the next test is given.
    db: real.db.withPlugin(refusingAfter(() => loaned.generation !== generation)),
    kind: real.kind,
    description: real.description,
    connectDedicated: () => real.connectDedicated(),
    async close() {
      if (returned) return;
      returned = true;
      // A loan of a database parked since was counted off when it was parked.
      if (loaned.generation === generation) loaned.loans--;
    },
  };
  return loan;
}

/**
 * Makes the embedded test database in `dataDir` one this worker keeps open between commands;
 * `templateCopy`: a fresh copy of the migrated template, which may be parked when done with.
 */
export function keepOpen(dataDir: string, options: { templateCopy?: boolean } = {}): void {
  eligible.add(keyOf(dataDir));
  if (options.templateCopy) templateCopies.add(keyOf(dataDir));
}

/**
 * A parked copy of the migrated template, emptied, its instance open and now in use again; undefined
 * when none is parked (or the keeping is not installed).
 */
export function takeParked(): string | undefined {
  const key = parked.pop();
  if (key === undefined) return undefined;
  const entry = kept.get(key)!;
  entry.parked = false;
  entry.releaseUmask = holdOwnerOnlyUmask();
  return key;
}

/** Takes the template's shape from `db`, an untouched copy of it, unless the worker has it already. */
export async function noteTemplateShape(db: Kysely<Database>): Promise<void> {
  templateShape ??= await shapeOf(viaKysely(db));
}

/**
 * The test is done with `dataDir`: parks it (see above) and returns true when it can be, else
 * returns false, its instance still open (`forgetFolder` closes it).
 */
export async function parkFolder(dataDir: string): Promise<boolean> {
  const key = keyOf(dataDir);
  const entry = kept.get(key);
  const shape = templateShape;
  if (entry === undefined || entry.parked || entry.loans > 0 || !templateCopies.has(key) || shape === undefined || parked.length >= MAX_PARKED) return false;
  const real = await entry.opening.catch(() => undefined);
  if (real === undefined) return false;
  try {
    const reusable = await real.db.connection().execute(async (connection) => {
      const run = viaKysely(connection);
      // What a session of the last test may have left: a transaction, settings, locks, temporary tables.
      await run('rollback');
      await run('close all; reset all; unlisten *; select pg_advisory_unlock_all(); discard plans; discard temp; discard sequences');
      return emptyForReuse(run, shape);
    });
    if (!reusable) return false;
  } catch {
    return false;
  }
  entry.parked = true;
  entry.generation++;
  entry.releaseUmask?.();
  entry.releaseUmask = undefined;
  parked.push(key);
  return true;
}

/** Stops keeping `dataDir` (it is about to be removed): closes its instance. */
export async function forgetFolder(dataDir: string): Promise<void> {
  await closeKept(keyOf(dataDir), true);
  eligible.delete(keyOf(dataDir));
  templateCopies.delete(keyOf(dataDir));
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

/**
 * Closes every kept instance nothing has on loan; with `all` (after each file), every one but the
 * parked. (Only a database its test dropped is parked: one a file never dropped is closed.)
 */
export async function releaseAll(all = false): Promise<void> {
  for (const key of [...kept.keys()]) await closeKept(key, all);
}

async function closeKept(key: string, evenOnLoan: boolean): Promise<void> {
  const entry = kept.get(key);
  if (entry === undefined || entry.parked || (entry.loans > 0 && !evenOnLoan)) return;
  kept.delete(key);
  const real = await entry.opening.catch(() => undefined);
  await real?.close().catch(() => undefined);
  entry.releaseUmask?.();
  entry.releaseUmask = undefined;
}

/** A Kysely's (or one of its connections') queries as `RunQuery`. */
function viaKysely(db: Pick<Kysely<Database>, 'executeQuery'>): RunQuery {
  return async <Row>(text: string) => (await sql.raw<Row>(text).execute(db as Kysely<Database>)).rows;
}

/** A plugin that fails every query once `stale()`: the loan's database was dropped (parked). */
function refusingAfter(stale: () => boolean): KyselyPlugin {
  return {
    transformQuery(args) {
      if (stale()) throw new Error('The embedded test database was dropped: this handle of it is closed.');
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
}
