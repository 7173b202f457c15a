import type { ViewDefinition } from './view-definition.js';

/**
 * Which run is an account's snapshot of a business date? One closing-balance rule, judged when the
 * reads finished: the end-of-day capture that finished last at or before the cut-off; only when
 * none did, the earliest one after it (`after_cutoff`); a date with no end-of-day capture falls
 * back to its latest intraday run. `reason` says which rule chose it.
 *
 * The columns of `runs` are those `select *` stood for when the view was first made
 * (2026-11-26T0001; `holder` is `worker` under its name then), listed so the view is the same
 * whenever it is made.
 */
export const authoritativeRuns: ViewDefinition = {
  name: 'authoritative_runs',
  query: `
    with runs as (
      select id, account, environment, trigger, business_date, status, started_at, finished_at,
        wallets_reported, wallets_fetched, pages_fetched, requests, error, slot, worker as holder, source,
        cutoff_at, cutoff_drift_seconds, end_of_day, reads_finished_at, warning,
        coalesce(reads_finished_at, finished_at, started_at) as reads_at
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
      reads_at desc, id desc`,
};
