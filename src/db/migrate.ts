import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE, MIGRATION_LOCK_ID, sql, type Kysely, type Migration } from 'kysely';
import { MigrationError, SchemaMismatchError } from '../errors.js';
import type { Database } from './database.types.js';
import { createViews, dropViews, readViewStates, staleViews } from './migrate-views.js';
import { MIGRATION_NAMES } from './migration-names.js';
import { inDependencyOrder, VIEWS, type ViewDefinition } from './views/index.js';

export interface MigrateOutcome {
  applied: string[];
  alreadyApplied: number;
  /** The views made (again) from their definitions in src/db/views/, in the order they were made. */
  views: string[];
}

/** What a database is migrated to: the table migrations by name, and the views. */
export interface SchemaDefinition {
  migrations: Readonly<Record<string, Migration>>;
  views: readonly ViewDefinition[];
}

/**
 * wallet-recon's own schema. The migrations' code is loaded only when one is to run: whether the
 * database is current is read from their names (MIGRATION_NAMES), so the commands that only
 * check it do not load and compile every migration at start.
 */
async function walletReconSchema(): Promise<SchemaDefinition> {
  const { MIGRATIONS } = await import('../../migrations/index.js');
  return { migrations: MIGRATIONS, views: VIEWS };
}

/** What the schema state is read against: the migrations' names in order, and the views. */
interface KnownSchema {
  names: readonly string[];
  views: readonly ViewDefinition[];
}

const known = (schema: SchemaDefinition | undefined): KnownSchema => (schema === undefined ? { names: MIGRATION_NAMES, views: VIEWS } : { names: Object.keys(schema.migrations), views: schema.views });

/**
 * The first migration that makes no view: views come from src/db/views/ since. Those before it
 * are history and made the views of their day themselves; before the first migration from it on
 * runs, `migrate` drops every view (a migration may then alter any column a view reads), and
 * makes them again from their definitions afterwards.
 */
export const FIRST_MIGRATION_WITHOUT_VIEWS = '2026-12-02T1000_view-definitions';

// Kysely's Migrator is not used: it offers no step after the migrations inside their transaction,
// where the views must be made. This runner keeps its ledger tables and takes its advisory lock
// through Kysely's own adapter, so it and any Migrator (an older wallet-recon) take turns.
const LOCK_OPTIONS = { lockTable: DEFAULT_MIGRATION_LOCK_TABLE, lockRowId: MIGRATION_LOCK_ID };

interface SchemaState {
  executed: string[];
  pending: string[];
  /** The views to make again, in dependency order. */
  staleViews: ViewDefinition[];
}

/**
 * Where the database stands against `schema`, in three small queries. Old code must never run
 * against a schema it does not know: a migration it does not know is refused.
 */
async function readSchemaState(db: Kysely<Database>, schema: KnownSchema): Promise<SchemaState> {
  const tables = await sql<{ ledger: boolean; views: boolean }>`
    select to_regclass(${DEFAULT_MIGRATION_TABLE}) is not null as ledger, to_regclass('schema_views') is not null as views`.execute(db);
  const { ledger, views } = tables.rows[0]!;
  const executed = ledger ? (await sql<{ name: string }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)} order by name`.execute(db)).rows.map((r) => r.name) : [];
  const knownNames = new Set(schema.names);
  const unknown = executed.filter((name) => !knownNames.has(name));
  if (unknown.length > 0) {
    throw new SchemaMismatchError(
      `The database holds migration${unknown.length === 1 ? '' : 's'} this version of wallet-recon does not know ` +
        `(${unknown.join(', ')}): it was migrated by a newer version. Run that version, or upgrade wallet-recon.`,
    );
  }
  const ordered = inDependencyOrder(schema.views);
  return {
    executed,
    pending: schema.names.filter((name) => !executed.includes(name)),
    staleViews: staleViews(ordered, await readViewStates(db, ordered, views)),
  };
}

/**
 * Brings the schema to the latest version: the table migrations not yet applied, then the views
 * whose definition changed (and those that read them), all in one transaction. Idempotent: run
 * again, it changes nothing. Concurrent callers take turns (Kysely's migration lock). Refuses a
 * database migrated by a newer version of wallet-recon. `given`: tests migrate to other schemas.
 */
export async function migrateToLatest(db: Kysely<Database>, given?: SchemaDefinition): Promise<MigrateOutcome> {
  const seen = await readSchemaState(db, known(given));
  // Nothing to do (every open of the embedded database): no lock, no transaction, no migration's code loaded.
  if (seen.pending.length === 0 && seen.staleViews.length === 0) return { applied: [], alreadyApplied: seen.executed.length, views: [] };
  const schema = given ?? (await walletReconSchema());
  return db.connection().execute(async (connection) => {
    const adapter = connection.getExecutor().adapter;
    await adapter.acquireMigrationLock(connection, LOCK_OPTIONS);
    try {
      return await connection.transaction().execute((trx) => migrateLocked(trx, schema));
    } finally {
      await adapter.releaseMigrationLock(connection, LOCK_OPTIONS);
    }
  });
}

/** The work of `migrateToLatest` under the lock, in its transaction: what another migrator did meanwhile is read again. */
async function migrateLocked(trx: Kysely<Database>, schema: SchemaDefinition): Promise<MigrateOutcome> {
  await ensureLedgerTables(trx);
  // Pending migrations run in name order even where the database already has a later one (as
  // Kysely's allowUnorderedMigrations): work on several issues lands in any order, each in its
  // own range of names, so a database migrated in between lacks an earlier-named migration.
  const { executed, pending, staleViews: before } = await readSchemaState(trx, known(schema));
  let viewsDropped = false;
  for (const name of pending) {
    if (!viewsDropped && name >= FIRST_MIGRATION_WITHOUT_VIEWS) {
      await dropViews(trx, inDependencyOrder(schema.views));
      viewsDropped = true;
    }
    try {
      await schema.migrations[name]!.up(trx);
    } catch (error) {
      throw new MigrationError(`Migration "${name}" failed: ${(error as Error).message ?? String(error)}. Nothing was changed: the database is as it was before.`, { cause: error });
    }
    await sql`insert into ${sql.table(DEFAULT_MIGRATION_TABLE)} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(trx);
  }
  const stale = pending.length === 0 ? before : (await readSchemaState(trx, known(schema))).staleViews;
  await dropViews(trx, stale);
  await createViews(trx, stale);
  return { applied: pending, alreadyApplied: executed.length, views: stale.map((view) => view.name) };
}

/**
 * The migration ledger as Kysely's Migrator makes it (the lock table too, though its lock is an
 * advisory one on PostgreSQL), so a new database has the tables an older one has.
 */
async function ensureLedgerTables(trx: Kysely<Database>): Promise<void> {
  await trx.schema
    .createTable(DEFAULT_MIGRATION_TABLE)
    .ifNotExists()
    .addColumn('name', 'varchar(255)', (col) => col.notNull().primaryKey())
    .addColumn('timestamp', 'varchar(255)', (col) => col.notNull())
    .execute();
  await trx.schema
    .createTable(DEFAULT_MIGRATION_LOCK_TABLE)
    .ifNotExists()
    .addColumn('id', 'varchar(255)', (col) => col.notNull().primaryKey())
    .addColumn('is_locked', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await sql`insert into ${sql.table(DEFAULT_MIGRATION_LOCK_TABLE)} (id, is_locked) values (${MIGRATION_LOCK_ID}, 0) on conflict (id) do nothing`.execute(trx);
}

/**
 * Fails with a clear message when the schema is not this version's: a migration pending, or a
 * view made from another definition than this version's (by an older or a newer wallet-recon).
 * Commands other than migrate need it current.
 */
export async function assertSchemaCurrent(db: Kysely<Database>, schema?: SchemaDefinition): Promise<void> {
  const { pending, staleViews: stale } = await readSchemaState(db, known(schema));
  if (pending.length > 0) {
    throw new SchemaMismatchError(`The database schema is not up to date (${pending.length} migration(s) pending). Run "wallet-recon migrate" first.`);
  }
  if (stale.length > 0) {
    throw new SchemaMismatchError(
      `The database's view${stale.length === 1 ? '' : 's'} ${stale.map((view) => view.name).join(', ')} ${stale.length === 1 ? 'is not as this version of wallet-recon defines it' : 'are not as this version of wallet-recon defines them'}: ` +
        'another version migrated the database. Run "wallet-recon migrate" with the newest version you use.',
    );
  }
}
