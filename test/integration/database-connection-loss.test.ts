import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { describeDatabaseFailure, isConnectionLost } from '../../src/db/connection-errors.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';
import { ConfigError } from '../../src/errors.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

async function terminate(pid: number): Promise<void> {
  // Only a session of this file's own database: others' tests share the server.
  const admin = new pg.Client({ connectionString: t.childEnv.DATABASE_URL });
  await admin.connect();
  try {
    await admin.query('select pg_terminate_backend($1) from pg_stat_activity where pid = $1 and datname = current_database()', [pid]);
  } finally {
    await admin.end();
  }
}

describe.skipIf(backend !== 'postgres')('a lost PostgreSQL connection fails the step, never the process', () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openDatabase({ databaseUrl: t.childEnv.DATABASE_URL, dataDir: 'memory://', command: 'test', poolSize: 2 });
  });
  afterAll(async () => handle?.close());

  it('a connection terminated inside a transaction, between statements, rejects the transaction; the pool reconnects', async () => {
    const failed = await handle.db
      .transaction()
      .execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        await terminate(rows[0]!.pid);
        // The socket's error arrives while the client is checked out and idle: it must not reach the process.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await sql`select 1`.execute(trx);
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isConnectionLost(failed)).toBe(true);
    expect(describeDatabaseFailure(failed, handle.description)).toMatch(/^the database connection was lost \(PostgreSQL database "[a-z0-9_]+" on 127\.0\.0\.1:5432: /);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
    expect(rows).toEqual([{ one: 1 }]);
  });

  it('a statement longer than DATABASE_STATEMENT_TIMEOUT is cancelled and named so', async () => {
    const short = await openDatabase({ databaseUrl: t.childEnv.DATABASE_URL, dataDir: 'memory://', command: 'test', poolSize: 1, timeouts: { statementMs: 1_000 } });
    try {
      const error = await sql`select pg_sleep(5)`.execute(short.db).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(describeDatabaseFailure(error, short.description)).toMatch(/^a database statement took longer than DATABASE_STATEMENT_TIMEOUT and was cancelled \(PostgreSQL database "[a-z0-9_]+" on 127\.0\.0\.1/);
      const settings = await sql<{ statement_timeout: string; idle: string }>`select current_setting('statement_timeout') as statement_timeout, current_setting('idle_in_transaction_session_timeout') as idle`.execute(short.db);
      expect(settings.rows[0]).toEqual({ statement_timeout: '1s', idle: '1min' });
    } finally {
      await short.close();
    }
  });

  it('a transaction left idle longer than DATABASE_IDLE_IN_TRANSACTION_TIMEOUT is ended by the server', async () => {
    const short = await openDatabase({ databaseUrl: t.childEnv.DATABASE_URL, dataDir: 'memory://', command: 'test', poolSize: 1, timeouts: { idleInTransactionMs: 1_000 } });
    try {
      const error = await short.db
        .transaction()
        .execute(async (trx) => {
          await sql`select 1`.execute(trx);
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          await sql`select 1`.execute(trx);
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(Error);
      expect(describeDatabaseFailure(error, short.description)).toMatch(/DATABASE_IDLE_IN_TRANSACTION_TIMEOUT|the database connection was lost/);
    } finally {
      await short.close();
    }
  });

  it('a server that does not answer fails the connection after DATABASE_CONNECT_TIMEOUT', async () => {
    // A listening socket that never speaks: the connection attempt must give up, not hang.
    const { createServer } = await import('node:net');
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const started = Date.now();
      const error = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/x`, dataDir: 'memory://', command: 'test', timeouts: { connectMs: 1_000 } }).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(error?.message).toMatch(/^Could not connect to PostgreSQL at 127\.0\.0\.1:\d+\/x: .*timeout/i);
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      silent.close();
    }
  });
});

describe('database timeouts are configured by DATABASE_CONNECT_TIMEOUT, DATABASE_STATEMENT_TIMEOUT and DATABASE_IDLE_IN_TRANSACTION_TIMEOUT', () => {
  it('defaults to 10 s, 60 s and 60 s and accepts durations', () => {
    expect(loadConfig({ env: {}, ignoreDotEnv: true }).databaseTimeouts).toEqual({ connectMs: 10_000, statementMs: 60_000, idleInTransactionMs: 60_000 });
    const set = loadConfig({ env: { DATABASE_CONNECT_TIMEOUT: '3s', DATABASE_STATEMENT_TIMEOUT: '2m', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT: '90s' }, ignoreDotEnv: true });
    expect(set.databaseTimeouts).toEqual({ connectMs: 3_000, statementMs: 120_000, idleInTransactionMs: 90_000 });
  });

  it('refuses a timeout that is not a duration, naming the variable', () => {
    expect(() => loadConfig({ env: { DATABASE_STATEMENT_TIMEOUT: 'forever' }, ignoreDotEnv: true })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { DATABASE_STATEMENT_TIMEOUT: 'forever' }, ignoreDotEnv: true })).toThrow(/DATABASE_STATEMENT_TIMEOUT.*must be a duration from 1s to 1h/);
  });
});
