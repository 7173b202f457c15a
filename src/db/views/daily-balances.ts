import type { ViewDefinition } from './view-definition.js';

/**
 * What was each account's balance per currency on a business date? The rows of the date's
 * authoritative run (`authoritative_runs`), with whether it was an end-of-day capture, its drift
 * from the cut-off and whether it finished after it; amounts in minor units and, as
 * `<column>_major`, in major units at the row's scale.
 */
export const dailyBalances: ViewDefinition = {
  name: 'daily_balances',
  query: `
    select a.account, a.business_date, s.currency, s.balance, s.single_balance, s.run_id, s.captured_at,
      a.end_of_day, a.cutoff_drift_seconds, a.after_cutoff, s.unconfirmed_reason,
      s.scale,
      round(s.balance / 10::numeric ^ s.scale, s.scale) as balance_major,
      round(s.single_balance / 10::numeric ^ s.scale, s.scale) as single_balance_major
    from authoritative_runs a
    join balance_snapshots s on s.run_id = a.run_id`,
};
