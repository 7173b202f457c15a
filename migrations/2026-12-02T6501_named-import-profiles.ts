import { sql, type Kysely } from 'kysely';

// A named import profile: how one source's books files are written (an ERP export listing several
// accounts in an account column), saved by `ledger import FILE --profile NAME --save-profile` and
// reused by `ledger import FILE --profile NAME`. It belongs to the source, not to an account: its
// files may name any configured account, bank accounts included.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table named_import_profiles (
      name text primary key check (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
      settings jsonb not null check (jsonb_typeof(settings) = 'object'),
      saved_at timestamptz not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table named_import_profiles`.execute(db);
}
