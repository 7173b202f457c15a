import { sql, type Kysely } from 'kysely';

// A day read of `reconciliation_status` or `capture_days` over a range of dates (`between`, `>=`
// and `<=`, a list of accounts: the settle check, the reports, the console's overview) computed
// the authoritative run of every date of history: the planner pulled the LATERAL lookup of
// `authoritative_runs` (a DISTINCT ON view) up into a join, and only an equality on the date
// reached inside it. `limit 1` (one run per date anyway, as in balance_history) keeps it a lookup
// per (account, business date). Both views are recreated whole, as 2026-11-27T3352 (the status)
// and 2026-11-27T2901 (capture days) left them but for that. Also: the results awaiting their
// bank statement get the partial index the ones awaiting books have (open work, few of millions).
function statusView(authoritative: 'keyed' | 'joined'): string {
  const limit = authoritative === 'keyed' ? ' limit 1' : '';
  return `
    create view reconciliation_status as
    select d.account, d.business_date,
      case
        when o.account is not null then 'owed'
        when a.run_id is not null and (r.n = 0 or r.run_id is distinct from a.run_id or r.books_import_id is distinct from b.import_id) then 'owed'
        when s.statement_pk is not null and (r.n = 0 or r.bank_statement_id is distinct from s.statement_pk or r.books_import_id is distinct from b.import_id) then 'owed'
        when r.awaiting_statement then 'awaiting_statement'
        when a.run_id is null and s.statement_pk is null and not coalesce(r.bank, false) then 'not_captured'
        when r.awaiting and r.books_deadline_at <= now() then 'no_books'
        when r.awaiting then 'awaiting_books'
        else 'current'
      end as state,
      a.run_id,
      b.import_id as books_import_id,
      r.reconciled_at,
      o.reason as owed_reason,
      case when s.statement_pk is not null or coalesce(r.bank, false) then 'bank' else 'gateway' end as source,
      s.statement_pk as bank_statement_id,
      r.books_deadline_at
    from (
      select account, business_date from snapshot_runs where status = 'succeeded'
      union select account, business_date from missed_dates
      union select account, business_date from expected_balances
      union select account, business_date from reconciliation_results
      union select account, business_date from reconciliation_owed
      union select account, business_date from bank_statements where not intraday
    ) d
    left join reconciliation_owed o on o.account = d.account and o.business_date = d.business_date
    left join lateral (
      select x.run_id from authoritative_runs x where x.account = d.account and x.business_date = d.business_date${limit}
    ) a on true
    cross join lateral (
      select max(e.import_id) as import_id from expected_balances e where e.account = d.account and e.business_date = d.business_date
    ) b
    cross join lateral (
      select max(st.id) as statement_pk from bank_statements st where st.account = d.account and st.business_date = d.business_date and not st.intraday
    ) s
    cross join lateral (
      select max(x.run_id) as run_id, max(x.books_import_id) as books_import_id, max(x.computed_at) as reconciled_at,
        bool_or(x.status = 'awaiting_books') as awaiting,
        bool_or(x.status = 'awaiting_statement') as awaiting_statement,
        bool_or(x.source = 'bank') as bank,
        max(x.bank_statement_id) as bank_statement_id,
        min(x.books_deadline_at) filter (where x.status = 'awaiting_books') as books_deadline_at,
        count(*) as n
      from reconciliation_results x where x.account = d.account and x.business_date = d.business_date
    ) r`;
}

function captureDaysView(authoritative: 'keyed' | 'joined'): string {
  const limit = authoritative === 'keyed' ? ' limit 1' : '';
  return `
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
      select y.run_id, y.cutoff_drift_seconds, y.end_of_day from authoritative_runs y where y.account = d.account and y.business_date = d.business_date${limit}
    ) r on true`;
}

async function recreateViews(db: Kysely<unknown>, authoritative: 'keyed' | 'joined'): Promise<void> {
  await sql`drop view reconciliation_status`.execute(db);
  await sql`drop view capture_days`.execute(db);
  await sql`${sql.raw(statusView(authoritative))}`.execute(db);
  await sql`${sql.raw(captureDaysView(authoritative))}`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index reconciliation_results_awaiting_statement_idx on reconciliation_results (business_date, account) where status = 'awaiting_statement'`.execute(db);
  await recreateViews(db, 'keyed');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await recreateViews(db, 'joined');
  await sql`drop index reconciliation_results_awaiting_statement_idx`.execute(db);
}
