import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { pgliteVersion } from '../../src/db/embedded-cluster.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { openDatabase } from '../../src/db/open-database.js';
import { createSilentLogger } from '../../src/logger.js';
import { installJobQueue } from '../../src/queue/job-queue.js';

/**
 * Migrated databases the suite copies instead of migrating each time: embedded, a folder (a new
 * one starts from the build's cluster, then the migrations cost about a second); on PostgreSQL,
 * `CREATE DATABASE … TEMPLATE` skips the migrations.
 *
 * Templates are keyed by what their content depends on (the migrations, the views' definitions,
 * the migrator, the PGlite version), so a changed migration or view builds new ones and a stale
 * template is never used. They are kept between runs: the embedded ones under
 * node_modules/.cache, the server one as a database named wr_tpl_<key>. Older keys are removed
 * by the next run.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** An embedded database folder migrated to the latest version, to copy. (A new, unmigrated one needs no template: the build's cluster is one.) */
    embeddedTemplate: string;
    /** With TEST_DATABASE_URL: a database migrated to the latest version to create test databases from. */
    serverTemplate: string;
  }
}

const root = path.join(import.meta.dirname, '..', '..');
const CACHE = path.join(root, 'node_modules', '.cache', 'wallet-recon-test-templates');
const SERVER_PREFIX = 'wr_tpl_';

/** A short hash of everything a template's content depends on. */
export function templateKey(): string {
  const hash = createHash('sha256');
  hash.update(`pglite ${pgliteVersion()}`);
  for (const file of ['src/db/migrate.ts', 'src/db/migrate-views.ts', 'src/db/embedded-data-dir.ts', 'src/queue/job-queue.ts', 'node_modules/pg-boss/package.json']) hash.update(file).update(readFileSync(path.join(root, file)));
  for (const folder of ['migrations', 'src/db/views']) {
    for (const file of readdirSync(path.join(root, folder)).sort()) hash.update(`${folder}/${file}`).update(readFileSync(path.join(root, folder, file)));
  }
  return hash.digest('hex').slice(0, 16);
}

/** The embedded templates of `key`, built now if no earlier run left them. */
export async function ensureEmbeddedTemplate(key: string): Promise<string> {
  const dir = path.join(CACHE, key);
  const template = path.join(dir, 'migrated');
  if (existsSync(path.join(dir, 'ready'))) return template;
  mkdirSync(CACHE, { recursive: true });
  // Built aside and renamed into place, so a run beside this one never sees half a template.
  const build = mkdtempSync(path.join(CACHE, '.build-'));
  try {
    const handle = await openDatabase({ dataDir: path.join(build, 'migrated'), command: 'test template' });
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    writeFileSync(path.join(build, 'ready'), `${new Date().toISOString()}\n`);
    try {
      renameSync(build, dir);
    } catch (error) {
      // Another run put the same template in place first: use theirs.
      if (!existsSync(path.join(dir, 'ready'))) throw error;
    }
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
  for (const entry of readdirSync(CACHE)) {
    if (entry === key) continue;
    // A build older than an hour belongs to a run that died.
    if (entry.startsWith('.build-') && Date.now() - statSync(path.join(CACHE, entry)).mtimeMs < 3_600_000) continue;
    rmSync(path.join(CACHE, entry), { recursive: true, force: true });
  }
  return template;
}

/**
 * A new test database's name: wr_test_, the time it is made (epoch seconds), the test run (its
 * main process) and a random part. The time lets a sweep remove only what killed runs left long
 * ago, never the databases of a run going on beside it; the run lets its teardown drop its own.
 */
export function testDatabaseName(kind = ''): string {
  return `wr_test_${Math.floor(Date.now() / 1000)}_${testRunId()}_${kind}${randomBytes(4).toString('hex')}`;
}

/** The test run's id, set for the workers by vitest.config.ts: the main process's pid. */
function testRunId(): string {
  return process.env.WALLET_RECON_TEST_RUN ?? String(process.pid);
}

/** Drops this run's test databases still there when it ends: those the workers kept for reuse. */
export async function dropRunDatabases(admin: pg.Client): Promise<void> {
  const mine = await admin.query<{ datname: string }>(`select datname from pg_database where datname ~ $1`, [`^wr_test_[0-9]{10}_${testRunId()}_`]);
  for (const row of mine.rows) await admin.query(`drop database if exists "${row.datname}" with (force)`).catch(() => undefined);
}

/** Test databases made over six hours ago that nobody is connected to: left by runs that were killed. */
export async function sweepStaleTestDatabases(admin: pg.Client): Promise<void> {
  const stale = await admin.query<{ datname: string }>(
    `select datname from pg_database
      where datname ~ '^wr_test_[0-9]{10}_' and substring(datname from 9 for 10)::bigint < extract(epoch from now()) - 6 * 3600
        and datname not in (select datname from pg_stat_activity where datname is not null)`,
  );
  for (const row of stale.rows) await admin.query(`drop database if exists "${row.datname}"`).catch(() => undefined);
}

/** `url` with its database replaced by `database`. */
export function urlWithDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Runs `fn` on a connection of its own to `url`, closed afterwards whatever happens. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The migrated template database of `key` on the server of `adminUrl`, created when missing.
 * Built under a test database's name (swept like one if the run dies) and renamed when
 * complete; templates of other keys that nobody uses are dropped (a run still using one falls
 * back to creating and migrating).
 */
export async function ensureServerTemplate(admin: pg.Client, adminUrl: string, key: string): Promise<string> {
  const name = `${SERVER_PREFIX}${key}`;
  const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
  if (exists.rowCount === 0) {
    const build = testDatabaseName('tpl');
    await admin.query(`create database "${build}"`);
    try {
      const handle = await openDatabase({ databaseUrl: urlWithDatabase(adminUrl, build), dataDir: 'memory://', command: 'test template', poolSize: 1 });
      try {
        await migrateToLatest(handle.db);
      } finally {
        await handle.close();
      }
      // As `wallet-recon migrate` does on a server: the job queue's schema beside the tables.
      const buildUrl = urlWithDatabase(adminUrl, build);
      await installJobQueue({ databaseUrl: { reveal: () => buildUrl }, queue: { schema: 'pgboss', jobExpiryMs: 60_000 } } as Parameters<typeof installJobQueue>[0], createSilentLogger());
      await admin.query(`alter database "${build}" rename to "${name}"`);
    } catch (error) {
      await admin.query(`drop database if exists "${build}" with (force)`);
      // 42P04: another run created the same template meanwhile.
      if ((error as { code?: string }).code !== '42P04') throw error;
    }
  }
  const others = await admin.query<{ datname: string }>(
    `select datname from pg_database where datname like '${SERVER_PREFIX}%' and datname <> $1 and datname not in (select datname from pg_stat_activity where datname is not null)`,
    [name],
  );
  for (const row of others.rows) await admin.query(`drop database if exists "${row.datname}"`).catch(() => undefined);
  return name;
}
