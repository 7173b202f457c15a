import { sql, type Kysely } from 'kysely';

// Finance reads amounts in major units (EUR 1.00, not 100 cents) and orders by them across
// currencies without mixing yen with cents. Every accounting view keeps its integer minor-unit
// columns (and the `source` of bank statements) and adds, at the end, `<column>_major`: the same amount as an exact `numeric` in major
// units at the row's scale (null where the scale is unknown: a code without ISO 4217 decimals).
// Views are recreated whole with only these columns added, so queries written before still work.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace view daily_balances as
    select a.account, a.business_date, s.currency, s.balance, s.single_balance, s.run_id, s.captured_at,
      a.end_of_day, a.cutoff_drift_seconds, a.after_cutoff, s.unconfirmed_reason,
      s.scale,
      round(s.balance / 10::numeric ^ s.scale, s.scale) as balance_major,
      round(s.single_balance / 10::numeric ^ s.scale, s.scale) as single_balance_major
    from authoritative_runs a
    join balance_snapshots s on s.run_id = a.run_id`.execute(db);

  await sql`
    create or replace view reconciliation_breaks as
    select account, business_date, currency, status, gateway_balance, single_balance, expected_balance, difference, movement, run_id, computed_at, source,
      scale,
      round(gateway_balance / 10::numeric ^ scale, scale) as gateway_balance_major,
      round(single_balance / 10::numeric ^ scale, scale) as single_balance_major,
      round(expected_balance / 10::numeric ^ scale, scale) as expected_balance_major,
      round(difference / 10::numeric ^ scale, scale) as difference_major,
      round(movement / 10::numeric ^ scale, scale) as movement_major
    from reconciliation_results
    where status <> 'matched'`.execute(db);

  // A case stores no scale of its own: its amounts are those of its latest result.
  await sql`
    create or replace view open_cases as
    select c.id, c.account, c.currency, c.kind, c.state, c.opened_on, c.last_seen_on, c.occurrences, c.latest_difference,
      c.assignee, c.due_on, current_date - c.opened_on as age_days,
      s.scale,
      round(c.latest_difference / 10::numeric ^ s.scale, s.scale) as latest_difference_major
    from reconciliation_cases c
    left join lateral (
      select r.scale from reconciliation_results r where r.case_id = c.id order by r.business_date desc limit 1
    ) s on true
    where c.state in ('open', 'acknowledged')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // A view cannot lose columns in place: each is recreated as the migrations before left it.
  await sql`drop view if exists daily_balances`.execute(db);
  await sql`drop view if exists reconciliation_breaks`.execute(db);
  await sql`drop view if exists open_cases`.execute(db);
  await sql`
    create view daily_balances as
    select a.account, a.business_date, s.currency, s.balance, s.single_balance, s.run_id, s.captured_at,
      a.end_of_day, a.cutoff_drift_seconds, a.after_cutoff, s.unconfirmed_reason,
      s.scale,
      round(s.balance / 10::numeric ^ s.scale, s.scale) as balance_major
    from authoritative_runs a
    join balance_snapshots s on s.run_id = a.run_id`.execute(db);
  await sql`
    create view reconciliation_breaks as
    select account, business_date, currency, status, gateway_balance, single_balance, expected_balance, difference, movement, run_id, computed_at, source
    from reconciliation_results
    where status <> 'matched'`.execute(db);
  await sql`
    create view open_cases as
    select id, account, currency, kind, state, opened_on, last_seen_on, occurrences, latest_difference,
      assignee, due_on, current_date - opened_on as age_days
    from reconciliation_cases
    where state in ('open', 'acknowledged')`.execute(db);
}
