import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { DatabaseError } from '../errors.js';
import { maskUrlPasswords } from '../logger.js';
import { holdOwnerOnlyUmask, prepareDataDir, restrictToOwner } from './embedded-data-dir.js';
import { acquireDataDirLock } from './embedded-lock.js';
import type { Database } from './database.types.js';

export type DatabaseKind = 'postgres' | 'embedded';

/** An open database: the Kysely instance plus what its owner must know to lock and close it. */
export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly kind: DatabaseKind;
  /** Where it lives, safe to print (no password). */
  readonly description: string;
  /** A fresh dedicated connection outside the pool (PostgreSQL only), for session advisory locks. */
  connectDedicated(): Promise<pg.Client>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** A postgres:// URL; without it the embedded database is used. */
  databaseUrl?: string;
  /** Embedded database folder, or `memory://` for a throwaway in-memory one. */
  dataDir: string;
  /** Names this process in the embedded lock file ("wallet-recon snapshot"). */
  command: string;
  poolSize?: number;
}

const DATE_OID = 1082;

// `date` must stay a YYYY-MM-DD string: pg's default turns it into a local-time Date, which
// shifts business dates by a day west of UTC.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === DATE_OID) return (value: string) => value;
    return pg.types.getTypeParser(oid, format);
  },
};

/** Opens PostgreSQL (DATABASE_URL) or the embedded PGlite database, both behind the same Kysely. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options.poolSize ?? 10) : openEmbedded(options.dataDir, options.command);
}

async function openPostgres(connectionString: string, poolSize: number): Promise<DatabaseHandle> {
  const description = describeUrl(connectionString);
  const pool = new pg.Pool({ connectionString, max: poolSize, types, connectionTimeoutMillis: 15_000 });
  // An idle client's network error must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new DatabaseError(`Could not connect to PostgreSQL at ${description}: ${maskUrlPasswords((error as Error).message)}. Check DATABASE_URL and that the server is running.`, { cause: error });
  }
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
    kind: 'postgres',
    description,
    async connectDedicated() {
      // keepAlive notices a dead server; the timeout keeps a black-holed one from hanging a tick.
      const client = new pg.Client({ connectionString, types, keepAlive: true, connectionTimeoutMillis: 15_000 });
      client.on('error', () => undefined);
      await client.connect();
      return client;
    },
    async close() {
      await pool.end();
    },
  };
}

async function openEmbedded(dataDir: string, command: string): Promise<DatabaseHandle> {
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) prepareDataDir(dataDir);
  const unlock = inMemory ? () => undefined : acquireDataDirLock(dataDir, command);
  const restoreUmask = inMemory ? () => undefined : holdOwnerOnlyUmask();
  const release = () => {
    restoreUmask();
    unlock();
  };
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dataDir);
  } catch (error) {
    release();
    throw new DatabaseError(`Could not open the embedded database in ${dataDir}: ${(error as Error).message}`, { cause: error });
  }
  try {
    if (!inMemory) restrictToOwner(dataDir);
  } catch (error) {
    await pglite.close().catch(() => undefined);
    release();
    throw new DatabaseError(`Could not make the embedded database in ${dataDir} private to its owner: ${(error as Error).message}`, { cause: error });
  }
  const config = Object.assign(createPgConfig(pglite), { types });
  const pool = new pg.Pool(config as unknown as pg.PoolConfig);
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
    kind: 'embedded',
    description: inMemory ? 'embedded database (in memory)' : `embedded database in ${dataDir}`,
    async connectDedicated() {
      throw new DatabaseError('The embedded database has a single connection; dedicated connections exist only on PostgreSQL.');
    },
    async close() {
      try {
        await pool.end();
        await pglite.close();
      } finally {
        release();
      }
    },
  };
}

/** host:port/database of a connection string, never its password. */
export function describeUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'the configured server';
  }
}
