import { sql, type Kysely } from 'kysely';

// From here on each view is defined once, in src/db/views/, and `migrate` makes it again whenever
// its definition changes (src/db/migrate-views.ts): this table keeps the hash of the definition
// each view was last made from. Migrations from this one on make no view.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table schema_views (
      name text primary key,
      definition_sha256 text not null check (definition_sha256 ~ '^[0-9a-f]{64}$'),
      applied_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists schema_views`.execute(db);
}
