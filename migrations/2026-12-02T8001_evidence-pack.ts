import { sql, type Kysely } from 'kysely';

// The auditor's evidence pack (issue 41):
// - an `auditor` console role, which sees everything and may act on nothing;
// - a books import keeps the original bytes of its file (content-addressed in stored_files), and
//   a pull from the ledger database its query text and a digest of the rows it returned, so a
//   pack can hand the auditor what the books were read from.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table console_users drop constraint if exists console_users_role_check`.execute(db);
  await sql`alter table console_users add constraint console_users_role_check check (role in ('viewer', 'preparer', 'approver', 'admin', 'auditor'))`.execute(db);
  await sql`alter table books_imports add column if not exists file_sha256 text references stored_files (sha256)`.execute(db);
  await sql`alter table books_imports add column if not exists sql_query text`.execute(db);
  await sql`alter table books_imports add column if not exists rows_sha256 text check (rows_sha256 ~ '^[0-9a-f]{64}$')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table books_imports drop column if exists rows_sha256`.execute(db);
  await sql`alter table books_imports drop column if exists sql_query`.execute(db);
  await sql`alter table books_imports drop column if exists file_sha256`.execute(db);
  await sql`update console_users set role = 'viewer' where role = 'auditor'`.execute(db);
  await sql`alter table console_users drop constraint if exists console_users_role_check`.execute(db);
  await sql`alter table console_users add constraint console_users_role_check check (role in ('viewer', 'preparer', 'approver', 'admin'))`.execute(db);
}
