import { sql, type Kysely } from 'kysely';

// Reconciliation becomes derived state. Whatever changes an input of an (account, business date)
// — a succeeded run, a run reclassified, books written or removed, a miss recorded — marks the
// date owed in the same transaction, through triggers, so it holds whoever wrote the change (the
// worker, a command, a backfill, an operator's own SQL). A reconcile clears what it owed only if
// nothing was marked again meanwhile (the `seq` it read). The closing-balance rule is judged when
// a capture's reads finished, not when it started. Books are awaited before they are missed.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table snapshot_runs
      add column reads_finished_at timestamptz,
      add column warning text`.execute(db);
  // Runs from before: their reads finished about when they finished; statements as of their cut-off.
  await sql`update snapshot_runs set reads_finished_at = case when source is not null then cutoff_at else finished_at end where status = 'succeeded'`.execute(db);

  await sql`alter table balance_snapshots add column unconfirmed_reason text`.execute(db);

  await sql`alter table reconciliation_results drop constraint reconciliation_results_status_check`.execute(db);
  await sql`alter table reconciliation_results drop constraint reconciliation_results_no_snapshot_check`.execute(db);
  await sql`
    alter table reconciliation_results
      add constraint reconciliation_results_status_check check (status in
        ('matched', 'break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'no_snapshot', 'disappeared', 'awaiting_books', 'no_books')),
      add constraint reconciliation_results_account_level_check check ((currency is null) = (status in ('no_snapshot', 'no_books'))),
      add column note text`.execute(db);

  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_kind_check`.execute(db);
  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_account_level_check`.execute(db);
  await sql`
    alter table reconciliation_cases
      add constraint reconciliation_cases_kind_check check (kind in ('break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'disappeared', 'no_snapshot', 'no_books')),
      add constraint reconciliation_cases_account_level_check check ((currency is null) = (kind in ('no_snapshot', 'no_books')))`.execute(db);

  // The business date from which a worker served each account: dates before it were never the
  // worker's to capture, so they can never be "missed" (a manual snapshot or a backfill months
  // earlier does not make a missed past).
  await sql`
    create table scheduled_accounts (
      account text primary key,
      first_business_date date not null,
      first_slot timestamptz not null
    )`.execute(db);
  await sql`
    insert into scheduled_accounts (account, first_business_date, first_slot)
    select account, min(business_date), min(coalesce(slot, started_at))
    from snapshot_runs where trigger = 'schedule'
    group by account`.execute(db);

  await sql`create sequence reconciliation_owed_seq`.execute(db);
  await sql`
    create table reconciliation_owed (
      account text not null,
      business_date date not null,
      reason text not null,
      owed_at timestamptz not null,
      seq bigint not null,
      constraint reconciliation_owed_key primary key (account, business_date)
    )`.execute(db);

  await sql`
    create function owe_reconciliation(p_account text, p_date date, p_reason text) returns void language plpgsql as $$
    begin
      insert into reconciliation_owed (account, business_date, reason, owed_at, seq)
      values (p_account, p_date, p_reason, clock_timestamp(), nextval('reconciliation_owed_seq'))
      on conflict (account, business_date) do update
        set reason = excluded.reason, owed_at = excluded.owed_at, seq = excluded.seq;
    end $$`.execute(db);

  // A run that succeeds, stops counting, or moves to another date changes its date's snapshot and
  // the movement of the account's next captured date.
  await sql`
    create function owe_for_run() returns trigger language plpgsql as $$
    declare
      r record;
      next_date date;
    begin
      for r in
        select new.account as account, new.business_date as business_date where tg_op <> 'DELETE' and new.status = 'succeeded'
        union
        select old.account, old.business_date where tg_op <> 'INSERT' and old.status = 'succeeded'
      loop
        perform owe_reconciliation(r.account, r.business_date, 'snapshot changed');
        select min(business_date) into next_date from snapshot_runs
          where account = r.account and business_date > r.business_date and status = 'succeeded';
        if next_date is not null then
          perform owe_reconciliation(r.account, next_date, 'previous snapshot changed');
        end if;
      end loop;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger snapshot_runs_owe after insert or update of status, business_date, end_of_day, reads_finished_at, cutoff_drift_seconds or delete
    on snapshot_runs for each row execute function owe_for_run()`.execute(db);

  await sql`
    create function owe_for_books() returns trigger language plpgsql as $$
    begin
      if tg_op in ('INSERT', 'UPDATE') then
        insert into reconciliation_owed (account, business_date, reason, owed_at, seq)
        select d.account, d.business_date, 'books changed', clock_timestamp(), nextval('reconciliation_owed_seq')
        from (select distinct account, business_date from new_rows) d
        on conflict (account, business_date) do update set reason = excluded.reason, owed_at = excluded.owed_at, seq = excluded.seq;
      end if;
      if tg_op in ('DELETE', 'UPDATE') then
        insert into reconciliation_owed (account, business_date, reason, owed_at, seq)
        select d.account, d.business_date, 'books changed', clock_timestamp(), nextval('reconciliation_owed_seq')
        from (select distinct account, business_date from old_rows) d
        on conflict (account, business_date) do update set reason = excluded.reason, owed_at = excluded.owed_at, seq = excluded.seq;
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger expected_balances_owe_insert after insert on expected_balances referencing new table as new_rows for each statement execute function owe_for_books()`.execute(db);
  await sql`create trigger expected_balances_owe_update after update on expected_balances referencing old table as old_rows new table as new_rows for each statement execute function owe_for_books()`.execute(db);
  await sql`create trigger expected_balances_owe_delete after delete on expected_balances referencing old table as old_rows for each statement execute function owe_for_books()`.execute(db);

  await sql`
    create function owe_for_miss() returns trigger language plpgsql as $$
    begin
      perform owe_reconciliation(new.account, new.business_date, 'date missed');
      return null;
    end $$`.execute(db);
  await sql`create trigger missed_dates_owe after insert on missed_dates for each row execute function owe_for_miss()`.execute(db);

  // One closing-balance rule, judged when the reads finished: the end-of-day capture that finished
  // last at or before the cut-off; only when none did, the earliest one after it; a date with no
  // end-of-day capture falls back to its latest intraday one. New columns go last (dependent views).
  await sql`
    create or replace view authoritative_runs as
    with runs as (
      select *, coalesce(reads_finished_at, finished_at, started_at) as reads_at
      from snapshot_runs
      where status = 'succeeded'
    )
    select distinct on (account, business_date)
      id as run_id, account, business_date, end_of_day, cutoff_at, cutoff_drift_seconds, trigger, started_at,
      reads_at as reads_finished_at,
      (end_of_day and reads_at > cutoff_at) as after_cutoff,
      case
        when not end_of_day then 'no end-of-day capture: the latest intraday one'
        when source is not null then 'end of day from a statement'
        when reads_at <= cutoff_at then 'the last end-of-day capture that finished at or before the cut-off'
        else 'no capture finished by the cut-off: the earliest one after it'
      end as reason
    from runs
    order by account, business_date, end_of_day desc,
      (end_of_day and reads_at > cutoff_at) asc,
      case when end_of_day and reads_at <= cutoff_at then reads_at end desc nulls last,
      case when end_of_day and reads_at > cutoff_at then reads_at end asc nulls last,
      reads_at desc, id desc`.execute(db);

  await sql`
    create or replace view daily_balances as
    select a.account, a.business_date, s.currency, s.balance, s.single_balance, s.run_id, s.captured_at,
      a.end_of_day, a.cutoff_drift_seconds, a.after_cutoff, s.unconfirmed_reason
    from authoritative_runs a
    join balance_snapshots s on s.run_id = a.run_id`.execute(db);

  // Where each (account, business date) stands: its results are current (computed from its
  // authoritative snapshot and latest books), owed (an input changed since), awaiting its books,
  // or the date has no snapshot to reconcile. A result computed from another run or other books
  // than today's is owed even without a mark (a database from before this migration).
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

  // Dates captured but never reconciled (a capture outside the worker's own night) are owed now.
  await sql`
    insert into reconciliation_owed (account, business_date, reason, owed_at, seq)
    select account, business_date, 'never reconciled', clock_timestamp(), nextval('reconciliation_owed_seq')
    from reconciliation_status where state = 'owed'
    on conflict do nothing`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop view if exists reconciliation_status`.execute(db);
  await sql`drop trigger if exists missed_dates_owe on missed_dates`.execute(db);
  await sql`drop trigger if exists expected_balances_owe_insert on expected_balances`.execute(db);
  await sql`drop trigger if exists expected_balances_owe_update on expected_balances`.execute(db);
  await sql`drop trigger if exists expected_balances_owe_delete on expected_balances`.execute(db);
  await sql`drop trigger if exists snapshot_runs_owe on snapshot_runs`.execute(db);
  await sql`drop function if exists owe_for_miss()`.execute(db);
  await sql`drop function if exists owe_for_books()`.execute(db);
  await sql`drop function if exists owe_for_run()`.execute(db);
  await sql`drop function if exists owe_reconciliation(text, date, text)`.execute(db);
  await sql`drop table if exists reconciliation_owed`.execute(db);
  await sql`drop sequence if exists reconciliation_owed_seq`.execute(db);
  await sql`drop table if exists scheduled_accounts`.execute(db);
  // Views that name the new columns go first; the earlier definitions come back.
  await sql`drop view if exists capture_days`.execute(db);
  await sql`drop view if exists balance_history`.execute(db);
  await sql`drop view if exists daily_balances`.execute(db);
  await sql`drop view if exists authoritative_runs`.execute(db);
  await sql`
    create view authoritative_runs as
    select distinct on (account, business_date)
      id as run_id, account, business_date, end_of_day, cutoff_at, cutoff_drift_seconds, trigger, started_at
    from snapshot_runs
    where status = 'succeeded'
    order by account, business_date, end_of_day desc,
      case when end_of_day then abs(cutoff_drift_seconds) end asc nulls last,
      started_at desc, id desc`.execute(db);
  await sql`
    create view daily_balances as
    select a.account, a.business_date, s.currency, s.balance, s.single_balance, s.run_id, s.captured_at,
      a.end_of_day, a.cutoff_drift_seconds
    from authoritative_runs a
    join balance_snapshots s on s.run_id = a.run_id`.execute(db);
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
      s.balance - p.balance as movement,
      s.run_id
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
  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_kind_check`.execute(db);
  await sql`alter table reconciliation_cases drop constraint reconciliation_cases_account_level_check`.execute(db);
  await sql`delete from reconciliation_cases where kind = 'no_books'`.execute(db);
  await sql`
    alter table reconciliation_cases
      add constraint reconciliation_cases_kind_check check (kind in ('break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'disappeared', 'no_snapshot')),
      add constraint reconciliation_cases_account_level_check check ((currency is null) = (kind = 'no_snapshot'))`.execute(db);
  await sql`delete from reconciliation_results where status in ('awaiting_books', 'no_books')`.execute(db);
  await sql`alter table reconciliation_results drop constraint reconciliation_results_status_check`.execute(db);
  await sql`alter table reconciliation_results drop constraint reconciliation_results_account_level_check`.execute(db);
  await sql`
    alter table reconciliation_results
      drop column note,
      add constraint reconciliation_results_status_check check (status in ('matched', 'break', 'missing_in_ledger', 'missing_in_gateway', 'endpoint_mismatch', 'no_snapshot', 'disappeared')),
      add constraint reconciliation_results_no_snapshot_check check ((currency is null) = (status = 'no_snapshot'))`.execute(db);
  await sql`alter table balance_snapshots drop column unconfirmed_reason`.execute(db);
  await sql`alter table snapshot_runs drop column warning, drop column reads_finished_at`.execute(db);
}
