import { sql, type Kysely } from 'kysely';

// Where each (account, business date) stands, kept as derived state: `reconciliation_days` holds
// per account-date what `reconciliation_status` aggregated from six tables at every read (the
// authoritative run, the books, the bank statement, the owed mark, the results), so a one-date
// read is 200 rows of one table, not 10,000 results and 10,000 books scattered over the history.
//
// It follows its inputs whoever changes them (CLI, worker, SQL by hand): a statement-level
// trigger on each input table recomputes, in the same transaction, the account-dates the
// statement touched (old and new rows), from the base tables. Writers of one account-date are
// serialised by a transaction-level advisory lock taken before the recomputation, so the later
// one reads the earlier one's committed rows (READ COMMITTED gives each statement of the function
// a fresh snapshot). The view keeps its columns and meaning; only `no_books` is decided at read
// time (it depends on now()). Existing databases are filled by the same recomputation.

const KEY_SOURCES = `
  select account, business_date from snapshot_runs where status = 'succeeded'
  union select account, business_date from missed_dates
  union select account, business_date from expected_balances
  union select account, business_date from reconciliation_results
  union select account, business_date from reconciliation_owed
  union select account, business_date from bank_statements where not intraday`;

/** The first key of the advisory locks of reconciliation_days (the second is the account's bucket). */
const LOCK_CLASS = 290_361;

/** Up to this many days, a statement's days are looked up one by one; beyond, in one grouped pass. */
const KEYED_UP_TO = 2000;

/** What the results of an account-date say, over its rows `x`. */
const RESULT_AGGREGATES = `max(x.run_id) as run_id, max(x.books_import_id) as books_import_id, max(x.computed_at) as reconciled_at,
            bool_or(x.status = 'awaiting_books') as awaiting,
            bool_or(x.status = 'awaiting_statement') as awaiting_statement,
            bool_or(x.source = 'bank') as bank,
            max(x.bank_statement_id) as bank_statement_id,
            min(x.books_deadline_at) filter (where x.status = 'awaiting_books') as books_deadline_at,
            count(*)::integer as n,
            (count(*) filter (where x.status <> 'matched'))::integer as not_matched`;

const INPUT_TABLES = ['snapshot_runs', 'missed_dates', 'expected_balances', 'reconciliation_results', 'reconciliation_owed', 'bank_statements'] as const;

const STATUS_VIEW = `
  create view reconciliation_status as
  select d.account, d.business_date,
    case
      when d.owed then 'owed'
      when d.run_id is not null and (d.results = 0 or d.results_run_id is distinct from d.run_id or d.results_books_import_id is distinct from d.books_import_id) then 'owed'
      when d.statement_pk is not null and (d.results = 0 or d.results_bank_statement_id is distinct from d.statement_pk or d.results_books_import_id is distinct from d.books_import_id) then 'owed'
      when d.awaiting_statement then 'awaiting_statement'
      when d.run_id is null and d.statement_pk is null and not coalesce(d.bank, false) then 'not_captured'
      when d.awaiting and d.books_deadline_at <= now() then 'no_books'
      when d.awaiting then 'awaiting_books'
      else 'current'
    end as state,
    d.run_id,
    d.books_import_id,
    d.reconciled_at,
    d.owed_reason,
    case when d.statement_pk is not null or coalesce(d.bank, false) then 'bank' else 'gateway' end as source,
    d.statement_pk as bank_statement_id,
    d.books_deadline_at
  from reconciliation_days d`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table reconciliation_days (
      account text not null,
      business_date date not null,
      -- the authoritative run (authoritative_runs), if any succeeded
      run_id integer,
      -- the books: newest import, how many currencies, from where, when
      books_import_id integer,
      books_currencies integer not null,
      books_source text,
      books_imported_at timestamptz,
      -- the newest end-of-day bank statement
      statement_pk integer,
      owed boolean not null,
      owed_reason text,
      -- the stored results: how many, how many did not match, and what they were computed from
      results integer not null,
      not_matched integer not null,
      results_run_id integer,
      results_books_import_id integer,
      reconciled_at timestamptz,
      awaiting boolean,
      awaiting_statement boolean,
      bank boolean,
      results_bank_statement_id integer,
      books_deadline_at timestamptz,
      primary key (account, business_date)
    )`.execute(db);
  await sql`create index reconciliation_days_date_idx on reconciliation_days (business_date, account)`.execute(db);

  await sql`
    create function refresh_reconciliation_days(p_accounts text[], p_dates date[]) returns void language plpgsql as $$
    begin
      -- One writer of an account's days at a time, the accounts in 256 lock buckets taken in a
      -- fixed order (a statement of a year of 200 accounts takes at most 256 locks, two statements
      -- never wait on each other crosswise); the statements below then see the other's commit.
      perform pg_advisory_xact_lock(${sql.raw(String(LOCK_CLASS))}, k.bucket)
      from (select distinct hashtext(u.account) & 255 as bucket from unnest(p_accounts) as u(account) order by 1) k;
      delete from reconciliation_days t
      using unnest(p_accounts, p_dates) as u(account, business_date)
      where t.account = u.account and t.business_date = u.business_date;
      if cardinality(p_accounts) <= ${sql.raw(String(KEYED_UP_TO))} then
        -- A few days (a reconcile, an import of a day): each looked up through its keys' indexes.
        insert into reconciliation_days
        select k.account, k.business_date, a.run_id,
          b.import_id, b.n, b.source, b.imported_at,
          s.statement_pk,
          o.account is not null, o.reason,
          r.n, r.not_matched, r.run_id, r.books_import_id, r.reconciled_at, r.awaiting, r.awaiting_statement, r.bank, r.bank_statement_id, r.books_deadline_at
        from (select distinct u.account, u.business_date from unnest(p_accounts, p_dates) as u(account, business_date)) k
        left join reconciliation_owed o on o.account = k.account and o.business_date = k.business_date
        left join lateral (
          -- limit 1 keeps the lookup keyed (authoritative_runs is a DISTINCT ON view)
          select x.run_id from authoritative_runs x where x.account = k.account and x.business_date = k.business_date limit 1
        ) a on true
        cross join lateral (
          select max(e.import_id) as import_id, count(*)::integer as n, max(e.source) as source, max(e.imported_at) as imported_at
          from expected_balances e where e.account = k.account and e.business_date = k.business_date
        ) b
        cross join lateral (
          select max(st.id) as statement_pk from bank_statements st where st.account = k.account and st.business_date = k.business_date and not st.intraday
        ) s
        cross join lateral (
          select ${sql.raw(RESULT_AGGREGATES)}
          from reconciliation_results x where x.account = k.account and x.business_date = k.business_date
        ) r
        -- an account-date is listed while any input has a row for it (as the view's union of days did)
        where a.run_id is not null or b.n > 0 or s.statement_pk is not null or o.account is not null or r.n > 0
          or exists (select 1 from missed_dates m where m.account = k.account and m.business_date = k.business_date);
      else
        -- Many days (history written in bulk, the fill of an existing database): one grouped pass
        -- over the rows of their accounts and dates, instead of a lookup per day.
        with k as (select distinct u.account, u.business_date from unnest(p_accounts, p_dates) as u(account, business_date)),
        f as (select array_agg(distinct k.account) as accounts, min(k.business_date) as first, max(k.business_date) as last from k),
        present as (
          select y.account, y.business_date from snapshot_runs y, f where y.status = 'succeeded' and y.account = any(f.accounts) and y.business_date between f.first and f.last
          union select y.account, y.business_date from missed_dates y, f where y.account = any(f.accounts) and y.business_date between f.first and f.last
          union select y.account, y.business_date from expected_balances y, f where y.account = any(f.accounts) and y.business_date between f.first and f.last
          union select y.account, y.business_date from reconciliation_results y, f where y.account = any(f.accounts) and y.business_date between f.first and f.last
          union select y.account, y.business_date from reconciliation_owed y, f where y.account = any(f.accounts) and y.business_date between f.first and f.last
          union select y.account, y.business_date from bank_statements y, f where not y.intraday and y.account = any(f.accounts) and y.business_date between f.first and f.last
        )
        insert into reconciliation_days
        select k.account, k.business_date, a.run_id,
          b.import_id, coalesce(b.n, 0), b.source, b.imported_at,
          s.statement_pk,
          o.account is not null, o.reason,
          coalesce(r.n, 0), coalesce(r.not_matched, 0), r.run_id, r.books_import_id, r.reconciled_at, r.awaiting, r.awaiting_statement, r.bank, r.bank_statement_id, r.books_deadline_at
        from k
        join present p on p.account = k.account and p.business_date = k.business_date
        left join reconciliation_owed o on o.account = k.account and o.business_date = k.business_date
        left join (
          select distinct on (z.account, z.business_date) z.account, z.business_date, z.run_id from authoritative_runs z, f
          where z.account = any(f.accounts) and z.business_date between f.first and f.last
        ) a on a.account = k.account and a.business_date = k.business_date
        left join (
          select e.account, e.business_date, max(e.import_id) as import_id, count(*)::integer as n, max(e.source) as source, max(e.imported_at) as imported_at
          from expected_balances e, f where e.account = any(f.accounts) and e.business_date between f.first and f.last group by 1, 2
        ) b on b.account = k.account and b.business_date = k.business_date
        left join (
          select st.account, st.business_date, max(st.id) as statement_pk
          from bank_statements st, f where not st.intraday and st.account = any(f.accounts) and st.business_date between f.first and f.last group by 1, 2
        ) s on s.account = k.account and s.business_date = k.business_date
        left join (
          select x.account, x.business_date, ${sql.raw(RESULT_AGGREGATES)}
          from reconciliation_results x, f where x.account = any(f.accounts) and x.business_date between f.first and f.last group by 1, 2
        ) r on r.account = k.account and r.business_date = k.business_date;
      end if;
    end $$`.execute(db);

  // One trigger function per shape of transition tables (inserted, deleted, updated rows): each
  // recomputes the account-dates its statement's rows name.
  await sql`
    create function refresh_days_of_new_rows() returns trigger language plpgsql as $$
    begin
      perform refresh_reconciliation_days(array_agg(account), array_agg(business_date)) from (select distinct account, business_date from new_rows) c having count(*) > 0;
      return null;
    end $$`.execute(db);
  await sql`
    create function refresh_days_of_old_rows() returns trigger language plpgsql as $$
    begin
      perform refresh_reconciliation_days(array_agg(account), array_agg(business_date)) from (select distinct account, business_date from old_rows) c having count(*) > 0;
      return null;
    end $$`.execute(db);
  await sql`
    create function refresh_days_of_changed_rows() returns trigger language plpgsql as $$
    begin
      perform refresh_reconciliation_days(array_agg(account), array_agg(business_date))
      from (select account, business_date from old_rows union select account, business_date from new_rows) c having count(*) > 0;
      return null;
    end $$`.execute(db);
  for (const table of INPUT_TABLES) {
    await sql`create trigger ${sql.id(`${table}_days_insert`)} after insert on ${sql.id(table)} referencing new table as new_rows for each statement execute function refresh_days_of_new_rows()`.execute(db);
    await sql`create trigger ${sql.id(`${table}_days_update`)} after update on ${sql.id(table)} referencing old table as old_rows new table as new_rows for each statement execute function refresh_days_of_changed_rows()`.execute(db);
    await sql`create trigger ${sql.id(`${table}_days_delete`)} after delete on ${sql.id(table)} referencing old table as old_rows for each statement execute function refresh_days_of_old_rows()`.execute(db);
  }

  // The days of an existing database: one grouped pass over history (minutes for years of 200
  // accounts, longer than a command's statement timeout).
  await sql`set local statement_timeout = 0`.execute(db);
  await sql`select refresh_reconciliation_days(array_agg(account), array_agg(business_date)) from (${sql.raw(KEY_SOURCES)}) d having count(*) > 0`.execute(db);

  await sql`drop view reconciliation_status`.execute(db);
  await sql`${sql.raw(STATUS_VIEW)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Back to the view as 2026-11-27T3601 left it (computed from the base tables at each read).
  await sql`drop view reconciliation_status`.execute(db);
  await sql`
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
    from (${sql.raw(KEY_SOURCES)}) d
    left join reconciliation_owed o on o.account = d.account and o.business_date = d.business_date
    left join lateral (
      select x.run_id from authoritative_runs x where x.account = d.account and x.business_date = d.business_date limit 1
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
    ) r`.execute(db);
  for (const table of INPUT_TABLES) {
    for (const event of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.id(`${table}_days_${event}`)} on ${sql.id(table)}`.execute(db);
  }
  await sql`drop function refresh_days_of_changed_rows()`.execute(db);
  await sql`drop function refresh_days_of_old_rows()`.execute(db);
  await sql`drop function refresh_days_of_new_rows()`.execute(db);
  await sql`drop function refresh_reconciliation_days(text[], date[])`.execute(db);
  await sql`drop table reconciliation_days`.execute(db);
}
