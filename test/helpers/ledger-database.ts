import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { seedFromBuiltCluster } from '../../src/db/embedded-cluster.js';
import { urlWithDatabase, withClient } from './database-templates.js';
import { backend } from './test-database.js';

/** A second database standing in for the merchant's own ledger, which books queries read. */
export interface LedgerDatabase {
  /** A postgres:// URL to it, as RECON_BOOKS_DATABASE_URL would hold. */
  url: string;
  /** Runs SQL on it as its owner (to set up and change the ledger's tables). */
  exec(sql: string): Promise<void>;
  /** The rows of a query, for checking the ledger was not written. */
  rows(sql: string): Promise<unknown[]>;
  drop(): Promise<void>;
}

/**
 * On the server suite a real database `wr_ledger_<random>` beside the test's own, dropped
 * afterwards; on the embedded suite an in-memory PGlite served over the PostgreSQL wire
 * protocol on a Unix socket, so the books query goes through the same pg client either way.
 */
export async function createLedgerDatabase(): Promise<LedgerDatabase> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (backend === 'postgres' && adminUrl) {
    const name = `wr_ledger_${randomBytes(6).toString('hex')}`;
    await withClient(adminUrl, (admin) => admin.query(`create database "${name}"`));
    const url = urlWithDatabase(adminUrl, name);
    return {
      url,
      exec: async (sql) => void (await withClient(url, (c) => c.query(sql))),
      rows: async (sql) => (await withClient(url, (c) => c.query(sql))).rows,
      drop: async () => void (await withClient(adminUrl, (admin) => admin.query(`drop database if exists "${name}" with (force)`))),
    };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const folder = mkdtempSync(path.join(tmpdir(), 'wr-ledger-'));
  // From a copy of the cluster the build made, as the product's embedded databases start: an
  // in-memory PGlite runs initdb, about 5 s of CPU for each file that uses a ledger.
  const dataDir = path.join(folder, 'data');
  const pglite = seedFromBuiltCluster(dataDir) ? await PGlite.create(dataDir) : await PGlite.create();
  const server = new PGLiteSocketServer({ db: pglite, path: path.join(folder, '.s.PGSQL.5432'), maxConnections: 8 });
  await server.start();
  const url = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(folder)}`;
  return {
    url,
    exec: async (sql) => void (await pglite.exec(sql)),
    rows: async (sql) => (await pglite.query(sql)).rows,
    drop: async () => {
      await server.stop();
      await pglite.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
