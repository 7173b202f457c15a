import type { Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import type { Database } from '../db/database.types.js';
import { isCalendarDate } from '../clock.js';
import { businessCalendarOf } from '../config/index.js';
import { findCase, insertEvent, lockAccountCases } from '../db/reconciliation-case.repository.js';
import { UsageError } from '../errors.js';
import { describeCase, type ReconciliationCase } from './case-model.js';

export interface SnoozeRequest {
  caseId: number;
  /** The last business date the snooze covers (inclusive). */
  until: string | undefined;
  note: string | undefined;
  actor: string;
  /** More writes that belong with the snooze (the console's audit row), in its transaction: both or neither. */
  alsoInTransaction?: (trx: Transaction<Database>) => Promise<void>;
}

/**
 * Snoozes an active case until a business date (inclusive), with a note: its problem is not
 * announced again while it repeats, unless it changes materially (RECON_RENOTIFY_CHANGE). The
 * case's state is untouched (it still blocks sign-off as its state says); the snooze ends by
 * itself after its date. Audited as a case event (`noted`, "snoozed until …: note"), in one
 * transaction; a snooze given again replaces the earlier one.
 */
export async function snoozeCase(ctx: AppContext, request: SnoozeRequest): Promise<{ case: ReconciliationCase; until: string }> {
  const note = request.note?.trim() || undefined;
  if (note === undefined) throw new UsageError('cases snooze needs --note TEXT saying why the case may stay quiet; an empty note is not accepted.');
  const today = businessCalendarOf(ctx.config).businessDateOf(ctx.clock.now());
  if (request.until === undefined) throw new UsageError(`cases snooze needs --until DATE: the last business date the snooze covers, YYYY-MM-DD (for example ${today}).`);
  if (!isCalendarDate(request.until)) throw new UsageError(`--until ${JSON.stringify(request.until)} is not a real date: use YYYY-MM-DD, for example ${today}.`);
  if (request.until < today) throw new UsageError(`--until ${request.until} is already past (the current business date is ${today} in ${ctx.config.timezone}): give that date or a later one.`);
  const until = request.until;
  const at = ctx.clock.now();
  return ctx.database.db.transaction().execute(async (trx) => {
    const found = await findCase(trx, request.caseId);
    if (found !== undefined) await lockAccountCases(trx, found.account);
    const c = found && (await findCase(trx, request.caseId, { forUpdate: true }));
    if (c === undefined) throw new UsageError(`There is no case #${request.caseId}. Run "wallet-recon cases --state active" to list the cases that need attention.`);
    if (c.state !== 'open' && c.state !== 'acknowledged') throw new UsageError(`Case ${describeCase(c)} is ${c.state}: only an open or acknowledged case can be snoozed. Nothing was changed.`);
    const row = { case_id: c.id, until_date: until, note, snoozed_by: request.actor, snoozed_at: at };
    await trx.insertInto('case_snoozes').values(row).onConflict((oc) => oc.column('case_id').doUpdateSet(row)).execute();
    await insertEvent(trx, { caseId: c.id, at, actor: request.actor, action: 'noted', fromState: c.state, toState: c.state, note: `snoozed until ${until}: ${note}` });
    await request.alsoInTransaction?.(trx);
    return { case: c, until };
  });
}
