import { chmodSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { DatabaseError, LockHeldError } from '../errors.js';
import { maskUrlPasswords } from '../logger.js';
import { seedFromBuiltCluster } from './embedded-cluster.js';
import { dataDirAccessError } from './data-dir-access.js';
import { holdOwnerOnlyUmask, prepareDataDir, restrictToOwner } from './embedded-data-dir.js';
import { assertRoomToWrite } from './embedded-free-space.js';
import { acquireDataDirLock } from './embedded-lock.js';
import type { Database } from './database.types.js';
import { sizeHeapForMemory } from '../process-heap.js';

export type DatabaseKind = 'postgres' | 'embedded';

/** An open database: the Kysely instance plus what its owner must know to lock and close it. */
export interface DatabaseHandle {
  readonly db: Kysely<Database>;
  readonly kind: DatabaseKind;
  /** Where it lives, safe to print (no password). */
  readonly description: string;
  /** Embedded only: opened through the socket of the process that holds it (that process migrated it). */
  readonly shared?: boolean;
  /** Embedded only: where this process serves the database to others while it is open. */
  readonly socketPath?: string;
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
  /**
   * Embedded only: serve the database on a Unix socket in its (owner-only) folder while it is
   * open, so other processes of the same user, and psql, can use it; this process uses it
   * through the socket too, so every transaction is serialized in one place.
   */
  serve?: boolean;
  /** Embedded only: when another process holds the folder and serves it, use it through its socket instead of failing. */
  shareIfServed?: boolean;
  /** PostgreSQL server: how long connecting, a statement and an idle transaction may take (defaults as DATABASE_*_TIMEOUT). */
  timeouts?: Partial<DatabaseTimeouts>;
}

/** How long a database call may take before it fails (DATABASE_CONNECT_TIMEOUT and friends). */
export interface DatabaseTimeouts {
  connectMs: number;
  statementMs: number;
  idleInTransactionMs: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: Readonly<DatabaseTimeouts> = { connectMs: 10_000, statementMs: 60_000, idleInTransactionMs: 60_000 };

/**
 * Session settings every server connection starts with, so a stuck query or a transaction left
 * open fails its attempt (which the night retries) instead of holding the worker all night, and
 * keepalive notices a server that vanished without closing the socket, and no query is JIT-compiled.
 */
function sessionSettings(timeouts: DatabaseTimeouts) {
  return {
    connectionTimeoutMillis: timeouts.connectMs,
    statement_timeout: timeouts.statementMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    // No JIT compilation: the day-scoped views are keyed lookups the planner prices high (one
    // aggregate per account-date), so it compiled them for ~2 s to save milliseconds.
    options: '-c jit=off',
    keepAlive: true,
  };
}

/** The port number in the socket's file name: libpq and pg find `<folder>/.s.PGSQL.<port>`. */
export const EMBEDDED_SOCKET_PORT = 5432;
// A Unix socket path longer than this cannot be bound (sun_path holds 108 bytes with its NUL).
const MAX_SOCKET_PATH = 107;

/** Where the embedded database of `dataDir` is served while a process holds it with `serve`. */
export function embeddedSocketPath(dataDir: string): string {
  return path.join(path.resolve(dataDir), `.s.PGSQL.${EMBEDDED_SOCKET_PORT}`);
}

/** Connection settings for the served embedded database of `dataDir` (PGlite's one user and database). */
export function embeddedSocketConfig(dataDir: string): { host: string; port: number; user: string; database: string } {
  return { host: path.resolve(dataDir), port: EMBEDDED_SOCKET_PORT, user: 'postgres', database: 'postgres' };
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

/**
 * A pool that outlives its server: a connection's network error (a restart, pg_terminate_backend,
 * a proxy dropping it) must never crash the process. The pool's own handler covers idle clients;
 * a client checked out between two statements (inside a transaction) has no listener of the pool's
 * and would throw its error at the process, so every client gets one too. The next query on a
 * broken client fails, and the pool replaces it.
 */
function survivingPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * What opens an embedded database folder: `openEmbedded`, unless a process that opens the same
 * folders again and again installed its own (the test suite keeps its databases open across the
 * commands it runs in its own process: opening a folder costs PGlite about half a second of CPU).
 */
export type EmbeddedOpener = (dataDir: string, options: { serve: boolean }, open: (how?: EmbeddedOpenOptions) => Promise<DatabaseHandle>) => Promise<DatabaseHandle>;

/**
 * How an opener opens a folder. `holdUmask: false`: the opener holds the owner-only umask
 * (`holdOwnerOnlyUmask`) itself whenever the database may write files, and may let it go while
 * the database sits idle (the test suite keeps an emptied database open between test files, which
 * must not run under a umask that is not theirs).
 */
export interface EmbeddedOpenOptions {
  holdUmask?: boolean;
}
let embeddedOpener: EmbeddedOpener | undefined;

/** Installs (or, without an argument, removes) the process's embedded opener. */
export function setEmbeddedOpener(opener?: EmbeddedOpener): void {
  embeddedOpener = opener;
}

/** Opens PostgreSQL (DATABASE_URL) or the embedded PGlite database, both behind the same Kysely. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10, { ...DEFAULT_DATABASE_TIMEOUTS, ...options.timeouts });
  const serve = options.serve === true;
  const open = (how: EmbeddedOpenOptions = {}) => openEmbedded(options.dataDir, options.command, serve, how.holdUmask ?? true);
  try {
    return await (embeddedOpener && !options.dataDir.startsWith('memory://') ? embeddedOpener(options.dataDir, { serve }, open) : open());
  } catch (error) {
    // Held by another process: through its socket if it serves one, else the lock's own message.
    if (!(error instanceof LockHeldError) || options.shareIfServed !== true) throw error;
    return openShared(options.dataDir, error);
  }
}

async function openPostgres(connectionString: string, poolSize: number, timeouts: DatabaseTimeouts): Promise<DatabaseHandle> {
  const description = describeUrl(connectionString);
  const pool = survivingPool({ connectionString, max: poolSize, types, ...sessionSettings(timeouts) });
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
    description: describeServerDatabase(connectionString),
    async connectDedicated() {
      // keepAlive notices a dead server; the timeout keeps a black-holed one from hanging a tick.
      // query_timeout: a lock query over a network gone silent fails on this side too (the
      // server's statement_timeout never hears of it), and the session is then given up.
      const client = new pg.Client({ connectionString, types, ...sessionSettings(timeouts), query_timeout: timeouts.statementMs + 5_000 });
      client.on('error', () => undefined);
      await client.connect();
      return client;
    },
    async close() {
      await pool.end();
    },
  };
}

async function openShared(dataDir: string, held: LockHeldError): Promise<DatabaseHandle> {
  if (!existsSync(embeddedSocketPath(dataDir))) throw held;
  const pool = survivingPool({ ...embeddedSocketConfig(dataDir), max: 4, types, connectionTimeoutMillis: 15_000 });
  try {
    (await pool.connect()).release();
  } catch {
    // A socket left by a process that died: the lock file decides, and it says who holds it.
    await pool.end().catch(() => undefined);
    throw held;
  }
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
    kind: 'embedded',
    shared: true,
    description: `embedded database in ${dataDir} (through the socket of the process that holds it)`,
    async connectDedicated() {
      throw new DatabaseError('The embedded database has a single connection; dedicated connections exist only on PostgreSQL.');
    },
    async close() {
      await pool.end();
    },
  };
}

/** Serves an open PGlite on the folder's socket and returns a pool that uses it, and how to stop both. */
async function serveEmbedded(pglite: PGlite, dataDir: string): Promise<{ pool: pg.Pool; socketPath: string; stop(): Promise<void> }> {
  const socketPath = embeddedSocketPath(dataDir);
  // We hold the folder's lock: a socket file here is a dead process's.
  rmSync(socketPath, { force: true });
  // Loaded only where an embedded database is served: a server-database run never pays for it.
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const server = new PGLiteSocketServer({ db: pglite, path: socketPath, maxConnections: 64 });
  await server.start();
  // The folder is 0700 already; the socket itself is owner-only too.
  chmodSync(socketPath, 0o600);
  const pool = survivingPool({ ...embeddedSocketConfig(dataDir), max: 8, types });
  return {
    pool,
    socketPath,
    async stop() {
      await pool.end();
      await server.stop();
      rmSync(socketPath, { force: true });
    },
  };
}

/**
 * The embedded database's buffer pool. PostgreSQL's default of 128 MB is zeroed in WebAssembly
 * memory at every start: half of the 0.4 s each command spent opening the folder, and 128 MB of
 * memory per process, for databases of a few megabytes. 16 MB holds one account's years of data.
 */
const EMBEDDED_SHARED_BUFFERS = '16MB';

/**
 * V8 settings of a process that holds the embedded database, whose memory is mostly PGlite's.
 *
 * PGlite's WebAssembly stays on V8's baseline compiler: no function is compiled again by the
 * optimizing one. At V8's default tiering, starting the database alone recompiled hundreds of
 * PostgreSQL's functions in the background: about half of the CPU time of a short command (`runs`,
 * a one-date report, a one-wallet snapshot) and 40 MB of memory, for code that then ran a few
 * milliseconds. A high tiering budget spared short commands, but a long one (a backfill of months)
 * still sent PostgreSQL's big functions there: 60–120 MB more peak RSS for no measurable speed
 * (its time is round trips). Dynamic tiering and tier-up off keep every function on the baseline
 * tier, the optimizing compiler left only as the fallback for a function the baseline cannot
 * compile (which --liftoff-only would refuse).
 *
 * The heap is sized for memory (sizeHeapForMemory): V8 collects it before it grows far past what is live:
 * a long command's round trips through the socket and the pool leave garbage that V8's default
 * sizing let grow to 110–150 MB of heap with 35 MB live.
 *
 * A 90-day backfill of 10 × 20 wallets measured 300–373 MiB peak RSS with a high tiering budget,
 * 256 MiB on the baseline tier, 193 MiB with the heap sized for memory too, in about the same
 * time. Flags apply to modules compiled after they are set: set before PGlite is loaded. They
 * change speed and memory, never results.
 */
const EMBEDDED_V8_FLAGS = '--no-wasm-dynamic-tiering --no-wasm-tier-up';
let embeddedFlagsSet = false;

function setEmbeddedV8Flags(): void {
  if (embeddedFlagsSet) return;
  embeddedFlagsSet = true;
  v8.setFlagsFromString(EMBEDDED_V8_FLAGS);
  sizeHeapForMemory();
}

async function openEmbedded(dataDir: string, command: string, serve: boolean, holdUmask: boolean): Promise<DatabaseHandle> {
  const inMemory = dataDir.startsWith('memory://');
  // Whether files may be open to others: those of a database PGlite's initdb makes here, or of a
  // folder no version that tightens its files has opened (one without the marker).
  let loosePermissions = false;
  const unlock = inMemory ? () => undefined : withDataDirAccess(dataDir, () => {
    loosePermissions = !prepareDataDir(dataDir).marked;
    // A full disk is said now, naming the folder and the room needed, not half-way through a write.
    assertRoomToWrite(dataDir);
    return acquireDataDirLock(dataDir, command);
  });
  const restoreUmask = inMemory || !holdUmask ? () => undefined : holdOwnerOnlyUmask();
  const release = () => {
    restoreUmask();
    unlock();
  };
  let pglite: PGlite;
  try {
    // A copy of the built cluster is owner-only already; without one PGlite's initdb runs.
    if (!inMemory && !existsSync(path.join(dataDir, 'PG_VERSION')) && !seedFromBuiltCluster(dataDir)) loosePermissions = true;
    setEmbeddedV8Flags();
    const { PGlite } = await import('@electric-sql/pglite');
    pglite = await PGlite.create(dataDir, { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`] });
  } catch (error) {
    release();
    throw (inMemory ? undefined : dataDirAccessError(dataDir, error)) ?? new DatabaseError(`Could not open the embedded database in ${dataDir}: ${(error as Error).message}`, { cause: error });
  }
  try {
    if (loosePermissions) restrictToOwner(dataDir);
  } catch (error) {
    await pglite.close().catch(() => undefined);
    release();
    throw dataDirAccessError(dataDir, error) ?? new DatabaseError(`Could not make the embedded database in ${dataDir} private to its owner: ${(error as Error).message}`, { cause: error });
  }
  let served: Awaited<ReturnType<typeof serveEmbedded>> | undefined;
  if (serve && !inMemory && embeddedSocketPath(dataDir).length <= MAX_SOCKET_PATH) {
    try {
      served = await serveEmbedded(pglite, dataDir);
    } catch (error) {
      await pglite.close().catch(() => undefined);
      release();
      throw new DatabaseError(`Could not serve the embedded database in ${dataDir} on its socket: ${(error as Error).message}`, { cause: error });
    }
  }
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const pool = served?.pool ?? new pg.Pool(Object.assign(createPgConfig(pglite), { types }) as unknown as pg.PoolConfig);
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
    kind: 'embedded',
    socketPath: served?.socketPath,
    description: inMemory ? 'embedded database (in memory)' : `embedded database in ${dataDir}`,
    async connectDedicated() {
      throw new DatabaseError('The embedded database has a single connection; dedicated connections exist only on PostgreSQL.');
    },
    async close() {
      try {
        if (served) await served.stop();
        else await pool.end();
        await pglite.close();
      } finally {
        release();
      }
    },
  };
}

/** Runs `fn` on the data directory, turning a file-system refusal into the error that says what to do. */
function withDataDirAccess<T>(dataDir: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw dataDirAccessError(dataDir, error) ?? error;
  }
}

/** host:port/database of a connection string, never its password. */
/** A server database as people name it, without its password: PostgreSQL database "recon" on db.example:5432. */
export function describeServerDatabase(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || url.username || 'postgres';
    return `PostgreSQL database "${name}" on ${url.hostname}:${url.port || '5432'}`;
  } catch {
    return 'the configured PostgreSQL database';
  }
}

export function describeUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'the configured server';
  }
}
