import type { Transaction } from 'kysely';
import type { Database } from '../db/database.types.js';
import type { BankAccountConfig } from '../config/index.js';
import { listEntryItemsOpenOn, listItemsOpenOn, type ReconcilingItem } from '../db/reconciling-item.repository.js';

/** The reconciling items of one account open on a date: those people added and, for a bank account, those of its unmatched entries. */
export async function listOpenItems(trx: Transaction<Database>, account: string, date: string, bank?: Pick<BankAccountConfig, 'matching'>): Promise<ReconcilingItem[]> {
  const stored = await listItemsOpenOn(trx, [account], date);
  if (bank === undefined) return stored;
  return [...(await listEntryItemsOpenOn(trx, [{ account, expectedClearDays: bank.matching?.expectedClearDays }], date)), ...stored];
}
