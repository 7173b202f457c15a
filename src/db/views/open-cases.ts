import type { ViewDefinition } from './view-definition.js';

/**
 * Which discrepancy cases are still active, and how old are they? The open and acknowledged cases
 * with `age_days`: whole days from `opened_on` to the current business date, counted by
 * `wallet_recon_business_date()` as the tool counts them when the session names its calendar
 * (`wallet_recon.timezone`, `wallet_recon.cutoff`, as `wallet-recon sql` sets them). A case
 * stores no scale of its own: `scale` and `latest_difference_major` are those of its latest result.
 */
export const openCases: ViewDefinition = {
  name: 'open_cases',
  query: `
    select c.id, c.account, c.currency, c.kind, c.state, c.opened_on, c.last_seen_on, c.occurrences, c.latest_difference,
      c.assignee, c.due_on, greatest(0, wallet_recon_business_date(now()) - c.opened_on) as age_days,
      s.scale,
      round(c.latest_difference / 10::numeric ^ s.scale, s.scale) as latest_difference_major
    from reconciliation_cases c
    left join lateral (
      select r.scale from reconciliation_results r where r.case_id = c.id order by r.business_date desc limit 1
    ) s on true
    where c.state in ('open', 'acknowledged')`,
};
