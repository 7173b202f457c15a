import { sql, type Kysely } from 'kysely';

// Quiet backfills (issue 45). A row a backfill (or an import of several past dates) folded names
// the one summary that carries it (`fold_group`), so the per-night cap's summary, which gathers
// the date's other folded rows, never sends it a second time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table notifications add column fold_group text`.execute(db);
  await sql`create index notifications_fold_group on notifications (fold_group) where fold_group is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists notifications_fold_group`.execute(db);
  await sql`alter table notifications drop column if exists fold_group`.execute(db);
}
