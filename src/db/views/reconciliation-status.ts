import type { ViewDefinition } from './view-definition.js';

/**
 * Where does each (account, business date) stand? `state`: `current` (its results come from its
 * authoritative snapshot or statement and its latest books), `owed` (an input changed since they
 * were computed; `owed_reason` says which), `awaiting_statement`, `not_captured`, `awaiting_books`,
 * or `no_books` once the books deadline kept with the awaited results has passed; with the run,
 * books import and statement the results should come from, and the `source` (gateway or bank);
 * `explained` counts its results whose difference open reconciling items explain. A captured date
 * is read by the rules its run was captured under: `cutoff_at` and `cutoff_timezone` are the
 * run's own (never the configuration's now), `cutoff_local` that cut-off's local time there, and
 * `cutoff_drift_seconds` when its reads finished against it.
 *
 * It reads `reconciliation_days`, the derived state triggers keep per account-date, so a
 * one-date read is one table's rows; only `no_books` is decided here, as it depends on now().
 */
export const reconciliationStatus: ViewDefinition = {
  name: 'reconciliation_status',
  query: `
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
      d.books_deadline_at,
      (select count(*) from reconciliation_results r where r.account = d.account and r.business_date = d.business_date and r.status = 'explained')::integer as explained,
      run.cutoff_at,
      run.cutoff_timezone,
      case when run.cutoff_timezone is not null then to_char(run.cutoff_at at time zone run.cutoff_timezone, 'HH24:MI') end as cutoff_local,
      case when run.source is null and run.cutoff_at is not null
        then round(extract(epoch from coalesce(run.reads_finished_at, run.started_at) - run.cutoff_at))::integer
      end as cutoff_drift_seconds
    from reconciliation_days d
    left join snapshot_runs run on run.id = d.run_id`,
};
