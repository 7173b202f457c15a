import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import { insertAudit } from '../db/console.repository.js';
import type { Database } from '../db/database.types.js';
import { listLiveSignoffs, loadSignoffInputs, markSignoffInvalidated, type Signoff } from '../db/signoff.repository.js';
import type { SignoffInvalidatedData } from '../notifications/events.js';
import { enqueueEvent } from '../notifications/outbox.js';
import { describeInputChanges } from './sealed-inputs.js';
import { signInvalidation } from './signing.js';

export interface InvalidatedSignoff {
  signoff: Signoff;
  changes: string[];
}

/**
 * Marks "changed after sign-off" each prepared (not yet approved) sign-off (of `dates`, or all) whose recorded inputs
 * or sealed results differ from the date's now, and queues its one `signoff.invalidated` event, in
 * the caller's transaction: the change and its consequence commit together, whoever made it.
 * A sign-off already invalidated by someone else is skipped (its event exists once).
 */
export async function invalidateChangedSignoffs(ctx: AppContext, trx: Kysely<Database> | Transaction<Database>, dates?: readonly string[]): Promise<InvalidatedSignoff[]> {
  const invalidated: InvalidatedSignoff[] = [];
  // An approved sign-off is not invalidated: its date is locked, so its inputs cannot change
  // until an approver reopens it (src/signoff/reopen.ts).
  for (const signoff of (await listLiveSignoffs(trx, dates)).filter((s) => s.approvedBy === null)) {
    const changes = describeInputChanges(signoff.inputs, await loadSignoffInputs(trx, signoff.accountSet, signoff.businessDate, ctx.config.tolerance));
    if (changes.length === 0) continue;
    const at = ctx.clock.now();
    if (!(await markSignoffInvalidated(trx, signoff.id, changes, at))) continue;
    await signInvalidation(ctx, trx, signoff.id);
    const data: SignoffInvalidatedData = { signoffId: signoff.id, businessDate: signoff.businessDate, accounts: signoff.accountSet, preparedBy: signoff.preparedBy, approvedBy: signoff.approvedBy, changes };
    await enqueueEvent(trx, ctx.config, 'signoff.invalidated', data, `signoff.invalidated:${signoff.id}`, at);
    await insertAudit(trx, { at, userName: null, address: null, action: 'signoff.invalidated', target: signoff.businessDate, outcome: 'ok', detail: { signoff: signoff.id, changes } });
    ctx.logger.warn({ signoff: signoff.id, businessDate: signoff.businessDate, changes }, 'a signed business date changed after sign-off: it must be signed again');
    invalidated.push({ signoff: { ...signoff, invalidatedAt: at, invalidation: changes }, changes });
  }
  return invalidated;
}
