import { sql, type Kysely } from 'kysely';

// A run keeps the rules it was captured under: beside the cut-off instant it already keeps
// (cutoff_at), the time zone that cut-off was read in, so a date captured before a calendar change
// still shows its drift, end of day and lateness by those rules, with them named. Runs recorded
// before this take the database's calendar for their date where one was recorded; otherwise
// their zone is unknown (null) and only the instant is shown.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table snapshot_runs add column cutoff_timezone text`.execute(db);
  await sql`
    update snapshot_runs r set cutoff_timezone = (
      select c.timezone from business_calendar c where c.effective_from <= r.business_date order by c.effective_from desc limit 1
    )
    where r.cutoff_at is not null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table snapshot_runs drop column cutoff_timezone`.execute(db);
}
