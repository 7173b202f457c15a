import type { ReconcilingItem } from '../db/reconciling-item.repository.js';
import { formatMoney } from '../money/format-amount.js';
import type { OpenItems } from '../reconciliation/waterfall.js';

/** How an item is named to people: `#3 in_transit EUR 123.45`, or `outstanding (books entry 17) EUR 500.00`. */
export function describeItem(item: Pick<ReconcilingItem, 'id' | 'kind' | 'currency' | 'amount' | 'scale' | 'booksEntryId' | 'statementEntryId'>): string {
  const name =
    item.id !== null
      ? `#${item.id} ${item.kind}`
      : item.booksEntryId !== null
        ? `${item.kind} (books entry ${item.booksEntryId})`
        : `${item.kind} (statement entry ${item.statementEntryId})`;
  return `${name} ${formatMoney(item.amount, item.currency, item.scale)}`;
}

/**
 * Open items totalled per currency (in the order the currencies first appear) at the scale the
 * date is compared in (`toComparison` brings an amount there), and named: `item #3 in_transit
 * EUR 123.45`, or `items …, …` for more than one.
 */
export function totalOpenItems(items: readonly ReconcilingItem[], toComparison: (currency: string, amount: bigint, scale: number) => bigint): Map<string, OpenItems> {
  const byCurrency = new Map<string, OpenItems>();
  for (const currency of new Set(items.map((i) => i.currency))) {
    const own = items.filter((i) => i.currency === currency);
    byCurrency.set(currency, {
      total: own.reduce((sum, i) => sum + toComparison(currency, i.amount, i.scale), 0n),
      count: own.length,
      description: `${own.length === 1 ? 'item' : 'items'} ${own.map(describeItem).join(', ')}`,
    });
  }
  return byCurrency;
}
