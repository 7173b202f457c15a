import type { ViewDefinition } from './view-definition.js';

/**
 * Which account-dates are closed by an approved sign-off? One row per account of every approved
 * sign-off that was neither invalidated nor reopened: the triggers that refuse changes to a
 * closed date's inputs read it.
 */
export const lockedDates: ViewDefinition = {
  name: 'locked_dates',
  query: `
    select s.id as signoff_id, a.account, s.business_date, s.approved_by, s.approved_at
    from signoffs s cross join lateral unnest(s.account_set) as a(account)
    where s.approved_by is not null and s.invalidated_at is null and s.reopened_at is null`,
};
