import { Migrator, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.js';
import type { Database } from '../../src/db/database.types.js';
import { assertSchemaCurrent, FIRST_MIGRATION_WITHOUT_VIEWS, migrateToLatest } from '../../src/db/migrate.js';
import { definitionSha256 } from '../../src/db/migrate-views.js';
import { viewDependencies, VIEWS } from '../../src/db/views/index.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A database migrated by any earlier version ends, after `migrate`, with the very views (definition
// and columns) and tables a new one has; views are made again only when their definition changed.

const NAMES = Object.keys(MIGRATIONS);
const BEFORE_VIEW_FILES = NAMES.filter((name) => name < FIRST_MIGRATION_WITHOUT_VIEWS).at(-1)!;

/**
 * Earlier versions of the schema the suite can make: the migrations an older wallet-recon had
 * applied. The one midway, where views were remade by migrations before and after, on the server
 * only: the embedded database pays several seconds for each.
 */
const upTo = (last: string): string[] => NAMES.filter((name) => name <= last);
const EARLIER_VERSIONS = [
  { what: 'only the first migration', migrations: upTo(NAMES[0]!) },
  ...(backend === 'postgres' ? [{ what: 'the migrations up to the day-scoped views', migrations: upTo('2026-11-27T2901_day-scoped-queries') }] : []),
  { what: 'the latest migration before views came from files', migrations: upTo(BEFORE_VIEW_FILES) },
  // A database migrated by a version that had later-named migrations of other work, but not this one.
  { what: 'every migration but the one that moved views into files', migrations: NAMES.filter((name) => name !== FIRST_MIGRATION_WITHOUT_VIEWS) },
];

interface ViewShape {
  name: string;
  definition: string;
  columns: string[];
  oid: string;
}

async function viewsOf(db: Kysely<Database>): Promise<ViewShape[]> {
  const rows = await sql<ViewShape>`
    select c.relname as name, pg_get_viewdef(c.oid) as definition, c.oid::text as oid,
      array(select a.attname || ' ' || format_type(a.atttypid, a.atttypmod) from pg_attribute a
             where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped order by a.attnum) as columns
    from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind = 'v' order by c.relname`.execute(db);
  return rows.rows;
}

/** The views as a comparison sees them: what they are, not which object (oid) holds them. */
async function viewDefinitionsOf(db: Kysely<Database>): Promise<Array<Omit<ViewShape, 'oid'>>> {
  return (await viewsOf(db)).map(({ name, definition, columns }) => ({ name, definition, columns }));
}

/** Every table's columns and every index, to see that the rest of the schema ends the same too. */
async function tablesOf(db: Kysely<Database>): Promise<string[]> {
  const columns = await sql<{ item: string }>`
    select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as item
    from information_schema.columns c
    where table_schema = 'public' and exists (select from pg_tables t where t.schemaname = 'public' and t.tablename = c.table_name)
    order by table_name, ordinal_position`.execute(db);
  const indexes = await sql<{ item: string }>`select indexdef as item from pg_indexes where schemaname = 'public' order by indexname`.execute(db);
  return [...columns.rows, ...indexes.rows].map((r) => r.item);
}

async function recordedHashes(db: Kysely<Database>): Promise<Record<string, string>> {
  const rows = await sql<{ name: string; definition_sha256: string }>`select name, definition_sha256 from schema_views order by name`.execute(db);
  return Object.fromEntries(rows.rows.map((r) => [r.name, r.definition_sha256]));
}

/** Applies `names` as an older wallet-recon did: through Kysely's Migrator. */
async function migrateAsOlderVersion(db: Kysely<Database>, names: readonly string[]): Promise<void> {
  const migrations = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => names.includes(name)));
  const { error } = await new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations) } }).migrateToLatest();
  if (error) throw error;
}

const oidsOf = async (db: Kysely<Database>): Promise<Record<string, string>> => Object.fromEntries((await viewsOf(db)).map((v) => [v.name, v.oid]));

describe(`views after migrate (${backend})`, () => {
  let fresh: TestDatabase;
  let freshViews: Array<Omit<ViewShape, 'oid'>>;
  let freshTables: string[];

  beforeAll(async () => {
    fresh = await createTestDatabase({ migrate: false });
    const outcome = await migrateToLatest(fresh.handle.db);
    expect(outcome.applied).toEqual(NAMES);
    expect(outcome.views.sort()).toEqual(VIEWS.map((v) => v.name).sort());
    freshViews = await viewDefinitionsOf(fresh.handle.db);
    freshTables = await tablesOf(fresh.handle.db);
  }, 120_000);
  afterAll(async () => {
    await fresh?.drop();
  });

  it('makes from an empty database exactly the views of src/db/views/, each hash recorded', async () => {
    expect(freshViews.map((v) => v.name)).toEqual(VIEWS.map((v) => v.name).sort());
    expect(await recordedHashes(fresh.handle.db)).toEqual(Object.fromEntries(VIEWS.map((v) => [v.name, definitionSha256(v)])));
    await expect(assertSchemaCurrent(fresh.handle.db)).resolves.toBeUndefined();
  });

  it('knows every view another view reads, as PostgreSQL records it', async () => {
    const recorded = await sql<{ name: string; reads: string }>`
      select distinct v.relname as name, d.relname as reads
      from pg_class v join pg_rewrite r on r.ev_class = v.oid
      join pg_depend dep on dep.classid = 'pg_rewrite'::regclass and dep.objid = r.oid
      join pg_class d on d.oid = dep.refobjid and d.relkind = 'v' and d.oid <> v.oid
      where v.relnamespace = 'public'::regnamespace and v.relkind = 'v'`.execute(fresh.handle.db);
    expect(recorded.rows.length).toBeGreaterThan(0);
    for (const { name, reads } of recorded.rows) expect(viewDependencies(VIEWS.find((v) => v.name === name)!, VIEWS), name).toContain(reads);
  });

  it('changes nothing when run again: no migration, no view made again', async () => {
    const before = { oids: await oidsOf(fresh.handle.db), hashes: await sql`select * from schema_views order by name`.execute(fresh.handle.db) };
    const again = await migrateToLatest(fresh.handle.db);
    expect(again).toEqual({ applied: [], alreadyApplied: NAMES.length, views: [] });
    expect(await oidsOf(fresh.handle.db)).toEqual(before.oids);
    expect((await sql`select * from schema_views order by name`.execute(fresh.handle.db)).rows).toEqual(before.hashes.rows);
  });

  for (const version of EARLIER_VERSIONS) {
    it(`brings a database of ${version.what} to the views and tables of a new one`, async () => {
      const t = await createTestDatabase({ migrate: false });
      try {
        await migrateAsOlderVersion(t.handle.db, version.migrations);
        await expect(assertSchemaCurrent(t.handle.db)).rejects.toThrow(/migration\(s\) pending/);
        const outcome = await migrateToLatest(t.handle.db);
        expect(outcome.applied).toEqual(NAMES.filter((name) => !version.migrations.includes(name)));
        expect(await viewDefinitionsOf(t.handle.db)).toEqual(freshViews);
        expect(await tablesOf(t.handle.db)).toEqual(freshTables);
        await expect(assertSchemaCurrent(t.handle.db)).resolves.toBeUndefined();
        expect((await migrateToLatest(t.handle.db)).views).toEqual([]);
      } finally {
        await t.drop();
      }
    }, 120_000);
  }

  it('makes again a changed view and those that read it, leaving the others alone; until then the schema is not current', async () => {
    const { db } = fresh.handle;
    const before = await oidsOf(db);
    // What a newer definition of authoritative_runs looks like to this database.
    await sql`update schema_views set definition_sha256 = ${'0'.repeat(64)} where name = 'authoritative_runs'`.execute(db);
    await expect(assertSchemaCurrent(db)).rejects.toThrow(
      /views authoritative_runs, balance_history, capture_days, daily_balances are not as this version of wallet-recon defines them.*Run "wallet-recon migrate"/,
    );
    const outcome = await migrateToLatest(db);
    expect(outcome).toEqual({ applied: [], alreadyApplied: NAMES.length, views: ['authoritative_runs', 'balance_history', 'capture_days', 'daily_balances'] });
    const after = await oidsOf(db);
    for (const name of Object.keys(before)) {
      if (outcome.views.includes(name)) expect(after[name], name).not.toBe(before[name]);
      else expect(after[name], name).toBe(before[name]);
    }
    expect(await viewDefinitionsOf(db)).toEqual(freshViews);
    await expect(assertSchemaCurrent(db)).resolves.toBeUndefined();
  });

  it('makes again a view dropped by hand, and nothing else', async () => {
    const { db } = fresh.handle;
    await sql`drop view reconciliation_status`.execute(db);
    await expect(assertSchemaCurrent(db)).rejects.toThrow(/view reconciliation_status is not as this version of wallet-recon defines it: another version migrated the database/);
    expect((await migrateToLatest(db)).views).toEqual(['reconciliation_status']);
    expect(await viewDefinitionsOf(db)).toEqual(freshViews);
  });

  it('names the view made by hand on one of ours that stops it being made again, and changes nothing', async () => {
    const { db } = fresh.handle;
    await sql`create view my_balances as select account, balance_major from daily_balances`.execute(db);
    await sql`update schema_views set definition_sha256 = ${'0'.repeat(64)} where name = 'daily_balances'`.execute(db);
    try {
      await expect(migrateToLatest(db)).rejects.toThrow(
        /The view "daily_balances" must be made again, but other objects read it \(view my_balances depends on view daily_balances\): drop them, run "wallet-recon migrate", then create them again\. Nothing was changed\./,
      );
      expect((await recordedHashes(db)).daily_balances).toBe('0'.repeat(64));
    } finally {
      await sql`drop view my_balances`.execute(db);
    }
    expect((await migrateToLatest(db)).views).toEqual(['daily_balances']);
  });

  it('leaves alone a view a newer version recorded that this one does not know', async () => {
    const { db } = fresh.handle;
    await sql`create view newer_view as select 1 as x`.execute(db);
    await sql`insert into schema_views (name, definition_sha256) values ('newer_view', ${'1'.repeat(64)})`.execute(db);
    try {
      await expect(assertSchemaCurrent(db)).resolves.toBeUndefined();
      expect((await migrateToLatest(db)).views).toEqual([]);
    } finally {
      await sql`delete from schema_views where name = 'newer_view'`.execute(db);
      await sql`drop view newer_view`.execute(db);
    }
  });

  it('changes nothing when a view cannot be made: the migration before it is undone too', async () => {
    const { db } = fresh.handle;
    const before = await oidsOf(db);
    const schema = {
      migrations: { ...MIGRATIONS, '2999-01-01T0000_a-later-table': { up: (trx: Kysely<unknown>) => sql`create table a_later_table (x int)`.execute(trx).then(() => undefined) } },
      views: [...VIEWS, { name: 'broken_view', query: 'select no_such_column from reconciliation_results' }],
    };
    await expect(migrateToLatest(db, schema)).rejects.toThrow(/The view "broken_view" could not be made from its definition.*no_such_column.*Nothing was changed/);
    expect((await sql<{ found: boolean }>`select to_regclass('a_later_table') is not null as found`.execute(db)).rows[0]!.found).toBe(false);
    expect((await sql<{ n: number }>`select count(*)::int as n from kysely_migration where name like '2999-%'`.execute(db)).rows[0]!.n).toBe(0);
    expect(await oidsOf(db)).toEqual(before);
  });

  it('lets a new table migration alter a column a view reads, and makes the views again on top of it', async () => {
    const t = await createTestDatabase();
    try {
      const { db } = t.handle;
      // What PostgreSQL refuses while the views stand.
      await expect(sql`alter table reconciliation_results alter column scale type integer`.execute(db)).rejects.toThrow(/used by a view/);
      const schema = {
        migrations: { ...MIGRATIONS, '2999-01-01T0000_wider-scale': { up: (trx: Kysely<unknown>) => sql`alter table reconciliation_results alter column scale type integer`.execute(trx).then(() => undefined) } },
        views: VIEWS,
      };
      const outcome = await migrateToLatest(db, schema);
      expect(outcome.applied).toEqual(['2999-01-01T0000_wider-scale']);
      expect(outcome.views.sort()).toEqual(VIEWS.map((v) => v.name).sort());
      expect((await viewsOf(db)).find((v) => v.name === 'reconciliation_breaks')!.columns).toContain('scale integer');
    } finally {
      await t.drop();
    }
  }, 60_000);

  it.runIf(backend === 'postgres')('takes turns with any Kysely migrator: waits for its lock before making a view', async () => {
    const { db } = fresh.handle;
    await sql`update schema_views set definition_sha256 = ${'0'.repeat(64)} where name = 'locked_dates'`.execute(db);
    const lock = { lockTable: 'kysely_migration_lock', lockRowId: 'migration_lock' };
    let migrating: Promise<unknown> | undefined;
    await db.connection().execute(async (holder) => {
      await holder.getExecutor().adapter.acquireMigrationLock(holder, lock);
      try {
        migrating = migrateToLatest(db);
        // Until migrate is seen waiting on the advisory lock (as a Migrator of an older version holds it).
        for (;;) {
          const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`.execute(db);
          if (waiting.rows[0]!.n > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect((await recordedHashes(db)).locked_dates).toBe('0'.repeat(64));
      } finally {
        await holder.getExecutor().adapter.releaseMigrationLock(holder, lock);
      }
    });
    await expect(migrating).resolves.toMatchObject({ views: ['locked_dates'] });
    expect((await recordedHashes(db)).locked_dates).toBe(definitionSha256(VIEWS.find((v) => v.name === 'locked_dates')!));
  });
});
