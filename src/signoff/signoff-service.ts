import type { AppContext } from '../app-context.js';
import { allAccountNames } from '../config/index.js';
import { findUserByName, insertAudit } from '../db/console.repository.js';
import { findSignoff, insertSignoff, listBlockingCases, listSignoffsOfDate, loadSignoffInputs, markSignoffApproved, type Signoff } from '../db/signoff.repository.js';
import { DateNotSettledError, ReconError, SignoffInputsChangedError } from '../errors.js';
import { lockAccountDates } from '../db/date-lock.repository.js';
import { describeInputChanges } from './sealed-inputs.js';
import { renderHtml } from '../reports/render-html.js';
import { loadCurrencyHistories, loadReport } from '../reports/report-data.js';
import { loadReportFacts } from '../reports/report-facts.js';
import { parseBusinessDate, todayOf } from '../reconciliation/business-dates.js';
import type { ConsoleUser } from '../db/console.repository.js';
import { mayApprove, mayPrepare } from '../console/roles.js';
import { invalidateChangedSignoffs, type InvalidatedSignoff } from './invalidate.js';
import { describeUnsettled, findUnsettledAccounts } from './settle-check.js';
import type { SignoffInputs } from './sealed-inputs.js';
import { sealOf } from './seal.js';
import { signStep } from './signing.js';

export { describeInputChanges } from './sealed-inputs.js';

/** A sign-off the rules refuse (wrong role, the preparer approving, open cases): nothing changed. */
export class SignoffRefusedError extends ReconError {
  override readonly code = 'E_SIGNOFF_REFUSED';
  override readonly exitCode = 1;
}

export type { Signoff, SignoffInputs };

/** Where a business date stands: not signed, prepared (waiting for approval), approved (locked), changed after sign-off, or reopened. */
export interface SignoffState {
  state: 'not signed' | 'prepared' | 'approved' | 'changed after sign-off' | 'reopened';
  /** The live sign-off, or the latest ended one when the date is "changed after sign-off" or "reopened". */
  current: Signoff | undefined;
  history: Signoff[];
}

const accountsOf = (ctx: AppContext) => allAccountNames(ctx.config);

export async function signoffStateOf(ctx: AppContext, businessDate: string): Promise<SignoffState> {
  const history = await listSignoffsOfDate(ctx.database.db, businessDate);
  const live = history.find((s) => s.invalidatedAt === null && s.reopenedAt === null);
  if (live !== undefined) return { state: live.approvedBy === null ? 'prepared' : 'approved', current: live, history };
  if (history.length > 0) return { state: history[0]!.reopenedAt !== null ? 'reopened' : 'changed after sign-off', current: history[0], history };
  return { state: 'not signed', current: undefined, history };
}

/** The sealed report of a date: the same HTML `wallet-recon report --format html` writes, naming its preparer and the time. */
async function renderSealedReport(ctx: AppContext, accounts: readonly string[], businessDate: string, preparer: { name: string; at: Date }): Promise<string> {
  const db = ctx.database.db;
  const range = { from: businessDate, to: businessDate };
  const report = await loadReport(db, range, { accounts: [...accounts], today: todayOf(ctx).date, bankAccounts: ctx.config.bankAccounts.map((b) => b.name) });
  const facts = await loadReportFacts(db, report.results, ctx.config, preparer.at);
  return renderHtml(report, await loadCurrencyHistories(db, range), preparer.at, { ...facts, preparer });
}

/**
 * The maker's step: refuses when the user's role cannot prepare, when the date already has a
 * standing sign-off, when nothing was reconciled, while any account of the date is not settled
 * (DateNotSettledError: owed, awaiting books, inside its capture window), or while any of the
 * date's cases is open or acknowledged without a note. Stores the sealed report and its inputs.
 */
export async function prepareSignoff(ctx: AppContext, user: Pick<ConsoleUser, 'name' | 'role'>, businessDate: string, address: string | null): Promise<Signoff> {
  const db = ctx.database.db;
  const accounts = accountsOf(ctx);
  const at = ctx.clock.now();
  const audit = (message: string) => insertAudit(db, { at, userName: user.name, address, action: 'signoff.prepare', target: businessDate, outcome: 'refused', detail: { reason: message } });
  const refuse = async (message: string): Promise<never> => {
    await audit(message);
    throw new SignoffRefusedError(message);
  };
  if (!mayPrepare(user.role)) return refuse(`"${user.name}" has the ${user.role} role: only a preparer or an admin can prepare a sign-off.`);
  const { state, current } = await signoffStateOf(ctx, businessDate);
  if (state === 'prepared' || state === 'approved') return refuse(`${businessDate} is already ${state} (sign-off #${current!.id} by ${current!.preparedBy}): nothing to prepare.`);
  const unsettled = await findUnsettledAccounts(ctx, accounts, businessDate);
  if (unsettled.length > 0) {
    const message = describeUnsettled(businessDate, unsettled);
    await audit(message);
    throw new DateNotSettledError(message);
  }
  const results = await db.selectFrom('reconciliation_results').select(db.fn.countAll<string>().as('n')).where('business_date', '=', businessDate).where('account', 'in', accounts).executeTakeFirstOrThrow();
  if (Number(results.n) === 0) return refuse(`${businessDate} has not been reconciled: there is nothing to sign. Run "wallet-recon reconcile --date ${businessDate}" first.`);
  const blocking = await listBlockingCases(db, accounts, businessDate);
  if (blocking.length > 0) {
    const open = blocking.filter((c) => c.why === 'open');
    const silent = blocking.filter((c) => c.why !== 'open');
    const name = (c: (typeof blocking)[number]) => `#${c.id} ${c.account} ${c.currency ?? ''} ${c.kind}`.replace('  ', ' ');
    const parts = [
      open.length === 0 ? '' : `${open.length === 1 ? 'a case is' : `${open.length} cases are`} open: ${open.map(name).join(', ')}`,
      silent.length === 0 ? '' : `${silent.length === 1 ? 'a case was' : `${silent.length} cases were`} acknowledged without a note: ${silent.map(name).join(', ')}`,
    ].filter(Boolean);
    return refuse(`${businessDate} cannot be signed while ${parts.join('; ')}. Acknowledge each with a note (cases ack ID --note TEXT), accept it or resolve it first.`);
  }
  const inputs = await loadSignoffInputs(db, accounts, businessDate, ctx.config.tolerance);
  const html = await renderSealedReport(ctx, accounts, businessDate, { name: user.name, at });
  const sha256 = sealOf(html);
  return db.transaction().execute(async (trx) => {
    let signoff: Signoff;
    try {
      signoff = await insertSignoff(trx, { accountSet: accounts, businessDate, preparedBy: user.name, preparedAt: at, reportSha256: sha256, reportHtml: html, inputs });
    } catch (error) {
      // signoffs_one_live: someone prepared the same date a moment before.
      if ((error as { code?: string }).code === '23505') throw new SignoffRefusedError(`${businessDate} was prepared by someone else a moment ago: reload to see it.`, { cause: error });
      throw error;
    }
    await signStep(ctx, trx, signoff.id, 'prepare', signoff.hashes.seal);
    await insertAudit(trx, { at, userName: user.name, address, action: 'signoff.prepare', target: businessDate, outcome: 'ok', detail: { signoff: signoff.id, report_sha256: sha256 } });
    return signoff;
  });
}

/** The checker's step: an approver or admin who did not prepare it approves a prepared sign-off; the date is then locked. */
export async function approveSignoff(ctx: AppContext, user: Pick<ConsoleUser, 'id' | 'name' | 'role'>, businessDate: string, address: string | null): Promise<Signoff> {
  const db = ctx.database.db;
  const at = ctx.clock.now();
  const refuse = async (message: string): Promise<never> => {
    await insertAudit(db, { at, userName: user.name, address, action: 'signoff.approve', target: businessDate, outcome: 'refused', detail: { reason: message } });
    throw new SignoffRefusedError(message);
  };
  await detectSignoffChanges(ctx);
  const { state, current } = await signoffStateOf(ctx, businessDate);
  if (state === 'changed after sign-off') {
    // The inputs changed since it was prepared (a write that took the inputs lock first): the same refusal as below.
    const message = `${businessDate} changed since sign-off #${current!.id} was prepared: ${(current!.invalidation ?? []).join('; ') || 'its inputs changed'}. Nothing was approved: it must be prepared again.`;
    await insertAudit(db, { at, userName: user.name, address, action: 'signoff.approve', target: businessDate, outcome: 'refused', detail: { reason: message } });
    throw new SignoffInputsChangedError(message);
  }
  if (state !== 'prepared') {
    return refuse(
      state === 'approved'
        ? `${businessDate} is already approved (by ${current!.approvedBy}).`
        : state === 'reopened'
          ? `${businessDate} was reopened: it must be prepared again before it can be approved.`
          : `${businessDate} has not been prepared: a preparer signs it first ("Prepare sign-off").`,
    );
  }
  // Maker-checker by user id: the sign-off names its preparer, and names are bound to one login each.
  const preparerId = (await findUserByName(db, current!.preparedBy))?.id;
  if (preparerId === undefined ? current!.preparedBy === user.name : preparerId === user.id) return refuse(`"${user.name}" prepared this sign-off and cannot also approve it: another person with the approver role must approve it.`);
  if (!mayApprove(user.role)) return refuse(`"${user.name}" has the ${user.role} role: only an approver or an admin can approve a sign-off.`);
  const signoff = current!;
  try {
    return await db.transaction().execute(async (trx) => {
      // The date's inputs lock, held until commit: a write waiting on it sees the approval and is
      // refused; a write that held it first has committed, and is seen by the checks below.
      await lockAccountDates(trx, signoff.accountSet.map((account) => ({ account, businessDate })));
      const unsettled = await findUnsettledAccounts(ctx, signoff.accountSet, businessDate, trx);
      if (unsettled.length > 0) throw new DateNotSettledError(describeUnsettled(businessDate, unsettled).replace('cannot be signed yet', 'cannot be approved'));
      const changes = describeInputChanges(signoff.inputs, await loadSignoffInputs(trx, signoff.accountSet, businessDate, ctx.config.tolerance));
      if (changes.length > 0) {
        throw new SignoffInputsChangedError(`${businessDate} changed since sign-off #${signoff.id} was prepared: ${changes.join('; ')}. Nothing was approved: it must be prepared again.`);
      }
      if (!(await markSignoffApproved(trx, signoff.id, user.name, at))) throw new SignoffRefusedError(`Sign-off #${signoff.id} of ${businessDate} changed meanwhile: reload and look again.`);
      const approved = (await findSignoff(trx, signoff.id))!;
      await signStep(ctx, trx, approved.id, 'approve', approved.hashes.approval);
      await insertAudit(trx, { at, userName: user.name, address, action: 'signoff.approve', target: businessDate, outcome: 'ok', detail: { signoff: signoff.id } });
      return approved;
    });
  } catch (error) {
    if (error instanceof DateNotSettledError || error instanceof SignoffInputsChangedError) {
      await insertAudit(db, { at, userName: user.name, address, action: 'signoff.approve', target: businessDate, outcome: 'refused', detail: { reason: error.message } });
    }
    throw error;
  }
}

/**
 * Compares every prepared sign-off with its date's inputs now; each one whose inputs changed is
 * marked "changed after sign-off" with one `signoff.invalidated` event. The reconcile that changes
 * results does this in its own transaction; this catches what changes without a reconcile (a
 * case reopened). Cheap when nothing is signed. Returns the sign-offs it invalidated.
 */
export async function detectSignoffChanges(ctx: AppContext): Promise<InvalidatedSignoff[]> {
  return ctx.database.db.transaction().execute((trx) => invalidateChangedSignoffs(ctx, trx));
}

/** Refuses a date given on the command line or a form that is not a real date (the CLI's own check). */
export function requireDate(value: string | undefined, what: string): string {
  return parseBusinessDate(value ?? '', what);
}
