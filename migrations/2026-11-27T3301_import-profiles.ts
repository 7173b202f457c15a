import { sql, type Kysely } from 'kysely';

// An account's saved import profile: how its books files are written (column map, date format,
// decimal mark, unit, rows to skip) and whether an import may remove a day's other currencies.
// Saved by `ledger import --save-profile` for any account, the default one included (which has no
// accounts file to hold such settings); later imports of the account use it unless options say otherwise.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table import_profiles (
      account text primary key,
      settings jsonb not null check (jsonb_typeof(settings) = 'object'),
      saved_at timestamptz not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table import_profiles`.execute(db);
}
