import { sql, type Kysely } from 'kysely';

// A date whose books are awaited keeps its books deadline with its results
// (`reconciliation_results.books_deadline_at`: RECON_BOOKS_DEADLINE after its cut-off, as
// configured when it was reconciled), so `reconciliation_status` says `no_books` as soon as the
// deadline passed, before any command or worker round settles the date (which then stores the
// `no_books` result, its case and its notification).
//
// The view is recreated whole, as the three migrations of this day before it shaped it: the
// per-date LATERAL lookups of 2026-11-27T2901 (a date or account predicate reaches every base
// table), the bank statements of 2026-11-27T3001 (their dates are days, `awaiting_statement`, a
// bank date is owed when its results came from another statement, never `not_captured`, columns
// `source` and `bank_statement_id`), and here: the results lookup also takes
// `min(books_deadline_at)` of the awaiting rows; the state has one more branch,
// `when r.awaiting and r.books_deadline_at <= now() then 'no_books'`, before `awaiting_books`;
// and a last column `books_deadline_at` (so the application can decide on its own clock).
const STATUS_VIEW = `
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
      select x.run_id from authoritative_runs x where x.account = d.account and x.business_date = d.business_date
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

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table reconciliation_results add column books_deadline_at timestamptz`.execute(db);
  // The union of days below reaches bank statements by date, as it reaches the other tables.
  await sql`create index bank_statements_date_account_idx on bank_statements (business_date, account)`.execute(db);
  await sql`drop view reconciliation_status`.execute(db);
  await sql`${sql.raw(STATUS_VIEW)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Back to the view as 2026-11-27T3001 left it.
  await sql`drop view reconciliation_status`.execute(db);
  await sql`drop index bank_statements_date_account_idx`.execute(db);
  await sql`
    create view reconciliation_status as
    with days as (
      select account, business_date from snapshot_runs where status = 'succeeded'
      union select account, business_date from missed_dates
      union select account, business_date from expected_balances
      union select account, business_date from reconciliation_results
      union select account, business_date from reconciliation_owed
      union select account, business_date from bank_statements where not intraday
    ), books as (
      select account, business_date, max(import_id) as import_id from expected_balances group by account, business_date
    ), statements as (
      select account, business_date, max(id) as statement_pk from bank_statements where not intraday group by account, business_date
    ), results as (
      select account, business_date, max(run_id) as run_id, max(books_import_id) as books_import_id,
        max(computed_at) as reconciled_at,
        bool_or(status = 'awaiting_books') as awaiting,
        bool_or(status = 'awaiting_statement') as awaiting_statement,
        bool_or(source = 'bank') as bank,
        max(bank_statement_id) as bank_statement_id,
        count(*) as n
      from reconciliation_results group by account, business_date
    )
    select d.account, d.business_date,
      case
        when o.account is not null then 'owed'
        when a.run_id is not null and (r.n is null or r.run_id is distinct from a.run_id or r.books_import_id is distinct from b.import_id) then 'owed'
        when s.statement_pk is not null and (r.n is null or r.bank_statement_id is distinct from s.statement_pk or r.books_import_id is distinct from b.import_id) then 'owed'
        when r.awaiting_statement then 'awaiting_statement'
        when a.run_id is null and s.statement_pk is null and not coalesce(r.bank, false) then 'not_captured'
        when r.awaiting then 'awaiting_books'
        else 'current'
      end as state,
      a.run_id,
      b.import_id as books_import_id,
      r.reconciled_at,
      o.reason as owed_reason,
      case when s.statement_pk is not null or coalesce(r.bank, false) then 'bank' else 'gateway' end as source,
      s.statement_pk as bank_statement_id
    from days d
    left join reconciliation_owed o on o.account = d.account and o.business_date = d.business_date
    left join authoritative_runs a on a.account = d.account and a.business_date = d.business_date
    left join books b on b.account = d.account and b.business_date = d.business_date
    left join statements s on s.account = d.account and s.business_date = d.business_date
    left join results r on r.account = d.account and r.business_date = d.business_date`.execute(db);
  await sql`alter table reconciliation_results drop column books_deadline_at`.execute(db);
}
