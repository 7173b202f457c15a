import { Migrator, sql, type Kysely, type MigrationProvider, type MigrationResult } from 'kysely';
import { MIGRATIONS } from '../../migrations/index.js';
import { MigrationError, SchemaMismatchError } from '../errors.js';
import type { Database } from './database.types.js';

export interface MigrateOutcome {
  applied: string[];
  alreadyApplied: number;
}

// The migrations come from a static list rather than a folder read at run time, so the bundled
// CLI carries them and tsx, vitest and the bundle all see the same ones.
const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve({ ...MIGRATIONS }),
};

function createMigrator(db: Kysely<Database>): Migrator {
  return new Migrator({ db, provider: migrationProvider });
}

async function executedMigrationNames(db: Kysely<Database>): Promise<string[]> {
  const exists = await sql<{ present: boolean }>`select to_regclass('public.kysely_migration') is not null as present`.execute(db);
  if (!exists.rows[0]?.present) return [];
  const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  return rows.rows.map((r) => r.name);
}

// Old code must never run against a schema it does not know. Reads the ledger itself (two small
// queries) rather than through the Migrator, whose listing introspects every table first.
async function readMigrationState(db: Kysely<Database>): Promise<{ known: readonly string[]; executed: string[] }> {
  const known = Object.keys(MIGRATIONS);
  const executed = await executedMigrationNames(db);
  const unknown = executed.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new SchemaMismatchError(
      `The database holds migration${unknown.length === 1 ? '' : 's'} this version of wallet-recon does not know ` +
        `(${unknown.join(', ')}): it was migrated by a newer version. Run that version, or upgrade wallet-recon.`,
    );
  }
  return { known, executed };
}

/**
 * Brings the schema to the latest version. Idempotent; concurrent callers are serialized by
 * Kysely's advisory lock. Refuses a database migrated by a newer version of wallet-recon.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrateOutcome> {
  const { known, executed } = await readMigrationState(db);
  // Nothing to apply: skip the Migrator, whose own checks cost every open of the embedded database.
  if (known.every((name) => executed.includes(name))) return { applied: [], alreadyApplied: executed.length };
  const { error, results } = await createMigrator(db).migrateToLatest();
  if (error) {
    const failed = results?.find((r: MigrationResult) => r.status === 'Error');
    throw new MigrationError(
      `Migration ${failed ? `"${failed.migrationName}" ` : ''}failed: ${(error as Error).message ?? String(error)}. The database was left at the last good migration.`,
      { cause: error },
    );
  }
  const applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  return { applied, alreadyApplied: executed.length };
}

/** Fails with a clear message when the schema is behind: commands other than migrate need it current. */
export async function assertSchemaCurrent(db: Kysely<Database>): Promise<void> {
  const { known, executed } = await readMigrationState(db);
  const pending = known.filter((name) => !executed.includes(name));
  if (pending.length > 0) {
    throw new SchemaMismatchError(`The database schema is not up to date (${pending.length} migration(s) pending). Run "wallet-recon migrate" first.`);
  }
}
