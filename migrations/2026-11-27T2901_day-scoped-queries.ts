import { sql, type Kysely } from 'kysely';

// Day-scoped work costs the day, not the history. The views that day-scoped commands read
// (reconciliation_status, balance_history, capture_days) grouped or windowed whole tables in
// subqueries they LEFT JOINed, so a date predicate never reached the base tables: a one-date read
// aggregated all history. They are recreated with the same columns and the same meaning, but
// each per-date lookup is a LATERAL subquery keyed by (account, business date), so a date or
// account filter on the view reaches every base table, served by indexes that lead with the
// business date (one-date reads of all accounts; the results' one also orders a range report read
// page by page) or with the account (one account's previous date).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index snapshot_runs_date_idx on snapshot_runs (business_date, account)`.execute(db);
  await sql`create index snapshot_runs_succeeded_idx on snapshot_runs (account, business_date) where status = 'succeeded'`.execute(db);
  await sql`create index expected_balances_date_idx on expected_balances (business_date, account)`.execute(db);
  await sql`create index reconciliation_results_date_idx on reconciliation_results (business_date, account, coalesce(currency, ''))`.execute(db);
  // Open work: the results still awaiting their books are few among millions.
  await sql`create index reconciliation_results_awaiting_idx on reconciliation_results (business_date, account) where status = 'awaiting_books'`.execute(db);
  await sql`create index reconciliation_owed_date_idx on reconciliation_owed (business_date)`.execute(db);
  await sql`create index missed_dates_date_idx on missed_dates (business_date)`.execute(db);
  await createViews(db, 'lateral');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await createViews(db, 'grouped');
  for (const index of [
    'missed_dates_date_idx',
    'reconciliation_owed_date_idx',
    'reconciliation_results_awaiting_idx',
    'reconciliation_results_date_idx',
    'expected_balances_date_idx',
    'snapshot_runs_succeeded_idx',
    'snapshot_runs_date_idx',
  ]) {
    await sql`drop index if exists ${sql.id(index)}`.execute(db);
  }
}

/** The three views, keyed per date (`lateral`) or as 2026-11-26T0001/0003 left them (`grouped`). */
async function createViews(db: Kysely<unknown>, how: 'lateral' | 'grouped'): Promise<void> {
  await sql`drop view if exists reconciliation_status`.execute(db);
  await sql`drop view if exists balance_history`.execute(db);
  await sql`drop view if exists capture_days`.execute(db);
  if (how === 'grouped') {
    await createGroupedViews(db);
    return;
  }

  // Where each (account, business date) stands: as in 2026-11-26T0001. The aggregate lookups
  // always yield one row, so "no results" is n = 0 where it was a missing joined row (n is null).
  await sql`
    create view reconciliation_status as
    select d.account, d.business_date,
      case
        when o.account is not null then 'owed'
        when a.run_id is not null and (r.n = 0 or r.run_id is distinct from a.run_id or r.books_import_id is distinct from b.import_id) then 'owed'
        when a.run_id is null then 'not_captured'
        when r.awaiting then 'awaiting_books'
        else 'current'
      end as state,
      a.run_id,
      b.import_id as books_import_id,
      r.reconciled_at,
      o.reason as owed_reason
    from (
      select account, business_date from snapshot_runs where status = 'succeeded'
      union select account, business_date from missed_dates
      union select account, business_date from expected_balances
      union select account, business_date from reconciliation_results
      union select account, business_date from reconciliation_owed
    ) d
    left join reconciliation_owed o on o.account = d.account and o.business_date = d.business_date
    left join lateral (
      select x.run_id from authoritative_runs x where x.account = d.account and x.business_date = d.business_date
    ) a on true
    cross join lateral (
      select max(e.import_id) as import_id from expected_balances e where e.account = d.account and e.business_date = d.business_date
    ) b
    cross join lateral (
      select max(x.run_id) as run_id, max(x.books_import_id) as books_import_id, max(x.computed_at) as reconciled_at,
        bool_or(x.status = 'awaiting_books') as awaiting, count(*) as n
      from reconciliation_results x where x.account = d.account and x.business_date = d.business_date
    ) r`.execute(db);

  // Each authoritative day's balances with the previous captured date's (what lag() over the
  // account's authoritative runs gave): that date is the latest earlier one with a succeeded run.
  await sql`
    create view balance_history as
    select a.account, a.business_date, s.currency, s.balance,
      p.balance as previous_balance,
      pd.business_date as previous_business_date,
      case when s.scale is null or p.scale is null or s.scale = p.scale then s.balance - p.balance
        when s.scale > p.scale then s.balance - p.balance * round(10::numeric ^ (s.scale - p.scale))
        else round(s.balance - p.balance / round(10::numeric ^ (p.scale - s.scale)), p.scale - s.scale) end as movement,
      s.run_id,
      s.scale,
      round(s.balance / 10::numeric ^ s.scale, s.scale) as balance_major,
      round(p.balance / 10::numeric ^ p.scale, p.scale) as previous_balance_major,
      round(s.balance / 10::numeric ^ s.scale, s.scale) - round(p.balance / 10::numeric ^ p.scale, p.scale) as movement_major
    from authoritative_runs a
    left join lateral (
      select y.business_date from snapshot_runs y
      where y.account = a.account and y.business_date < a.business_date and y.status = 'succeeded'
      order by y.business_date desc limit 1
    ) pd on true
    left join lateral (
      -- limit 1 (the view yields one run per date anyway) keeps the subquery a parameterized
      -- lookup: pulled up into a plain join, the view would be computed over all history.
      select x.run_id from authoritative_runs x where x.account = a.account and x.business_date = pd.business_date limit 1
    ) pa on true
    join balance_snapshots s on s.run_id = a.run_id
    left join balance_snapshots p on p.run_id = pa.run_id and p.currency = s.currency`.execute(db);

  await sql`
    create view capture_days as
    select d.account, d.business_date,
      case when coalesce(a.captured, false) then 'captured' when m.account is not null then 'missed' else 'pending' end as status,
      r.run_id,
      coalesce(a.attempts, 0)::integer as attempts,
      r.cutoff_drift_seconds,
      r.end_of_day,
      coalesce(a.last_error, m.last_error) as last_error
    from (
      select account, business_date from snapshot_runs
      union
      select account, business_date from missed_dates
    ) d
    cross join lateral (
      select count(*) filter (where x.end_of_day) as attempts,
        bool_or(x.status = 'succeeded' and x.end_of_day) as captured,
        (array_agg(x.error order by x.started_at desc, x.id desc) filter (where x.status in ('failed', 'abandoned')))[1] as last_error
      from snapshot_runs x where x.account = d.account and x.business_date = d.business_date
    ) a
    left join missed_dates m on m.account = d.account and m.business_date = d.business_date
    left join lateral (
      select y.run_id, y.cutoff_drift_seconds, y.end_of_day from authoritative_runs y where y.account = d.account and y.business_date = d.business_date
    ) r on true`.execute(db);
}

async function createGroupedViews(db: Kysely<unknown>): Promise<void> {
  await sql`
    create view reconciliation_status as
    with days as (
      select account, business_date from snapshot_runs where status = 'succeeded'
      union select account, business_date from missed_dates
      union select account, business_date from expected_balances
      union select account, business_date from reconciliation_results
      union select account, business_date from reconciliation_owed
    ), books as (
      select account, business_date, max(import_id) as import_id from expected_balances group by account, business_date
    ), results as (
      select account, business_date, max(run_id) as run_id, max(books_import_id) as books_import_id,
        max(computed_at) as reconciled_at,
        bool_or(status = 'awaiting_books') as awaiting,
        count(*) as n
      from reconciliation_results group by account, business_date
    )
    select d.account, d.business_date,
      case
        when o.account is not null then 'owed'
        when a.run_id is not null and (r.n is null or r.run_id is distinct from a.run_id or r.books_import_id is distinct from b.import_id) then 'owed'
        when a.run_id is null then 'not_captured'
        when r.awaiting then 'awaiting_books'
        else 'current'
      end as state,
      a.run_id,
      b.import_id as books_import_id,
      r.reconciled_at,
      o.reason as owed_reason
    from days d
    left join reconciliation_owed o on o.account = d.account and o.business_date = d.business_date
    left join authoritative_runs a on a.account = d.account and a.business_date = d.business_date
    left join books b on b.account = d.account and b.business_date = d.business_date
    left join results r on r.account = d.account and r.business_date = d.business_date`.execute(db);
  await sql`
    create view balance_history as
    with chained as (
      select run_id as id, account, business_date,
        lag(business_date) over w as previous_business_date,
        lag(run_id) over w as previous_run_id
      from authoritative_runs
      window w as (partition by account order by business_date)
    )
    select c.account, c.business_date, s.currency, s.balance,
      p.balance as previous_balance,
      c.previous_business_date,
      case when s.scale is null or p.scale is null or s.scale = p.scale then s.balance - p.balance
        when s.scale > p.scale then s.balance - p.balance * round(10::numeric ^ (s.scale - p.scale))
        else round(s.balance - p.balance / round(10::numeric ^ (p.scale - s.scale)), p.scale - s.scale) end as movement,
      s.run_id,
      s.scale,
      round(s.balance / 10::numeric ^ s.scale, s.scale) as balance_major,
      round(p.balance / 10::numeric ^ p.scale, p.scale) as previous_balance_major,
      round(s.balance / 10::numeric ^ s.scale, s.scale) - round(p.balance / 10::numeric ^ p.scale, p.scale) as movement_major
    from chained c
    join balance_snapshots s on s.run_id = c.id
    left join balance_snapshots p on p.run_id = c.previous_run_id and p.currency = s.currency`.execute(db);
  await sql`
    create view capture_days as
    with days as (
      select account, business_date from snapshot_runs
      union
      select account, business_date from missed_dates
    ), attempts as (
      select account, business_date,
        count(*) filter (where end_of_day) as attempts,
        bool_or(status = 'succeeded' and end_of_day) as captured,
        (array_agg(error order by started_at desc, id desc) filter (where status in ('failed', 'abandoned')))[1] as last_error
      from snapshot_runs
      group by account, business_date
    )
    select d.account, d.business_date,
      case when coalesce(a.captured, false) then 'captured' when m.account is not null then 'missed' else 'pending' end as status,
      r.run_id,
      coalesce(a.attempts, 0)::integer as attempts,
      r.cutoff_drift_seconds,
      r.end_of_day,
      coalesce(a.last_error, m.last_error) as last_error
    from days d
    left join attempts a on a.account = d.account and a.business_date = d.business_date
    left join missed_dates m on m.account = d.account and m.business_date = d.business_date
    left join authoritative_runs r on r.account = d.account and r.business_date = d.business_date`.execute(db);
}
