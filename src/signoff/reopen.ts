import type { AppContext } from '../app-context.js';
import { insertAudit, type ConsoleUser } from '../db/console.repository.js';
import { findSignoff, markSignoffReopened, type Signoff } from '../db/signoff.repository.js';
import type { SignoffReopenedData } from '../notifications/events.js';
import { enqueueEvent } from '../notifications/outbox.js';
import { mayApprove } from '../console/roles.js';
import { signoffStateOf, SignoffRefusedError } from './signoff-service.js';
import { signStep } from './signing.js';
import { lockAccountDates } from '../db/date-lock.repository.js';

/**
 * Unlocks an approved date under control: an approver or admin gives the reason, and in one
 * transaction the sign-off records who, when and why, the reopening is signed (with a key), and
 * one `signoff.reopened` event is queued. The reopened sign-off stays in the date's history; the
 * date then needs a fresh prepare and approve.
 */
export async function reopenSignoff(ctx: AppContext, user: Pick<ConsoleUser, 'name' | 'role'>, businessDate: string, note: string | undefined, address: string | null): Promise<Signoff> {
  const db = ctx.database.db;
  const at = ctx.clock.now();
  const refuse = async (message: string): Promise<never> => {
    await insertAudit(db, { at, userName: user.name, address, action: 'signoff.reopen', target: businessDate, outcome: 'refused', detail: { reason: message } });
    throw new SignoffRefusedError(message);
  };
  if (!mayApprove(user.role)) return refuse(`"${user.name}" has the ${user.role} role: only an approver or an admin can reopen a sign-off.`);
  const reason = note?.trim() ?? '';
  if (reason === '') return refuse(`Reopening ${businessDate} needs a note saying why the closed day must change (--note TEXT).`);
  const { state, current } = await signoffStateOf(ctx, businessDate);
  if (state !== 'approved') return refuse(`${businessDate} is ${state}: only an approved sign-off can be reopened.`);
  const signoff = current!;
  return db.transaction().execute(async (trx) => {
    await lockAccountDates(trx, signoff.accountSet.map((account) => ({ account, businessDate })));
    if (!(await markSignoffReopened(trx, signoff.id, user.name, at, reason))) throw new SignoffRefusedError(`Sign-off #${signoff.id} of ${businessDate} changed meanwhile: reload and look again.`);
    const reopened = (await findSignoff(trx, signoff.id))!;
    await signStep(ctx, trx, reopened.id, 'reopen', reopened.hashes.reopen);
    const data: SignoffReopenedData = {
      signoffId: signoff.id,
      businessDate,
      accounts: signoff.accountSet,
      preparedBy: signoff.preparedBy,
      approvedBy: signoff.approvedBy!,
      reopenedBy: user.name,
      reopenedAt: at.toISOString(),
      note: reason,
    };
    await enqueueEvent(trx, ctx.config, 'signoff.reopened', data, `signoff.reopened:${signoff.id}`, at);
    await insertAudit(trx, { at, userName: user.name, address, action: 'signoff.reopen', target: businessDate, outcome: 'ok', detail: { signoff: signoff.id, note: reason } });
    ctx.logger.info({ signoff: signoff.id, businessDate, reopenedBy: user.name }, 'a signed-off business date was reopened: it is unlocked and must be signed again');
    return reopened;
  });
}
