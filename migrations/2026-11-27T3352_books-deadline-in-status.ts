import { sql, type Kysely } from 'kysely';

// A date whose books are awaited keeps its books deadline with its results
// (`reconciliation_results.books_deadline_at`: RECON_BOOKS_DEADLINE after its cut-off, as
// configured when it was reconciled), so `reconciliation_status` says `no_books` as soon as the
// deadline passed, before any command or worker round settles the date (which then stores the
// `no_books` result, its case and its notification).
//
// The view is recreated whole. Its changes from 2026-11-26T0001: the `results` part also takes
// `min(books_deadline_at)` of the awaiting rows; the state has one more branch,
// `when r.awaiting and r.books_deadline_at <= now() then 'no_books'`, before `awaiting_books`;
// and a last column `books_deadline_at` (so the application can decide on its own clock).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table reconciliation_results add column books_deadline_at timestamptz`.execute(db);
  await sql`drop view reconciliation_status`.execute(db);
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
        min(books_deadline_at) filter (where status = 'awaiting_books') as books_deadline_at,
        count(*) as n
      from reconciliation_results group by account, business_date
    )
    select d.account, d.business_date,
      case
        when o.account is not null then 'owed'
        when a.run_id is not null and (r.n is null or r.run_id is distinct from a.run_id or r.books_import_id is distinct from b.import_id) then 'owed'
        when a.run_id is null then 'not_captured'
        when r.awaiting and r.books_deadline_at <= now() then 'no_books'
        when r.awaiting then 'awaiting_books'
        else 'current'
      end as state,
      a.run_id,
      b.import_id as books_import_id,
      r.reconciled_at,
      o.reason as owed_reason,
      r.books_deadline_at
    from days d
    left join reconciliation_owed o on o.account = d.account and o.business_date = d.business_date
    left join authoritative_runs a on a.account = d.account and a.business_date = d.business_date
    left join books b on b.account = d.account and b.business_date = d.business_date
    left join results r on r.account = d.account and r.business_date = d.business_date`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop view reconciliation_status`.execute(db);
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
  await sql`alter table reconciliation_results drop column books_deadline_at`.execute(db);
}
