import type { ViewDefinition } from './view-definition.js';

/**
 * Which days exist for each account, and why one is missing? Every (account, business date) with
 * a run or a missed date: `captured` (a succeeded end-of-day run), `missed` (its capture window
 * closed without one) or `pending`; the authoritative run, the end-of-day attempts, the drift
 * from the cut-off and the latest error.
 *
 * `limit 1` (one run per date anyway) keeps the authoritative-run lookup keyed per (account,
 * business date): without it the planner pulled the DISTINCT ON view up into a join and computed
 * every date of history for a range read.
 */
export const captureDays: ViewDefinition = {
  name: 'capture_days',
  query: `
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
      select y.run_id, y.cutoff_drift_seconds, y.end_of_day from authoritative_runs y where y.account = d.account and y.business_date = d.business_date limit 1
    ) r on true`,
};
