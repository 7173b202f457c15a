import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pg from 'pg';
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

/**
 * A fresh, migrated database for one test file: its own PostgreSQL database on the server,
 * or its own embedded one. `onDisk` puts the embedded one in a temp folder child processes can open.
 */
export async function createTestDatabase(options: { migrate?: boolean; onDisk?: boolean } = {}): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (adminUrl) {
    const name = `wr_test_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database "${name}"`);
    await admin.end();
    const url = urlWithDatabase(adminUrl, name);
    const handle = await openDatabase({ databaseUrl: url, dataDir: 'memory://', command: 'test', poolSize: 5 });
    if (migrate) await migrateToLatest(handle.db);
    return {
      handle,
      childEnv: { DATABASE_URL: url },
      async drop() {
        await handle.close().catch(() => undefined);
        const admin2 = new pg.Client({ connectionString: adminUrl });
        await admin2.connect();
        await admin2.query(`drop database if exists "${name}" with (force)`);
        await admin2.end();
      },
    };
  }
  const dir = options.onDisk ? mkdtempSync(path.join(tmpdir(), 'wr-test-')) : undefined;
  const handle = await openDatabase({ dataDir: dir ?? 'memory://', command: 'test' });
  if (migrate) await migrateToLatest(handle.db);
  return {
    handle,
    childEnv: dir ? { RECON_DATA_DIR: dir } : {},
    async drop() {
      await handle.close().catch(() => undefined);
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs `fn` on the test database while CLI children own it: on PostgreSQL through the open
 * handle; embedded, by opening the folder for the call only (after the file closed its handle).
 */
export async function withDatabase<T>(t: TestDatabase, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (backend === 'postgres') return fn(t.handle.db);
  const handle = await openDatabase({ dataDir: t.childEnv.RECON_DATA_DIR!, command: 'test inspection' });
  try {
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}
