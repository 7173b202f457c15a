import type { ViewDefinition } from './view-definition.js';

/**
 * How did a balance move from one captured date to the next? Each authoritative day's balances
 * beside those of the account's previous date with a succeeded run (`previous_business_date`):
 * `previous_balance` (null when the currency was absent then) and `movement`, converted to the
 * later scale when the two differ; major-unit columns beside them.
 *
 * Each per-date lookup is a LATERAL subquery keyed by (account, business date), so a date or
 * account filter on the view reaches the base tables: a one-date read costs the day, not history.
 */
export const balanceHistory: ViewDefinition = {
  name: 'balance_history',
  query: `
    select a.account, a.business_date, s.currency, s.balance,
      p.balance as previous_balance,
      pd.business_date as previous_business_date,
      case when s.scale is null or p.scale is null or s.scale = p.scale then s.balance - p.balance
        when s.scale > p.scale then s.balance - p.balance * round(10::numeric ^ (s.scale - p.scale))
        else round(s.balance - p.balance / round(10::numeric ^ (p.scale - s.scale)), p.scale - s.scale) end as movement,
      s.run_id,
      s.scale,
      round(s.balance / 10::numeric ^ s.scale, s.scale) as balance_major,
      round(p.balance / 10::numeric ^ p.scale, p.scale) as previous_balance_major,
      round(s.balance / 10::numeric ^ s.scale, s.scale) - round(p.balance / 10::numeric ^ p.scale, p.scale) as movement_major
    from authoritative_runs a
    left join lateral (
      select y.business_date from snapshot_runs y
      where y.account = a.account and y.business_date < a.business_date and y.status = 'succeeded'
      order by y.business_date desc limit 1
    ) pd on true
    left join lateral (
      -- limit 1 (the view yields one run per date anyway) keeps the subquery a parameterized
      -- lookup: pulled up into a plain join, the view would be computed over all history.
      select x.run_id from authoritative_runs x where x.account = a.account and x.business_date = pd.business_date limit 1
    ) pa on true
    join balance_snapshots s on s.run_id = a.run_id
    left join balance_snapshots p on p.run_id = pa.run_id and p.currency = s.currency`,
};
