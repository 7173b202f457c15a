import type { Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import { describeCase, SYSTEM_ACTOR } from '../cases/case-model.js';
import type { Database } from '../db/database.types.js';
import { insertCase, insertEvent, listCasesOfAccount, lockAccountCases, updateCase } from '../db/reconciliation-case.repository.js';
import { insertItemEvent, listOverdueToRaise, markOverdueRaised } from '../db/reconciling-item.repository.js';
import type { ItemOverdueData } from '../notifications/events.js';
import { enqueueEvent } from '../notifications/outbox.js';
import { describeItem } from './open-items.js';

/**
 * Raises, once per item, what an item open past its expected clearing date calls for: seen on
 * `date` (a reconciled date, or the latest closed date on a worker pass), it gets its
 * `item.overdue` notification in the outbox and joins (or opens) the `overdue_item` case of its
 * account and currency, in the caller's transaction. Returns how many were raised.
 */
export async function raiseOverdueItems(ctx: AppContext, trx: Transaction<Database>, accounts: readonly string[], date: string): Promise<number> {
  const due = await listOverdueToRaise(trx, accounts, date);
  const at = ctx.clock.now();
  for (const item of due) {
    const id = item.id!;
    await markOverdueRaised(trx, id, date);
    const note = `${describeItem(item)} was expected to clear by ${item.expectedClear} and is still open on ${date}.`;
    await insertItemEvent(trx, { itemId: id, at, actor: SYSTEM_ACTOR, action: 'overdue', note });
    const data: ItemOverdueData = {
      itemId: id,
      account: item.account,
      currency: item.currency,
      kind: item.kind,
      amount: { amount: item.amount.toString(), currency: item.currency },
      openedOn: item.openedOn,
      expectedClear: item.expectedClear!,
      businessDate: date,
      note: item.note,
    };
    await enqueueEvent(trx, ctx.config, 'item.overdue', data, `item.overdue:${id}`, at);
    await lockAccountCases(trx, item.account);
    const existing = (await listCasesOfAccount(trx, item.account, { forUpdate: true })).find((c) => c.kind === 'overdue_item' && c.currency === item.currency);
    if (existing === undefined) {
      const c = await insertCase(trx, { account: item.account, currency: item.currency, kind: 'overdue_item', openedOn: date, lastSeenOn: date, latestDifference: item.amount }, at);
      await insertEvent(trx, { caseId: c.id, at, actor: SYSTEM_ACTOR, action: 'opened', fromState: null, toState: 'open', note: `${describeCase(c)} opened on ${date}: ${note}`, evidence: { item_id: id } });
    } else if (existing.state === 'resolved' || existing.state === 'accepted') {
      await updateCase(trx, existing.id, { state: 'open', resolution: null, resolvedOn: null, acceptedUntil: null, acceptedDifference: null, openedOn: date, lastSeenOn: date, latestDifference: item.amount }, at);
      await insertEvent(trx, { caseId: existing.id, at, actor: SYSTEM_ACTOR, action: 'reopened', fromState: existing.state, toState: 'open', note, evidence: { item_id: id } });
    } else {
      await updateCase(trx, existing.id, { lastSeenOn: date > existing.lastSeenOn ? date : existing.lastSeenOn, latestDifference: item.amount }, at);
      await insertEvent(trx, { caseId: existing.id, at, actor: SYSTEM_ACTOR, action: 'seen', fromState: existing.state, toState: existing.state, note, evidence: { item_id: id } });
    }
  }
  return due.length;
}
