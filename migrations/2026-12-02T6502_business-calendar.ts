import { sql, type Kysely } from 'kysely';

// The business calendar as a setting of the database, so every process of a fleet reads one night
// the same way: time zone, cut-off, capture window, books and statement deadlines, each row
// effective from a business date. Recorded from the configuration by the first `migrate`.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table business_calendar (
      effective_from date primary key,
      timezone text not null,
      cutoff text not null check (cutoff ~ '^\\d\\d:\\d\\d$'),
      capture_window_ms bigint not null check (capture_window_ms >= 0),
      books_deadline_ms bigint not null check (books_deadline_ms >= 0),
      statement_deadline_ms bigint not null check (statement_deadline_ms >= 0),
      recorded_at timestamptz not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table business_calendar`.execute(db);
}
