import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/index.js';
import { followStoredCalendar } from './business-date/stored-calendar.js';
import { assertSchemaCurrent, migrateToLatest } from './db/migrate.js';
import { openDatabase, type DatabaseHandle } from './db/open-database.js';
import type { Logger } from './logger.js';
import type { MetricsRecorder } from './metrics/metrics.js';

/** What every job needs, built the same way by the CLI and the scheduler. */
export interface AppContext {
  readonly config: Config;
  readonly database: DatabaseHandle;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Where jobs count runs, gateway requests and missed dates; absent when nobody collects them. */
  readonly metrics?: MetricsRecorder;
  /**
   * Each business-calendar setting where the configuration said otherwise than the database's
   * calendar, which `config` follows (empty when they agree or the database holds none yet).
   */
  readonly calendarDifferences?: readonly string[];
  close(): Promise<void>;
}

export interface CreateAppContextOptions {
  config: Config;
  logger: Logger;
  /** Names the process in the embedded database's lock file. */
  command: string;
  clock?: Clock;
  metrics?: MetricsRecorder;
  /**
   * The embedded database is private to this tool, so it is migrated on open; a shared
   * PostgreSQL server is migrated only by an explicit `wallet-recon migrate`.
   */
  migrate?: 'auto' | 'never';
  /** Embedded: serve the database to other processes of this user while it is open (the worker). */
  serve?: boolean;
  /** Embedded: while another process serves the database, work through it (commands that take no account lock). */
  shareIfServed?: boolean;
}

/** Opens the database and wires the context. */
export async function createAppContext(options: CreateAppContextOptions): Promise<AppContext> {
  const { config, logger } = options;
  let followed: { config: Config; differences: string[] };
  const database = await openDatabase({
    databaseUrl: config.databaseUrl?.reveal(),
    dataDir: config.dataDir,
    command: options.command,
    serve: options.serve,
    shareIfServed: options.shareIfServed,
    timeouts: config.databaseTimeouts,
  });
  try {
    if (options.migrate !== 'never') {
      // The process that serves a shared embedded database migrated it when it opened it.
      if (database.kind === 'embedded' && !database.shared) await migrateToLatest(database.db);
      else await assertSchemaCurrent(database.db);
    }
    // Every process reads a night the way the database's calendar does, whatever its own settings.
    followed = await followStoredCalendar(database.db, config);
  } catch (error) {
    await database.close();
    throw error;
  }
  return {
    config: followed.config,
    calendarDifferences: followed.differences,
    database,
    logger,
    clock: options.clock ?? systemClock,
    metrics: options.metrics,
    close: () => database.close(),
  };
}
