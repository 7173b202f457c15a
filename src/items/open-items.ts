import type { Transaction } from 'kysely';
import type { Database } from '../db/database.types.js';
import { listItemsOpenOn, type ReconcilingItem } from '../db/reconciling-item.repository.js';
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

/** The reconciling items of one account open on a date (stored ones; those of unmatched entries join them once entries are matched). */
export async function listOpenItems(trx: Transaction<Database>, account: string, date: string): Promise<ReconcilingItem[]> {
  return listItemsOpenOn(trx, [account], date);
}

/** Open items totalled per currency at the scale the date is compared in (`toComparison` brings an amount there). */
export function totalOpenItems(items: readonly ReconcilingItem[], toComparison: (currency: string, amount: bigint, scale: number) => bigint): Map<string, OpenItems> {
  const byCurrency = new Map<string, OpenItems>();
  for (const item of items) {
    const seen = byCurrency.get(item.currency) ?? { total: 0n, count: 0, description: '' };
    byCurrency.set(item.currency, {
      total: seen.total + toComparison(item.currency, item.amount, item.scale),
      count: seen.count + 1,
      description: seen.count === 0 ? `item ${describeItem(item)}` : `${seen.description.replace(/^item /, 'items ')}, ${describeItem(item)}`,
    });
  }
  return byCurrency;
}
