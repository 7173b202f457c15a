import type { Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import { describeCase, SYSTEM_ACTOR } from '../cases/case-model.js';
import { bankAccountNamed } from '../config/index.js';
import type { Database } from '../db/database.types.js';
import { insertCase, insertEvent, listCasesOfAccount, lockAccountCases, updateCase } from '../db/reconciliation-case.repository.js';
import {
  countOverdueOpen,
  countRaisedEntryItemsOpen,
  entryItemKey,
  insertItemEvent,
  listEntryItemsOpenOn,
  listOverdueToRaise,
  listRaisedEntryItems,
  markEntryItemRaised,
  markOverdueRaised,
  type ReconcilingItem,
} from '../db/reconciling-item.repository.js';
import type { ItemOverdueData } from '../notifications/events.js';
import { enqueueEvent } from '../notifications/outbox.js';
import { itemStateOn } from './item-rules.js';
import { describeItem } from './open-item-totals.js';

/**
 * Raises, once per item, what an item open past its expected clearing date calls for: seen on
 * `date` (a reconciled date, or the latest closed date on a worker pass), it gets its
 * `item.overdue` notification in the outbox and joins (or opens) the `overdue_item` case of its
 * account and currency, in the caller's transaction. Items people added are raised by their row;
 * items of unmatched entries (overdue only where the account's `matching:` rule sets
 * `expectedClearDays`) by their entry. An `overdue_item` case whose items all cleared by the date
 * it was last seen on (entries matched since) resolves. Returns how many were raised.
 */
export async function raiseOverdueItems(ctx: AppContext, trx: Transaction<Database>, accounts: readonly string[], date: string): Promise<number> {
  const at = ctx.clock.now();
  let raised = 0;
  for (const item of await listOverdueToRaise(trx, accounts, date)) {
    const id = item.id!;
    await markOverdueRaised(trx, id, date);
    const note = overdueNote(item, date);
    await insertItemEvent(trx, { itemId: id, at, actor: SYSTEM_ACTOR, action: 'overdue', note });
    await enqueueEvent(trx, ctx.config, 'item.overdue', overdueData(item, date), `item.overdue:${id}`, at);
    await openOrJoinCase(trx, item, date, note, at, { item_id: id });
    raised++;
  }
  const banks = accounts.flatMap((account) => {
    const days = bankAccountNamed(ctx.config, account)?.matching?.expectedClearDays;
    return days === undefined ? [] : [{ account, expectedClearDays: days }];
  });
  const due = (await listEntryItemsOpenOn(trx, banks, date)).filter((i) => itemStateOn(i, date) === 'overdue');
  const already = await listRaisedEntryItems(trx, due);
  for (const item of due.filter((i) => !already.has(entryItemKey(i)))) {
    if (!(await markEntryItemRaised(trx, item, date, at))) continue;
    const note = overdueNote(item, date);
    await enqueueEvent(trx, ctx.config, 'item.overdue', overdueData(item, date), `item.overdue:${entryItemKey(item)}`, at);
    await openOrJoinCase(trx, item, date, note, at, item.booksEntryId !== null ? { books_entry_id: item.booksEntryId } : { statement_entry_id: item.statementEntryId });
    raised++;
  }
  await resolveClearedOverdueCases(trx, banks.map((b) => b.account), date, at);
  return raised;
}

function overdueNote(item: ReconcilingItem, date: string): string {
  return `${describeItem(item)} was expected to clear by ${item.expectedClear} and is still open on ${date}.`;
}

function overdueData(item: ReconcilingItem, date: string): ItemOverdueData {
  return {
    itemId: item.id,
    ...(item.id === null ? { booksEntryId: item.booksEntryId, statementEntryId: item.statementEntryId } : {}),
    account: item.account,
    currency: item.currency,
    kind: item.kind,
    amount: { amount: item.amount.toString(), currency: item.currency },
    openedOn: item.openedOn,
    expectedClear: item.expectedClear!,
    businessDate: date,
    note: item.note,
  };
}

async function openOrJoinCase(trx: Transaction<Database>, item: ReconcilingItem, date: string, note: string, at: Date, evidence: Record<string, unknown>): Promise<void> {
  await lockAccountCases(trx, item.account);
  const existing = (await listCasesOfAccount(trx, item.account, { forUpdate: true })).find((c) => c.kind === 'overdue_item' && c.currency === item.currency);
  if (existing === undefined) {
    const c = await insertCase(trx, { account: item.account, currency: item.currency, kind: 'overdue_item', openedOn: date, lastSeenOn: date, latestDifference: item.amount }, at);
    await insertEvent(trx, { caseId: c.id, at, actor: SYSTEM_ACTOR, action: 'opened', fromState: null, toState: 'open', note: `${describeCase(c)} opened on ${date}: ${note}`, evidence });
  } else if (existing.state === 'resolved' || existing.state === 'accepted') {
    await updateCase(trx, existing.id, { state: 'open', resolution: null, resolvedOn: null, acceptedUntil: null, acceptedDifference: null, openedOn: date, lastSeenOn: date, latestDifference: item.amount }, at);
    await insertEvent(trx, { caseId: existing.id, at, actor: SYSTEM_ACTOR, action: 'reopened', fromState: existing.state, toState: 'open', note, evidence });
  } else {
    await updateCase(trx, existing.id, { lastSeenOn: date > existing.lastSeenOn ? date : existing.lastSeenOn, latestDifference: item.amount }, at);
    await insertEvent(trx, { caseId: existing.id, at, actor: SYSTEM_ACTOR, action: 'seen', fromState: existing.state, toState: existing.state, note, evidence });
  }
}

/**
 * Resolves the active `overdue_item` cases of bank accounts whose overdue items are all cleared
 * on `date` (their entries matched by then; items people added cleared), when `date` is not
 * before the case was last seen: reconciling an earlier date again says nothing about today.
 */
async function resolveClearedOverdueCases(trx: Transaction<Database>, accounts: readonly string[], date: string, at: Date): Promise<void> {
  for (const account of accounts) {
    await lockAccountCases(trx, account);
    const cases = (await listCasesOfAccount(trx, account, { forUpdate: true })).filter((c) => c.kind === 'overdue_item' && (c.state === 'open' || c.state === 'acknowledged') && c.currency !== null && date >= c.lastSeenOn);
    for (const c of cases) {
      const currency = c.currency!;
      if ((await countRaisedEntryItemsOpen(trx, account, currency, date)) > 0 || (await countOverdueOpen(trx, account, currency, date)) > 0) continue;
      await updateCase(trx, c.id, { state: 'resolved', resolution: 'auto', resolvedOn: date, acceptedUntil: null, acceptedDifference: null }, at);
      await insertEvent(trx, { caseId: c.id, at, actor: SYSTEM_ACTOR, action: 'auto_resolved', fromState: c.state, toState: 'resolved', note: `${date}: every overdue item of ${account} in ${currency} has cleared (its entries matched): no overdue item is left.` });
    }
  }
}
