import { sql, type Kysely } from 'kysely';

// The close as evidence. An approved sign-off locks its date for its accounts (books, results and
// captures of the date are refused by triggers, whoever writes), a sign-off can be reopened once
// with a note, and sign-offs, case events and console audit rows carry SHA-256 hash chains so an
// edit made past the triggers (session_replication_role = replica) is found by `signoff verify`.
//
// Hashes are computed here, in the database, so every writer gets them (also SQL by hand). Each
// chained row stores the previous row's hash and its own: sha256(prev_hash || '|' || content),
// content being a jsonb array of the row's columns (jsonb text is canonical: one value, one text),
// timestamps written in UTC with microseconds, dates as YYYY-MM-DD, so no session setting changes
// a hash. The verifier (src/db/seal-chain.repository.ts) recomputes the same expressions.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function wr_ts(t timestamptz) returns text language sql immutable as $$
      select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
    $$`.execute(db);
  await sql`
    create function wr_link(prev text, content text) returns text language sql immutable as $$
      select encode(sha256(convert_to(coalesce(prev, '') || '|' || content, 'UTF8')), 'hex')
    $$`.execute(db);

  // ---- sign-offs: reopen, seals, chain --------------------------------------------------------
  await sql`
    alter table signoffs
      add column reopened_at timestamptz,
      add column reopened_by text,
      add column reopen_note text,
      add column chain_seq bigint,
      add column prev_hash text,
      add column seal_hash text,
      add column approval_hash text,
      add column invalidation_hash text,
      add column reopen_hash text,
      add constraint signoffs_reopen_whole check ((reopened_at is null) = (reopened_by is null) and (reopened_at is null) = (reopen_note is null)),
      add constraint signoffs_reopen_note check (reopen_note is null or btrim(reopen_note) <> '')`.execute(db);
  await sql`drop index signoffs_one_live`.execute(db);
  // One standing sign-off per date: a reopened or invalidated one makes room for the next.
  await sql`create unique index signoffs_one_live on signoffs (business_date) where invalidated_at is null and reopened_at is null`.execute(db);

  await sql`
    create function signoff_seal_content(s signoffs) returns text language sql stable as $$
      select jsonb_build_array(s.id, to_jsonb(s.account_set), to_char(s.business_date, 'YYYY-MM-DD'), s.prepared_by, wr_ts(s.prepared_at), s.report_sha256, s.inputs)::text
    $$`.execute(db);

  // Rows from before this migration get their seals now, in id order.
  await sql`
    do $$
    declare
      r signoffs;
      prev text := null;
      n bigint := 0;
    begin
      for r in select * from signoffs order by id loop
        n := n + 1;
        r.chain_seq := n;
        r.prev_hash := prev;
        r.seal_hash := wr_link(prev, signoff_seal_content(r));
        update signoffs set chain_seq = r.chain_seq, prev_hash = r.prev_hash, seal_hash = r.seal_hash,
          approval_hash = case when approved_by is null then null else wr_link(r.seal_hash, jsonb_build_array(approved_by, wr_ts(approved_at))::text) end
        where id = r.id;
        prev := r.seal_hash;
      end loop;
    end $$`.execute(db);
  await sql`update signoffs set invalidation_hash = wr_link(coalesce(approval_hash, seal_hash), jsonb_build_array(wr_ts(invalidated_at), invalidation)::text) where invalidated_at is not null`.execute(
    db,
  );
  await sql`create unique index signoffs_chain_seq on signoffs (chain_seq)`.execute(db);

  await sql`drop trigger signoffs_append_only on signoffs`.execute(db);
  await sql`drop trigger signoffs_no_truncate on signoffs`.execute(db);
  await sql`drop function signoffs_append_only()`.execute(db);
  await sql`
    create function signoffs_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        -- A sign-off is born prepared: an approval, invalidation or reopening is a later step.
        if new.approved_by is not null or new.approved_at is not null or new.invalidated_at is not null or new.invalidation is not null
          or new.reopened_at is not null or new.reopened_by is not null or new.reopen_note is not null then
          raise exception 'signoffs: an insert that already carries an approval, invalidation or reopening is refused (sign-offs are prepared first, then approved by another person)'
            using errcode = 'insufficient_privilege';
        end if;
        -- One chain writer at a time, until commit: the next row links to the committed last one.
        perform pg_advisory_xact_lock(hashtextextended('wallet-recon:chain:signoffs', 0));
        select s.chain_seq, s.seal_hash into new.chain_seq, new.prev_hash from signoffs s where s.chain_seq is not null order by s.chain_seq desc limit 1;
        new.chain_seq := coalesce(new.chain_seq, 0) + 1;
        new.seal_hash := wr_link(new.prev_hash, signoff_seal_content(new));
        new.approval_hash := null;
        new.invalidation_hash := null;
        new.reopen_hash := null;
        return new;
      end if;
      if tg_op = 'UPDATE'
        and new.id = old.id and new.account_set = old.account_set and new.business_date = old.business_date
        and new.prepared_by = old.prepared_by and new.prepared_at = old.prepared_at
        and new.report_sha256 = old.report_sha256 and new.report_html = old.report_html and new.inputs = old.inputs
        and new.chain_seq is not distinct from old.chain_seq and new.prev_hash is not distinct from old.prev_hash and new.seal_hash is not distinct from old.seal_hash
        and (old.approved_by is null or (new.approved_by is not distinct from old.approved_by and new.approved_at is not distinct from old.approved_at and new.approval_hash is not distinct from old.approval_hash))
        and (old.invalidated_at is null or (new.invalidated_at is not distinct from old.invalidated_at and new.invalidation is not distinct from old.invalidation and new.invalidation_hash is not distinct from old.invalidation_hash))
        and (old.reopened_at is null or (new.reopened_at is not distinct from old.reopened_at and new.reopened_by is not distinct from old.reopened_by and new.reopen_note is not distinct from old.reopen_note and new.reopen_hash is not distinct from old.reopen_hash))
      then
        if old.approved_by is null and new.approved_by is not null then
          if old.invalidated_at is not null or old.reopened_at is not null or new.invalidated_at is not null or new.reopened_at is not null then
            raise exception 'signoffs: sign-off #% is invalidated or reopened and can no longer be approved', old.id using errcode = 'insufficient_privilege';
          end if;
          new.approval_hash := wr_link(old.seal_hash, jsonb_build_array(new.approved_by, wr_ts(new.approved_at))::text);
        end if;
        if old.invalidated_at is null and new.invalidated_at is not null then
          if old.reopened_at is not null or new.reopened_at is not null then
            raise exception 'signoffs: sign-off #% was reopened; it is not invalidated as well', old.id using errcode = 'insufficient_privilege';
          end if;
          new.invalidation_hash := wr_link(coalesce(new.approval_hash, old.seal_hash), jsonb_build_array(wr_ts(new.invalidated_at), new.invalidation)::text);
        end if;
        if old.reopened_at is null and new.reopened_at is not null then
          if old.approved_by is null or old.invalidated_at is not null then
            raise exception 'signoffs: only a standing approved sign-off can be reopened (#% is not)', old.id using errcode = 'insufficient_privilege';
          end if;
          new.reopen_hash := wr_link(old.approval_hash, jsonb_build_array(new.reopened_by, wr_ts(new.reopened_at), new.reopen_note)::text);
        end if;
        return new;
      end if;
      raise exception 'signoffs is append-only: % is refused (a sign-off and its sealed report cannot be rewritten; only its approval, invalidation or reopening are added once)', tg_op
        using errcode = 'insufficient_privilege';
    end
    $$`.execute(db);
  await sql`create trigger signoffs_append_only before insert or update or delete on signoffs for each row execute function signoffs_append_only()`.execute(db);
  await sql`create trigger signoffs_no_truncate before truncate on signoffs for each statement execute function signoffs_append_only()`.execute(db);

  // Ed25519 signatures of each step's hash, made with RECON_SIGNING_KEY_FILE (outside the database).
  await sql`
    create table signoff_signatures (
      id integer generated by default as identity primary key,
      signoff_id integer not null references signoffs (id),
      step text not null check (step in ('prepare', 'approve', 'reopen')),
      signed_hash text not null check (signed_hash ~ '^[0-9a-f]{64}$'),
      public_key text not null,
      signature text not null,
      unique (signoff_id, step)
    )`.execute(db);
  await sql`
    create function signoff_signatures_refuse_change() returns trigger language plpgsql as $$
    begin
      raise exception 'signoff_signatures is append-only: % is refused', tg_op using errcode = 'insufficient_privilege';
    end $$`.execute(db);
  await sql`create trigger signoff_signatures_append_only before update or delete on signoff_signatures for each row execute function signoff_signatures_refuse_change()`.execute(db);
  await sql`create trigger signoff_signatures_no_truncate before truncate on signoff_signatures for each statement execute function signoff_signatures_refuse_change()`.execute(db);

  // ---- case events and console audit: chains ---------------------------------------------------
  await sql`alter table case_events add column chain_seq bigint, add column prev_hash text, add column row_hash text`.execute(db);
  await sql`alter table console_audit add column chain_seq bigint, add column prev_hash text, add column row_hash text`.execute(db);
  await sql`
    create function case_event_content(e case_events) returns text language sql stable as $$
      select jsonb_build_array(e.id, e.case_id, wr_ts(e.at), e.actor, e.action, e.from_state, e.to_state, e.note, e.evidence)::text
    $$`.execute(db);
  await sql`
    create function console_audit_content(a console_audit) returns text language sql stable as $$
      select jsonb_build_array(a.id, wr_ts(a.at), a.user_name, a.address, a.action, a.target, a.outcome, a.detail)::text
    $$`.execute(db);
  await sql`
    create function chain_case_event() returns trigger language plpgsql as $$
    begin
      perform pg_advisory_xact_lock(hashtextextended('wallet-recon:chain:case_events', 0));
      select e.chain_seq, e.row_hash into new.chain_seq, new.prev_hash from case_events e where e.chain_seq is not null order by e.chain_seq desc limit 1;
      new.chain_seq := coalesce(new.chain_seq, 0) + 1;
      new.row_hash := wr_link(new.prev_hash, case_event_content(new));
      return new;
    end $$`.execute(db);
  await sql`
    create function chain_console_audit() returns trigger language plpgsql as $$
    begin
      perform pg_advisory_xact_lock(hashtextextended('wallet-recon:chain:console_audit', 0));
      select a.chain_seq, a.row_hash into new.chain_seq, new.prev_hash from console_audit a where a.chain_seq is not null order by a.chain_seq desc limit 1;
      new.chain_seq := coalesce(new.chain_seq, 0) + 1;
      new.row_hash := wr_link(new.prev_hash, console_audit_content(new));
      return new;
    end $$`.execute(db);
  // Existing rows first (the append-only trigger of case_events is set aside for this one update).
  await sql`alter table case_events disable trigger case_events_append_only`.execute(db);
  await sql`
    do $$
    declare r case_events; prev text := null; n bigint := 0;
    begin
      for r in select * from case_events order by id loop
        n := n + 1;
        update case_events set chain_seq = n, prev_hash = prev, row_hash = wr_link(prev, case_event_content(r)) where id = r.id;
        prev := wr_link(prev, case_event_content(r));
      end loop;
    end $$`.execute(db);
  await sql`alter table case_events enable trigger case_events_append_only`.execute(db);
  await sql`
    do $$
    declare r console_audit; prev text := null; n bigint := 0;
    begin
      for r in select * from console_audit order by id loop
        n := n + 1;
        update console_audit set chain_seq = n, prev_hash = prev, row_hash = wr_link(prev, console_audit_content(r)) where id = r.id;
        prev := wr_link(prev, console_audit_content(r));
      end loop;
    end $$`.execute(db);
  await sql`create unique index case_events_chain_seq on case_events (chain_seq)`.execute(db);
  await sql`create unique index console_audit_chain_seq on console_audit (chain_seq)`.execute(db);
  await sql`create trigger case_events_chain before insert on case_events for each row execute function chain_case_event()`.execute(db);
  await sql`create trigger console_audit_chain before insert on console_audit for each row execute function chain_console_audit()`.execute(db);
  await sql`
    create function console_audit_refuse_change() returns trigger language plpgsql as $$
    begin
      raise exception 'console_audit is append-only: % is refused (the audit trail cannot be rewritten)', tg_op using errcode = 'insufficient_privilege';
    end $$`.execute(db);
  await sql`create trigger console_audit_append_only before update or delete on console_audit for each row execute function console_audit_refuse_change()`.execute(db);
  await sql`create trigger console_audit_no_truncate before truncate on console_audit for each statement execute function console_audit_refuse_change()`.execute(db);

  // ---- the lock of an approved date --------------------------------------------------------------
  await sql`
    create view locked_dates as
    select s.id as signoff_id, a.account, s.business_date, s.approved_by, s.approved_at
    from signoffs s cross join lateral unnest(s.account_set) as a(account)
    where s.approved_by is not null and s.invalidated_at is null and s.reopened_at is null`.execute(db);
  await sql`
    create function refuse_locked_rows(p_table text, p_account text, p_date date) returns void language plpgsql as $$
    declare l record;
    begin
      select * into l from locked_dates where account = p_account and business_date = p_date limit 1;
      if found then
        raise exception '% of account "%" on % are locked: sign-off #% was approved by % (reopen it first: wallet-recon signoff reopen --date %)',
          p_table, p_account, to_char(p_date, 'YYYY-MM-DD'), l.signoff_id, l.approved_by, to_char(p_date, 'YYYY-MM-DD')
          using errcode = 'insufficient_privilege';
      end if;
    end $$`.execute(db);
  // Statement-level, with the changed rows as transition tables: one lookup per day, not per row.
  await sql`
    create function refuse_locked_change() returns trigger language plpgsql as $$
    declare d record;
    begin
      if tg_op in ('INSERT', 'UPDATE') then
        for d in select distinct account, business_date from new_rows loop perform refuse_locked_rows(tg_table_name, d.account, d.business_date); end loop;
      end if;
      if tg_op in ('DELETE', 'UPDATE') then
        for d in select distinct account, business_date from old_rows loop perform refuse_locked_rows(tg_table_name, d.account, d.business_date); end loop;
      end if;
      return null;
    end $$`.execute(db);
  for (const table of ['expected_balances', 'reconciliation_results']) {
    await sql`create trigger ${sql.raw(`${table}_lock_insert`)} after insert on ${sql.table(table)} referencing new table as new_rows for each statement execute function refuse_locked_change()`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_lock_update`)} after update on ${sql.table(table)} referencing old table as old_rows new table as new_rows for each statement execute function refuse_locked_change()`.execute(
      db,
    );
    await sql`create trigger ${sql.raw(`${table}_lock_delete`)} after delete on ${sql.table(table)} referencing old table as old_rows for each statement execute function refuse_locked_change()`.execute(db);
  }
  // No capture is recorded for a locked date: a run that would count for it cannot succeed.
  await sql`
    create function refuse_locked_run() returns trigger language plpgsql as $$
    begin
      if new.status = 'succeeded' and (tg_op = 'INSERT' or old.status is distinct from 'succeeded' or old.business_date is distinct from new.business_date) then
        perform refuse_locked_rows('snapshots', new.account, new.business_date);
      end if;
      return new;
    end $$`.execute(db);
  await sql`create trigger snapshot_runs_lock before insert or update on snapshot_runs for each row execute function refuse_locked_run()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger if exists snapshot_runs_lock on snapshot_runs`.execute(db);
  await sql`drop function if exists refuse_locked_run()`.execute(db);
  for (const table of ['expected_balances', 'reconciliation_results']) {
    for (const op of ['insert', 'update', 'delete']) await sql`drop trigger if exists ${sql.raw(`${table}_lock_${op}`)} on ${sql.table(table)}`.execute(db);
  }
  await sql`drop function if exists refuse_locked_change()`.execute(db);
  await sql`drop function if exists refuse_locked_rows(text, text, date)`.execute(db);
  await sql`drop view if exists locked_dates`.execute(db);
  await sql`drop trigger if exists console_audit_append_only on console_audit`.execute(db);
  await sql`drop trigger if exists console_audit_no_truncate on console_audit`.execute(db);
  await sql`drop function if exists console_audit_refuse_change()`.execute(db);
  await sql`drop trigger if exists case_events_chain on case_events`.execute(db);
  await sql`drop trigger if exists console_audit_chain on console_audit`.execute(db);
  await sql`drop function if exists chain_case_event()`.execute(db);
  await sql`drop function if exists chain_console_audit()`.execute(db);
  await sql`alter table case_events disable trigger case_events_append_only`.execute(db);
  await sql`alter table case_events drop column chain_seq, drop column prev_hash, drop column row_hash`.execute(db);
  await sql`alter table case_events enable trigger case_events_append_only`.execute(db);
  await sql`alter table console_audit drop column chain_seq, drop column prev_hash, drop column row_hash`.execute(db);
  await sql`drop function if exists case_event_content(case_events)`.execute(db);
  await sql`drop function if exists console_audit_content(console_audit)`.execute(db);
  await sql`drop table if exists signoff_signatures`.execute(db);
  await sql`drop function if exists signoff_signatures_refuse_change()`.execute(db);
  // Back to the earlier append-only rule (updates and deletes only).
  await sql`drop trigger if exists signoffs_append_only on signoffs`.execute(db);
  await sql`drop trigger if exists signoffs_no_truncate on signoffs`.execute(db);
  await sql`drop index if exists signoffs_one_live`.execute(db);
  await sql`drop index if exists signoffs_chain_seq`.execute(db);
  await sql`drop function if exists signoff_seal_content(signoffs)`.execute(db);
  await sql`
    alter table signoffs
      drop column reopened_at, drop column reopened_by, drop column reopen_note, drop column chain_seq, drop column prev_hash,
      drop column seal_hash, drop column approval_hash, drop column invalidation_hash, drop column reopen_hash`.execute(db);
  await sql`create unique index signoffs_one_live on signoffs (business_date) where invalidated_at is null`.execute(db);
  await sql`
    create or replace function signoffs_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'UPDATE'
        and new.id = old.id and new.account_set = old.account_set and new.business_date = old.business_date
        and new.prepared_by = old.prepared_by and new.prepared_at = old.prepared_at
        and new.report_sha256 = old.report_sha256 and new.report_html = old.report_html and new.inputs = old.inputs
        and (old.approved_by is null or (new.approved_by is not distinct from old.approved_by and new.approved_at is not distinct from old.approved_at))
        and (old.invalidated_at is null or (new.invalidated_at is not distinct from old.invalidated_at and new.invalidation is not distinct from old.invalidation))
      then
        return new;
      end if;
      raise exception 'signoffs is append-only: % is refused (a sign-off and its sealed report cannot be rewritten; only its approval and invalidation are added once)', tg_op
        using errcode = 'insufficient_privilege';
    end
    $$`.execute(db);
  await sql`create trigger signoffs_append_only before update or delete on signoffs for each row execute function signoffs_append_only()`.execute(db);
  await sql`create trigger signoffs_no_truncate before truncate on signoffs for each statement execute function signoffs_append_only()`.execute(db);
  await sql`drop function if exists wr_link(text, text)`.execute(db);
  await sql`drop function if exists wr_ts(timestamptz)`.execute(db);
}
