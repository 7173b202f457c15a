import { Migrator, sql, type Kysely, type MigrationInfo, type MigrationProvider, type MigrationResult } from 'kysely';
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

// Old code must never run against a schema it does not know. Returns what it read, so callers
// do not list the folder and the ledger a second time.
async function readMigrationState(db: Kysely<Database>, migrator: Migrator): Promise<{ known: readonly MigrationInfo[]; executed: string[] }> {
  const known = await migrator.getMigrations();
  const knownNames = new Set(known.map((m) => m.name));
  const executed = await executedMigrationNames(db);
  const unknown = executed.filter((name) => !knownNames.has(name));
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
  const migrator = createMigrator(db);
  const { executed } = await readMigrationState(db, migrator);
  const { error, results } = await migrator.migrateToLatest();
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
  const { known } = await readMigrationState(db, createMigrator(db));
  const pending = known.filter((m) => m.executedAt === undefined);
  if (pending.length > 0) {
    throw new SchemaMismatchError(`The database schema is not up to date (${pending.length} migration(s) pending). Run "wallet-recon migrate" first.`);
  }
}
