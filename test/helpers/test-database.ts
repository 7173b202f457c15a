import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { testDatabaseName, urlWithDatabase, withClient } from './database-templates.js';
import type { Database } from '../../src/db/database.types.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';
import { createSilentLogger } from '../../src/logger.js';
import { installJobQueue } from '../../src/queue/job-queue.js';
import { emptyForReuse, shapeOf, type RunQuery } from './database-reuse.js';
import { forgetFolder, keepingInstalled, keepOpen, noteTemplateShape, parkFolder, takeParked } from './kept-embedded.js';

/** Which backend the suite runs on: real PostgreSQL when TEST_DATABASE_URL is set, else embedded. */
export const backend: 'postgres' | 'embedded' = process.env.TEST_DATABASE_URL ? 'postgres' : 'embedded';

export interface TestDatabase {
  handle: DatabaseHandle;
  /** Environment for a child process that must use the same database (DATABASE_URL or RECON_DATA_DIR). */
  childEnv: Record<string, string>;
  /** For embedded child processes: the handle must be closed before a child opens the folder. */
  drop(): Promise<void>;
}

/**
 * Migrated server databases this worker made and its earlier files are done with, emptied for the
 * next file: `CREATE DATABASE … TEMPLATE` costs about half a second of the server's disk each,
 * emptying one a few milliseconds. A database is parked only when its schema and migration ledger
 * are still the template's (a file that changed them gets it dropped); the run's global teardown
 * drops what is parked when the workers end.
 */
const parked: Array<{ name: string; url: string }> = [];
let templateShape: string | undefined;

/** A pg client's queries as `RunQuery` (database-reuse.ts). */
const viaClient = (client: pg.Client): RunQuery => async <Row>(text: string) => (await client.query(text)).rows as Row[];

/**
 * Empties server database `url` for the next file (database-reuse.ts). Returns false, leaving it
 * to be dropped, when its shape is no longer the template's.
 */
async function emptyServerDatabase(name: string, url: string, adminUrl: string): Promise<boolean> {
  if (templateShape === undefined) return false;
  const shape = templateShape;
  // Sessions a killed child left behind would hold locks.
  await withClient(adminUrl, (admin) => admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]));
  return withClient(url, (client) => emptyForReuse(viaClient(client), shape));
}

/** Creates database `name` on the server, as a copy of the migrated template when `migrate`. */
async function createServerDatabase(adminUrl: string, name: string, migrate: boolean): Promise<boolean> {
  return withClient(adminUrl, async (admin) => {
    const template = migrate ? inject('serverTemplate') : '';
    if (template) {
      try {
        await admin.query(`create database "${name}" template "${template}"`);
        return true;
      } catch (error) {
        // 3D000: the template is gone (a run with other migrations swept it); create and migrate instead.
        if ((error as { code?: string }).code !== '3D000') throw error;
      }
    }
    await admin.query(`create database "${name}"`);
    return false;
  });
}

/**
 * A fresh, migrated database for one test file: its own PostgreSQL database on the server,
 * or its own embedded one. `onDisk` lets child processes open the embedded one (`childEnv`).
 * Migrated ones are copies of the templates the global setup made, so no test pays for migrations.
 */
export async function createTestDatabase(options: { migrate?: boolean; onDisk?: boolean } = {}): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const reused = migrate ? parked.pop() : undefined;
    const name = reused?.name ?? testDatabaseName();
    const fromTemplate = reused !== undefined || (await createServerDatabase(adminUrl, name, migrate));
    const url = urlWithDatabase(adminUrl, name);
    if (fromTemplate && templateShape === undefined) templateShape = await withClient(url, (client) => shapeOf(viaClient(client)));
    // Held for the database's life: an open session keeps the sweep of a run starting beside
    // this one (which drops test databases nobody is connected to) away from it.
    const keeper = new pg.Client({ connectionString: url });
    keeper.on('error', () => undefined);
    await keeper.connect();
    const handle = await openDatabase({ databaseUrl: url, dataDir: 'memory://', command: 'test', poolSize: 5 });
    if (migrate && !fromTemplate) {
      await migrateToLatest(handle.db);
      // As the template has it (and `wallet-recon migrate`): the job queue's schema.
      await installJobQueue({ databaseUrl: { reveal: () => url }, queue: { schema: 'pgboss', jobExpiryMs: 60_000 } } as Parameters<typeof installJobQueue>[0], createSilentLogger());
    }
    return {
      handle,
      childEnv: { DATABASE_URL: url },
      async drop() {
        await handle.close().catch(() => undefined);
        await keeper.end().catch(() => undefined);
        if (fromTemplate && (await emptyServerDatabase(name, url, adminUrl))) {
          parked.push({ name, url });
          return;
        }
        await withClient(adminUrl, (admin) => admin.query(`drop database if exists "${name}" with (force)`));
      },
    };
  }
  // Always in a folder, a copy of the template: as quick as an in-memory database and far
  // quicker to make. Only `onDisk` ones are handed to child processes. A copy an earlier test of
  // this worker dropped is taken again, emptied and still open, when there is one (kept-embedded.ts).
  const reused = migrate ? takeParked() : undefined;
  const dir = reused ?? mkdtempSync(path.join(tmpdir(), 'wr-test-'));
  // Unmigrated: the empty folder, which the database fills from the build's cluster.
  const copied = reused !== undefined || (migrate && copyEmbeddedTemplate(dir));
  // Kept open in this worker between the commands a test runs in-process (see kept-embedded.ts).
  keepOpen(dir, { templateCopy: copied });
  const handle = await openDatabase({ dataDir: dir, command: 'test' });
  if (migrate && !copied) await migrateToLatest(handle.db);
  if (copied && reused === undefined && keepingInstalled()) await noteTemplateShape(handle.db);
  let dropped = false;
  const t: TestDatabase = {
    handle,
    childEnv: options.onDisk ? { RECON_DATA_DIR: dir } : {},
    async drop() {
      // Once: a second drop must not remove a folder parked for, or taken by, another test.
      if (dropped) return;
      dropped = true;
      await handle.close().catch(() => undefined);
      await stopServing(t);
      if (await parkFolder(dir)) return;
      await forgetFolder(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

/** Embedded databases this process serves to the CLI commands it runs (see `serveToCommands`). */
const serving = new WeakMap<TestDatabase, DatabaseHandle>();

/**
 * Embedded: closes the file's handle and opens the folder again serving it on its socket, as
 * the schedule worker does, so the CLI commands a test runs in this process reach it through
 * the socket (as commands beside a running worker do) and `withDatabase` uses this handle: one
 * open for the file instead of one per command and inspection, a fraction of a second each.
 * Commands that must hold the folder themselves (snapshot, backfill, migrate, demo) are refused
 * while it is served. On PostgreSQL nothing changes.
 */
export async function serveToCommands(t: TestDatabase): Promise<void> {
  if (backend === 'postgres' || serving.has(t)) return;
  await t.handle.close().catch(() => undefined);
  serving.set(t, await openDatabase({ dataDir: t.childEnv.RECON_DATA_DIR!, command: 'test serving its CLI commands', serve: true }));
}

/** Stops what `serveToCommands` started: commands and inspections open the folder again. */
export async function stopServing(t: TestDatabase): Promise<void> {
  const handle = serving.get(t);
  serving.delete(t);
  await handle?.close();
}

/**
 * Copies the migrated embedded template into folder `dir` (created if missing), for tests that
 * hand an existing database folder to a process. Returns false, leaving the folder alone, when
 * the suite runs without templates.
 */
export function copyEmbeddedTemplate(dir: string): boolean {
  // Undefined in a run without the global setup (vitest.mutate.config.ts).
  const source = inject('embeddedTemplate') as string | undefined;
  if (source === undefined || !existsSync(source)) return false;
  cpSync(source, dir, { recursive: true });
  return true;
}

/**
 * Runs `fn` on the test database while CLI children own it: on PostgreSQL through the open
 * handle; embedded, through the handle serving it (`serveToCommands`), else by opening the
 * folder for the call only (after the file closed its handle).
 */
export async function withDatabase<T>(t: TestDatabase, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (backend === 'postgres') return fn(t.handle.db);
  const served = serving.get(t);
  if (served) return fn(served.db);
  const handle = await openDatabase({ dataDir: t.childEnv.RECON_DATA_DIR!, command: 'test inspection' });
  try {
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}
