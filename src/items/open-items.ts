import type { Transaction } from 'kysely';
import type { Database } from '../db/database.types.js';
import type { BankAccountConfig } from '../config/index.js';
import { listEntryItemsOpenOn, listItemsOpenOn, type ReconcilingItem } from '../db/reconciling-item.repository.js';
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

/** The reconciling items of one account open on a date: those people added and, for a bank account, those of its unmatched entries. */
export async function listOpenItems(trx: Transaction<Database>, account: string, date: string, bank?: Pick<BankAccountConfig, 'matching'>): Promise<ReconcilingItem[]> {
  const stored = await listItemsOpenOn(trx, [account], date);
  if (bank === undefined) return stored;
  return [...(await listEntryItemsOpenOn(trx, [{ account, expectedClearDays: bank.matching?.expectedClearDays }], date)), ...stored];
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
