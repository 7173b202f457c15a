import type { ReconciliationStatus } from './reconciliation-result.js';

/** The open reconciling items of one account, currency and date, at the comparison scale. */
export interface OpenItems {
  /** Σ of their signed amounts. */
  total: bigint;
  /** How many there are (items may cancel out: open items explain even when they sum to zero). */
  count: number;
  /** How they are named to people: `#3 in_transit EUR 123.45`. */
  description: string;
}

export interface Waterfall {
  status: Extract<ReconciliationStatus, 'matched' | 'explained' | 'break'>;
  itemsTotal: bigint;
  /** Gateway or bank balance − books − items total: what no item explains. */
  unexplained: bigint;
}

/**
 * The waterfall of one compared balance: books + open items + unexplained = gateway or bank
 * balance. Within tolerance the date is `matched` without items, `explained` with them; beyond
 * it, a `break` of the unexplained part. Example: a difference of 12345 with an in-transit item
 * of 12345 is explained with nothing unexplained.
 */
export function waterfallOf(difference: bigint, items: Pick<OpenItems, 'total' | 'count'>, tolerance: bigint): Waterfall {
  const unexplained = difference - items.total;
  const within = unexplained >= -tolerance && unexplained <= tolerance;
  const status = !within ? 'break' : items.count > 0 ? 'explained' : 'matched';
  return { status, itemsTotal: items.total, unexplained };
}
