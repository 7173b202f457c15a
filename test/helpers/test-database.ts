import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { testDatabaseName } from './database-templates.js';
import type { Database } from '../../src/db/database.types.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';

/** Which backend the suite runs on: real PostgreSQL when TEST_DATABASE_URL is set, else embedded. */
export const backend: 'postgres' | 'embedded' = process.env.TEST_DATABASE_URL ? 'postgres' : 'embedded';

export interface TestDatabase {
  handle: DatabaseHandle;
  /** Environment for a child process that must use the same database (DATABASE_URL or RECON_DATA_DIR). */
  childEnv: Record<string, string>;
  /** For embedded child processes: the handle must be closed before a child opens the folder. */
  drop(): Promise<void>;
}

function urlWithDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Creates database `name` on the server, as a copy of the migrated template when `migrate`. */
async function createServerDatabase(adminUrl: string, name: string, migrate: boolean): Promise<boolean> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
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
  } finally {
    await admin.end();
  }
}

/**
 * A fresh, migrated database for one test file: its own PostgreSQL database on the server,
 * or its own embedded one. `onDisk` lets child processes open the embedded one (`childEnv`).
 * Both are copies of templates the global setup made, so no test pays for initdb or migrations.
 */
export async function createTestDatabase(options: { migrate?: boolean; onDisk?: boolean } = {}): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const name = testDatabaseName();
    const fromTemplate = await createServerDatabase(adminUrl, name, migrate);
    const url = urlWithDatabase(adminUrl, name);
    // Held for the database's life: an open session keeps the sweep of a run starting beside
    // this one (which drops test databases nobody is connected to) away from it.
    const keeper = new pg.Client({ connectionString: url });
    keeper.on('error', () => undefined);
    await keeper.connect();
    const handle = await openDatabase({ databaseUrl: url, dataDir: 'memory://', command: 'test', poolSize: 5 });
    if (migrate && !fromTemplate) await migrateToLatest(handle.db);
    return {
      handle,
      childEnv: { DATABASE_URL: url },
      async drop() {
        await handle.close().catch(() => undefined);
        await keeper.end().catch(() => undefined);
        const admin2 = new pg.Client({ connectionString: adminUrl });
        await admin2.connect();
        await admin2.query(`drop database if exists "${name}" with (force)`);
        await admin2.end();
      },
    };
  }
  // Always in a folder, a copy of the template: as quick as an in-memory database and far
  // quicker to make. Only `onDisk` ones are handed to child processes.
  const dir = mkdtempSync(path.join(tmpdir(), 'wr-test-'));
  const copied = copyEmbeddedTemplate(dir, { migrate });
  const handle = await openDatabase({ dataDir: dir, command: 'test' });
  if (migrate && !copied) await migrateToLatest(handle.db);
  const t: TestDatabase = {
    handle,
    childEnv: options.onDisk ? { RECON_DATA_DIR: dir } : {},
    async drop() {
      await handle.close().catch(() => undefined);
      await stopServing(t);
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
 * Copies the embedded template into folder `dir` (created if missing), migrated or as initdb left
 * it, for tests that hand an existing database folder to a process. Returns false, leaving the
 * folder alone, when the suite runs without templates.
 */
export function copyEmbeddedTemplate(dir: string, options: { migrate?: boolean } = {}): boolean {
  // Undefined in a run without the global setup (vitest.mutate.config.ts).
  const templates = inject('embeddedTemplates') as { bare: string; migrated: string } | undefined;
  const source = templates && (options.migrate === false ? templates.bare : templates.migrated);
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
