import type { ViewDefinition } from './view-definition.js';

/**
 * Which results did not match? Every stored reconciliation result whose status is neither `matched`
 * nor `explained` (a difference open reconciling items account for), with its amounts in minor units, the `source` it was compared with (gateway or bank) and each
 * amount in major units as `<column>_major`; `items_total` is the reconciling items open on the date
 * and `unexplained` what they leave (gateway or bank − books − items_total): a break's real amount.
 */
export const reconciliationBreaks: ViewDefinition = {
  name: 'reconciliation_breaks',
  query: `
    select account, business_date, currency, status, gateway_balance, single_balance, expected_balance, difference, movement, run_id, computed_at, source,
      scale,
      round(gateway_balance / 10::numeric ^ scale, scale) as gateway_balance_major,
      round(single_balance / 10::numeric ^ scale, scale) as single_balance_major,
      round(expected_balance / 10::numeric ^ scale, scale) as expected_balance_major,
      round(difference / 10::numeric ^ scale, scale) as difference_major,
      round(movement / 10::numeric ^ scale, scale) as movement_major,
      items_total, unexplained,
      round(items_total / 10::numeric ^ scale, scale) as items_total_major,
      round(unexplained / 10::numeric ^ scale, scale) as unexplained_major
    from reconciliation_results
    where status not in ('matched', 'explained')`,
};
