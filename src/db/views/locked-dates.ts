import type { ViewDefinition } from './view-definition.js';

/**
 * Which account-dates are closed by an approved sign-off? One row per account of every sign-off
 * approved and neither invalidated nor reopened — by its steps (signoff_steps) or by its columns:
 * either holds the date locked, so removing a step or nulling a column past the triggers never
 * unlocks a date (`signoff verify` names the disagreement). The triggers that refuse changes to a
 * closed date's inputs read it.
 */
export const lockedDates: ViewDefinition = {
  name: 'locked_dates',
  query: `
    select s.id as signoff_id, a.account, s.business_date,
      coalesce(ap.actor, s.approved_by) as approved_by, coalesce(ap.at, s.approved_at) as approved_at
    from signoffs s
    cross join lateral unnest(s.account_set) as a(account)
    left join signoff_steps ap on ap.signoff_id = s.id and ap.kind = 'approved'
    where (ap.id is not null and not exists (select 1 from signoff_steps e where e.signoff_id = s.id and e.kind in ('invalidated', 'reopened')))
      or (s.approved_by is not null and s.invalidated_at is null and s.reopened_at is null)`,
};
