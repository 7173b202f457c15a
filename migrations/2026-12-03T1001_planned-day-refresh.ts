import { sql, type Kysely } from 'kysely';

// The recomputation of reconciliation_days (2026-11-27T3602) at a capture's cost, measured in
// the fleet benchmark with pg_stat_statements: every capture recomputed its account-date three
// times or more, and each time the keyed statement (six lookups, one through the DISTINCT ON of
// authoritative_runs) was planned anew — 1.2 ms of planning for 0.2 ms of work, because for an
// array parameter PostgreSQL judges a plan made for the actual values cheaper than a reusable
// one, and keeps planning for the values. Two changes, the days written unchanged:
// - a few days are recomputed by `refresh_days_keyed`, whose statements are planned once per
//   session (plan_cache_mode = force_generic_plan: the lookups are by key whatever the values);
//   many days still go through the grouped pass of refresh_reconciliation_days;
// - a change of snapshot_runs recomputes only the days of its succeeded rows, old or new: a run
//   that has not succeeded is in no day (authoritative_runs reads succeeded runs only), so a
//   capture's start, its progress and a failure change nothing there.

/** Up to this many days, a statement's days are looked up one by one (as in 2026-11-27T3602). */
const KEYED_UP_TO = 2000;

/** The first key of the advisory locks of reconciliation_days (as in 2026-11-27T3602). */
const LOCK_CLASS = 290_361;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function refresh_days_keyed(p_accounts text[], p_dates date[]) returns void language plpgsql
    set plan_cache_mode = force_generic_plan as $$
    begin
      -- The locks of refresh_reconciliation_days, in the same order.
      perform pg_advisory_xact_lock(${sql.raw(String(LOCK_CLASS))}, k.bucket)
      from (select distinct hashtext(u.account) & 255 as bucket from unnest(p_accounts) as u(account) order by 1) k;
      delete from reconciliation_days t
      using unnest(p_accounts, p_dates) as u(account, business_date)
      where t.account = u.account and t.business_date = u.business_date;
      insert into reconciliation_days
      select k.account, k.business_date, a.run_id,
        b.import_id, b.n, b.source, b.imported_at,
        s.statement_pk,
        o.owed, o.reason,
        r.n, r.not_matched, r.run_id, r.books_import_id, r.reconciled_at, r.awaiting, r.awaiting_statement, r.bank, r.bank_statement_id, r.books_deadline_at
      from (select distinct u.account, u.business_date from unnest(p_accounts, p_dates) as u(account, business_date)) k
      -- Every lookup is a keyed one beside each day, so the one plan suits any table size.
      cross join lateral (
        select count(*) > 0 as owed, max(w.reason) as reason from reconciliation_owed w where w.account = k.account and w.business_date = k.business_date
      ) o
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
        select max(x.run_id) as run_id, max(x.books_import_id) as books_import_id, max(x.computed_at) as reconciled_at,
          bool_or(x.status = 'awaiting_books') as awaiting,
          bool_or(x.status = 'awaiting_statement') as awaiting_statement,
          bool_or(x.source = 'bank') as bank,
          max(x.bank_statement_id) as bank_statement_id,
          min(x.books_deadline_at) filter (where x.status = 'awaiting_books') as books_deadline_at,
          count(*)::integer as n,
          (count(*) filter (where x.status <> 'matched'))::integer as not_matched
        from reconciliation_results x where x.account = k.account and x.business_date = k.business_date
      ) r
      cross join lateral (
        select count(*) > 0 as missed from missed_dates m where m.account = k.account and m.business_date = k.business_date
      ) m
      -- an account-date is listed while any input has a row for it (as the view's union of days did)
      where a.run_id is not null or b.n > 0 or s.statement_pk is not null or o.owed or r.n > 0 or m.missed;
    end $$`.execute(db);

  // A few days keyed, many in one grouped pass.
  await sql`
    create function refresh_days(p_accounts text[], p_dates date[]) returns void language plpgsql as $$
    begin
      if cardinality(p_accounts) <= ${sql.raw(String(KEYED_UP_TO))} then
        perform refresh_days_keyed(p_accounts, p_dates);
      else
        perform refresh_reconciliation_days(p_accounts, p_dates);
      end if;
    end $$`.execute(db);

  await defineTriggerFunctions(db, 'rows', 'refresh_days');
  // snapshot_runs: only succeeded rows are in a day.
  await defineTriggerFunctions(db, 'runs', 'refresh_days', `where status = 'succeeded'`);
  await replaceRunTriggers(db, { insert: 'refresh_days_of_new_runs', update: 'refresh_days_of_changed_runs', delete: 'refresh_days_of_old_runs' });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceRunTriggers(db, { insert: 'refresh_days_of_new_rows', update: 'refresh_days_of_changed_rows', delete: 'refresh_days_of_old_rows' });
  await sql`drop function refresh_days_of_changed_runs()`.execute(db);
  await sql`drop function refresh_days_of_old_runs()`.execute(db);
  await sql`drop function refresh_days_of_new_runs()`.execute(db);
  await defineTriggerFunctions(db, 'rows', 'refresh_reconciliation_days');
  await sql`drop function refresh_days(text[], date[])`.execute(db);
  await sql`drop function refresh_days_keyed(text[], date[])`.execute(db);
}

/**
 * The three trigger functions (inserted, deleted, updated rows) named `refresh_days_of_*_{suffix}`,
 * each calling `refresh` with the account-dates of its statement's rows that pass `rowFilter`:
 * those of the other input tables as in 2026-11-27T3602 (`rows`, every row), snapshot_runs' own (`runs`).
 */
async function defineTriggerFunctions(db: Kysely<unknown>, suffix: 'rows' | 'runs', refresh: 'refresh_days' | 'refresh_reconciliation_days', rowFilter = ''): Promise<void> {
  const call = sql.raw(refresh);
  const where = sql.raw(rowFilter === '' ? '' : ` ${rowFilter}`);
  const name = (transition: 'new' | 'old' | 'changed') => sql.id(`refresh_days_of_${transition}_${suffix}`);
  await sql`
    create or replace function ${name('new')}() returns trigger language plpgsql as $$
    begin
      perform ${call}(array_agg(account), array_agg(business_date)) from (select distinct account, business_date from new_rows${where}) c having count(*) > 0;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function ${name('old')}() returns trigger language plpgsql as $$
    begin
      perform ${call}(array_agg(account), array_agg(business_date)) from (select distinct account, business_date from old_rows${where}) c having count(*) > 0;
      return null;
    end $$`.execute(db);
  await sql`
    create or replace function ${name('changed')}() returns trigger language plpgsql as $$
    begin
      perform ${call}(array_agg(account), array_agg(business_date))
      from (select account, business_date from old_rows${where} union select account, business_date from new_rows${where}) c having count(*) > 0;
      return null;
    end $$`.execute(db);
}

async function replaceRunTriggers(db: Kysely<unknown>, functions: { insert: string; update: string; delete: string }): Promise<void> {
  for (const event of ['insert', 'update', 'delete'] as const) await sql`drop trigger ${sql.id(`snapshot_runs_days_${event}`)} on snapshot_runs`.execute(db);
  await sql`create trigger snapshot_runs_days_insert after insert on snapshot_runs referencing new table as new_rows for each statement execute function ${sql.id(functions.insert)}()`.execute(db);
  await sql`create trigger snapshot_runs_days_update after update on snapshot_runs referencing old table as old_rows new table as new_rows for each statement execute function ${sql.id(functions.update)}()`.execute(db);
  await sql`create trigger snapshot_runs_days_delete after delete on snapshot_runs referencing old table as old_rows for each statement execute function ${sql.id(functions.delete)}()`.execute(db);
}
