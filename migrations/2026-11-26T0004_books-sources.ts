import { sql, type Kysely } from 'kysely';

// Books now arrive in several forms (CSV, spreadsheet, JSON lines, a query against the merchant's
// ledger database) and in major or minor units: each import records which, so an auditor can
// tell how a stored balance was read. Imports made before this migration leave both empty.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table books_imports add column format text check (format in ('csv', 'xlsx', 'jsonl', 'sql'))`.execute(db);
  await sql`alter table books_imports add column amounts text check (amounts in ('major', 'minor'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table books_imports drop column amounts`.execute(db);
  await sql`alter table books_imports drop column format`.execute(db);
}
