import type PgBoss from 'pg-boss';
import pg from 'pg';
import { isConnectionLost } from '../db/connection-errors.js';
import type { Config } from '../config/index.js';
import { ConfigError, DatabaseError, SchemaMismatchError } from '../errors.js';
import type { Logger } from '../logger.js';

/** pg-boss, loaded from node_modules when a queue is opened: the bundle keeps it (and its cron-parser and luxon) out of every other command. */
const loadPgBoss = async (): Promise<typeof PgBoss> => (await import('pg-boss')).default;

/**
 * The queues of a night on a PostgreSQL server. One capture job per (account, business date),
 * its singletonKey both: the `stately` policy keeps at most one waiting and one active job per
 * key, so however many workers plan a slot it is planned once and worked by one at a time.
 */
export const QUEUES = {
  /** One account's capture of one business date; a retry is a new job of the same key with a start time. */
  capture: 'capture',
  /** Capture jobs still failing when their window closed. */
  captureDead: 'capture-dead',
  /** One per business date: settles what was not captured (date.missed), reconciles, writes the digest. */
  settle: 'settle-date',
  /** Every minute, once across the fleet: books pulls, owed results, sign-off checks, dates left unsettled. */
  maintain: 'maintain',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** How a capture job is keyed: one account, one business date. */
export function captureKey(account: string, businessDate: string): string {
  return `${account}|${businessDate}`;
}

/** The settle job of a date: one when every account is captured early, one at the window's close. */
export function settleKey(businessDate: string, when: 'captured' | 'closed'): string {
  return `${businessDate}|${when}`;
}

// Retries of a capture job are ours (a new job per RECON_RETRY_DELAYS step); pg-boss's own retry
// serves only a job that expired under a worker that died: it is taken again at once, this often.
export const EXPIRY_RETRIES = 20;

/** The connection and schema pg-boss works in: the same database as everything else, its own schema. */
function bossOptions(config: Pick<Config, 'databaseUrl' | 'queue'>, extra: PgBoss.ConstructorOptions): PgBoss.ConstructorOptions {
  const url = config.databaseUrl?.reveal();
  if (url === undefined) throw new ConfigError('The job queue needs a PostgreSQL server (DATABASE_URL); the embedded database runs its night in process.');
  return { connectionString: url, schema: config.queue.schema, application_name: 'wallet-recon job queue', max: 4, ...extra };
}

/** Logs pg-boss's own errors (a lost connection while polling): they never end the process. */
function watchErrors(boss: PgBoss, logger: Logger): void {
  boss.on('error', (error) => logger.warn({ err: error }, `the job queue: ${error.message}`));
}

/**
 * Creates pg-boss's schema (RECON_QUEUE_SCHEMA) and the night's queues, or brings them to this
 * version: `wallet-recon migrate` does it once, so workers never race to create it. Returns the
 * queue schema's version.
 */
export async function installJobQueue(config: Pick<Config, 'databaseUrl' | 'queue'>, logger: Logger): Promise<number> {
  // Two `migrate` at once (several workers' start scripts) take turns: pg-boss's creation and
  // createQueue are not safe side by side.
  const turn = new pg.Client({ connectionString: bossOptions(config, {}).connectionString });
  turn.on('error', () => undefined);
  await turn.connect();
  const boss = new (await loadPgBoss())(bossOptions(config, { migrate: true, supervise: false, schedule: false }));
  watchErrors(boss, logger);
  try {
    await turn.query(`select pg_advisory_lock(hashtext('wallet-recon job queue install'))`);
    await boss.start();
    await createQueues(boss);
    return Number(await boss.schemaVersion());
  } catch (error) {
    throw new DatabaseError(`Could not create the job queue's schema "${config.queue.schema}": ${(error as Error).message}`, { cause: error });
  } finally {
    await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
    // Ending the session releases its advisory lock.
    await turn.end().catch(() => undefined);
  }
}

async function createQueues(boss: PgBoss): Promise<void> {
  const existing = new Set((await boss.getQueues()).map((q) => q.name));
  const ensure = async (name: string, options: Omit<PgBoss.Queue, 'name'>) => {
    if (existing.has(name)) await boss.updateQueue(name, { name, ...options });
    else await boss.createQueue(name, { name, ...options });
  };
  // The dead-letter queue first: the capture queue refers to it.
  await ensure(QUEUES.captureDead, { policy: 'standard', retentionDays: 14 });
  await ensure(QUEUES.capture, { policy: 'stately', deadLetter: QUEUES.captureDead, retryLimit: EXPIRY_RETRIES, retryDelay: 0 });
  await ensure(QUEUES.settle, { policy: 'stately', retryLimit: 5, retryDelay: 30 });
  await ensure(QUEUES.maintain, { policy: 'singleton', retryLimit: 0 });
}

/**
 * A started pg-boss for a worker or a command. It never creates the schema (that is `migrate`'s):
 * a database without it is refused, saying so. `supervise` runs the sweep that expires the jobs
 * of dead workers, at a quarter of the job expiry so a killed worker's job is taken within it.
 */
export async function openJobQueue(config: Config, logger: Logger, role: 'worker' | 'command'): Promise<PgBoss> {
  const sweepSeconds = Math.max(1, Math.floor(config.queue.jobExpiryMs / 4000));
  const options = bossOptions(config, {});
  // Only a command's one-off reads: a worker's pool also carries its polling.
  const pool = new pg.Pool({ connectionString: options.connectionString, application_name: options.application_name, max: role === 'worker' ? 4 : 2 });
  pool.on('error', (error) => logger.warn({ err: error }, `the job queue's connection: ${error.message}`));
  const boss = new (await loadPgBoss())({
    db: waitingDb(pool),
    schema: config.queue.schema,
    migrate: false,
    supervise: role === 'worker',
    schedule: role === 'worker',
    maintenanceIntervalSeconds: sweepSeconds,
  });
  pools.set(boss, pool);
  watchErrors(boss, logger);
  try {
    await boss.start();
  } catch (error) {
    await closeJobQueue(boss, 0).catch(() => undefined);
    const message = (error as Error).message;
    if (/not installed|does not exist/i.test(message)) {
      throw new SchemaMismatchError(`The job queue's schema "${config.queue.schema}" (RECON_QUEUE_SCHEMA) is not in the database: run "wallet-recon migrate" first (it creates it).`, { cause: error });
    }
    throw new DatabaseError(`Could not open the job queue (schema "${config.queue.schema}"): ${message}`, { cause: error });
  }
  return boss;
}

/** Stops pg-boss; the jobs a stopping worker still holds are failed back to their queues after `graceMs`. */
export async function closeJobQueue(boss: PgBoss, graceMs: number, beforePoolEnds?: () => Promise<void>): Promise<void> {
  const pool = pools.get(boss);
  try {
    await boss.stop({ graceful: true, wait: true, timeout: Math.max(1000, graceMs) });
  } finally {
    await beforePoolEnds?.().catch(() => undefined);
    pools.delete(boss);
    if (pool) {
      closing.add(pool);
      await pool.end().catch(() => undefined);
    }
  }
}

// The pools of open queues (pg-boss does not close a pool it was given), and those being closed.
const pools = new WeakMap<PgBoss, pg.Pool>();
const closing = new WeakSet<pg.Pool>();

// How often a query of the queue asks again while the database is away.
const DATABASE_AWAY_RETRY_MS = 1_000;

/**
 * pg-boss's queries on our pool, waiting for a database that is away (a restart, a failover)
 * instead of failing: pg-boss 10.4 completes and fails jobs without awaiting the promise, so a
 * connection refused at that moment would end the worker with an unhandled rejection.
 */
function waitingDb(pool: pg.Pool): PgBoss.Db {
  return {
    async executeSql(text, values) {
      for (;;) {
        try {
          return await pool.query(text, values);
        } catch (error) {
          if (closing.has(pool) || !isConnectionLost(error)) throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, DATABASE_AWAY_RETRY_MS));
      }
    },
  };
}

export type { PgBoss };
