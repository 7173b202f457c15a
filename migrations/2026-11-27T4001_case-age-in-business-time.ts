import { sql, type Kysely } from 'kysely';

// A case's age is whole days from the date it opened to the current business date (see
// docs/cases-and-signoff.md), the one rule the CLI, the console, reports and e-mails follow. The view
// counted to the session's current_date instead: the date of the database's TimeZone, a day apart
// from RECON_TIMEZONE's around midnight, and blind to RECON_CUTOFF. The database does not know the
// tool's settings, so a session names them: wallet_recon.timezone (RECON_TIMEZONE) and
// wallet_recon.cutoff (RECON_CUTOFF, HH:MM), as `wallet-recon sql` sets them. Without them the
// session's TimeZone and a midnight cut-off stand in, which is what the view counted before.

export async function up(db: Kysely<unknown>): Promise<void> {
  // The business date whose period contains `at`: the local date in the business zone, or the next
  // one from the cut-off on (a 00:00 cut-off is the midnight that ends the date).
  await sql`
    create function wallet_recon_business_date(at timestamptz) returns date
    language sql stable as $$
      select local::date + case when cutoff is not null and cutoff <> time '00:00' and local::time >= cutoff then 1 else 0 end
      from (
        select at at time zone coalesce(nullif(current_setting('wallet_recon.timezone', true), ''), current_setting('TimeZone')) as local,
          nullif(current_setting('wallet_recon.cutoff', true), '')::time as cutoff
      ) s
    $$`.execute(db);
  await sql`drop view if exists open_cases`.execute(db);
  await sql`
    create view open_cases as
    select c.id, c.account, c.currency, c.kind, c.state, c.opened_on, c.last_seen_on, c.occurrences, c.latest_difference,
      c.assignee, c.due_on, greatest(0, wallet_recon_business_date(now()) - c.opened_on) as age_days,
      s.scale,
      round(c.latest_difference / 10::numeric ^ s.scale, s.scale) as latest_difference_major
    from reconciliation_cases c
    left join lateral (
      select r.scale from reconciliation_results r where r.case_id = c.id order by r.business_date desc limit 1
    ) s on true
    where c.state in ('open', 'acknowledged')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop view if exists open_cases`.execute(db);
  await sql`
    create view open_cases as
    select c.id, c.account, c.currency, c.kind, c.state, c.opened_on, c.last_seen_on, c.occurrences, c.latest_difference,
      c.assignee, c.due_on, current_date - c.opened_on as age_days,
      s.scale,
      round(c.latest_difference / 10::numeric ^ s.scale, s.scale) as latest_difference_major
    from reconciliation_cases c
    left join lateral (
      select r.scale from reconciliation_results r where r.case_id = c.id order by r.business_date desc limit 1
    ) s on true
    where c.state in ('open', 'acknowledged')`.execute(db);
  await sql`drop function if exists wallet_recon_business_date(timestamptz)`.execute(db);
}
