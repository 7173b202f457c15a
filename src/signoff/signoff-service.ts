import { createHash } from 'node:crypto';
import { allAccountNames } from '../config/index.js';
import type { AppContext } from '../app-context.js';
import { findUserByName, insertAudit } from '../db/console.repository.js';
import {
  findSignoff,
  insertSignoff,
  listLiveSignoffs,
  listSignoffsOfDate,
  loadSignoffInputs,
  markSignoffApproved,
  markSignoffInvalidated,
  type Signoff,
  type SignoffInputs,
} from '../db/signoff.repository.js';
import { ReconError } from '../errors.js';
import type { SignoffInvalidatedData } from '../notifications/events.js';
import { enqueueEvent } from '../notifications/outbox.js';
import { renderHtml } from '../reports/render-html.js';
import { loadCurrencyHistories, loadReport } from '../reports/report-data.js';
import { loadReportFacts } from '../reports/report-facts.js';
import { parseBusinessDate, todayOf } from '../reconciliation/business-dates.js';
import type { ConsoleUser } from '../db/console.repository.js';
import { mayApprove, mayPrepare } from '../console/roles.js';

/** A sign-off the rules refuse (wrong role, the preparer approving, open cases): nothing changed. */
export class SignoffRefusedError extends ReconError {
  override readonly code = 'E_SIGNOFF_REFUSED';
  override readonly exitCode = 1;
}

export type { Signoff, SignoffInputs };

/** Where a business date stands: not signed, prepared (waiting for approval), approved, or changed after sign-off. */
export interface SignoffState {
  state: 'not signed' | 'prepared' | 'approved' | 'changed after sign-off';
  /** The live sign-off, or the latest invalidated one when the state is "changed after sign-off". */
  current: Signoff | undefined;
  history: Signoff[];
}

const accountsOf = (ctx: AppContext) => allAccountNames(ctx.config);

export async function signoffStateOf(ctx: AppContext, businessDate: string): Promise<SignoffState> {
  const history = await listSignoffsOfDate(ctx.database.db, businessDate);
  const live = history.find((s) => s.invalidatedAt === null);
  if (live !== undefined) return { state: live.approvedBy === null ? 'prepared' : 'approved', current: live, history };
  if (history.length > 0) return { state: 'changed after sign-off', current: history[0], history };
  return { state: 'not signed', current: undefined, history };
}

/** The sealed report of a date: the same HTML `wallet-recon report --format html` writes. */
async function renderSealedReport(ctx: AppContext, accounts: readonly string[], businessDate: string, now: Date): Promise<string> {
  const db = ctx.database.db;
  const range = { from: businessDate, to: businessDate };
  const report = await loadReport(db, range, { accounts: [...accounts], today: todayOf(ctx).date, bankAccounts: ctx.config.bankAccounts.map((b) => b.name) });
  return renderHtml(report, await loadCurrencyHistories(db, range), now, await loadReportFacts(db, report.results, ctx.config, now));
}

/**
 * The maker's step: refuses when the user's role cannot prepare, when the date already has a
 * standing sign-off, when nothing was reconciled, or while any of the date's cases is open.
 * Stores the sealed report and the inputs it was made from.
 */
export async function prepareSignoff(ctx: AppContext, user: Pick<ConsoleUser, 'name' | 'role'>, businessDate: string, address: string | null): Promise<Signoff> {
  const db = ctx.database.db;
  const accounts = accountsOf(ctx);
  const at = ctx.clock.now();
  const refuse = async (message: string): Promise<never> => {
    await insertAudit(db, { at, userName: user.name, address, action: 'signoff.prepare', target: businessDate, outcome: 'refused', detail: { reason: message } });
    throw new SignoffRefusedError(message);
  };
  if (!mayPrepare(user.role)) return refuse(`"${user.name}" has the ${user.role} role: only a preparer or an admin can prepare a sign-off.`);
  const { state, current } = await signoffStateOf(ctx, businessDate);
  if (state === 'prepared' || state === 'approved') return refuse(`${businessDate} is already ${state} (sign-off #${current!.id} by ${current!.preparedBy}): nothing to prepare.`);
  const results = await db.selectFrom('reconciliation_results').select(db.fn.countAll<string>().as('n')).where('business_date', '=', businessDate).where('account', 'in', accounts).executeTakeFirstOrThrow();
  if (Number(results.n) === 0) return refuse(`${businessDate} has not been reconciled: there is nothing to sign. Run "wallet-recon reconcile --date ${businessDate}" first.`);
  const open = await db
    .selectFrom('case_occurrences as o')
    .innerJoin('reconciliation_cases as c', 'c.id', 'o.case_id')
    .select(['c.id', 'c.account', 'c.currency', 'c.kind'])
    .where('o.business_date', '=', businessDate)
    .where('c.account', 'in', accounts)
    .where('c.state', '=', 'open')
    .orderBy('c.id')
    .execute();
  if (open.length > 0) {
    return refuse(
      `${businessDate} cannot be signed while ${open.length === 1 ? 'a case is' : `${open.length} cases are`} open: ${open.map((c) => `#${c.id} ${c.account} ${c.currency ?? ''} ${c.kind}`.replace('  ', ' ')).join(', ')}. ` +
        'Acknowledge each with a note, accept it or resolve it first.',
    );
  }
  const inputs = await loadSignoffInputs(db, accounts, businessDate);
  const html = await renderSealedReport(ctx, accounts, businessDate, at);
  const sha256 = createHash('sha256').update(html, 'utf8').digest('hex');
  return db.transaction().execute(async (trx) => {
    let signoff: Signoff;
    try {
      signoff = await insertSignoff(trx, { accountSet: accounts, businessDate, preparedBy: user.name, preparedAt: at, reportSha256: sha256, reportHtml: html, inputs });
    } catch (error) {
      // signoffs_one_live: someone prepared the same date a moment before.
      if ((error as { code?: string }).code === '23505') throw new SignoffRefusedError(`${businessDate} was prepared by someone else a moment ago: reload to see it.`, { cause: error });
      throw error;
    }
    await insertAudit(trx, { at, userName: user.name, address, action: 'signoff.prepare', target: businessDate, outcome: 'ok', detail: { signoff: signoff.id, report_sha256: sha256 } });
    return signoff;
  });
}

/** The checker's step: an approver or admin who did not prepare it approves a prepared sign-off. */
export async function approveSignoff(ctx: AppContext, user: Pick<ConsoleUser, 'id' | 'name' | 'role'>, businessDate: string, address: string | null): Promise<Signoff> {
  const db = ctx.database.db;
  const at = ctx.clock.now();
  const refuse = async (message: string): Promise<never> => {
    await insertAudit(db, { at, userName: user.name, address, action: 'signoff.approve', target: businessDate, outcome: 'refused', detail: { reason: message } });
    throw new SignoffRefusedError(message);
  };
  await detectSignoffChanges(ctx);
  const { state, current } = await signoffStateOf(ctx, businessDate);
  if (state !== 'prepared') {
    return refuse(
      state === 'approved'
        ? `${businessDate} is already approved (by ${current!.approvedBy}).`
        : state === 'changed after sign-off'
          ? `${businessDate} changed after sign-off: it must be prepared again before it can be approved.`
          : `${businessDate} has not been prepared: a preparer signs it first ("Prepare sign-off").`,
    );
  }
  // Maker-checker by user id: the sign-off names its preparer, and names are bound to one login each.
  const preparerId = (await findUserByName(db, current!.preparedBy))?.id;
  if (preparerId === undefined ? current!.preparedBy === user.name : preparerId === user.id) return refuse(`"${user.name}" prepared this sign-off and cannot also approve it: another person with the approver role must approve it.`);
  if (!mayApprove(user.role)) return refuse(`"${user.name}" has the ${user.role} role: only an approver or an admin can approve a sign-off.`);
  return db.transaction().execute(async (trx) => {
    if (!(await markSignoffApproved(trx, current!.id, user.name, at))) throw new SignoffRefusedError(`Sign-off #${current!.id} of ${businessDate} changed meanwhile: reload and look again.`);
    await insertAudit(trx, { at, userName: user.name, address, action: 'signoff.approve', target: businessDate, outcome: 'ok', detail: { signoff: current!.id } });
    return (await findSignoff(trx, current!.id))!;
  });
}

/** What differs between the inputs a date was signed on and its inputs now, one sentence each. */
export function describeInputChanges(signed: SignoffInputs, now: SignoffInputs): string[] {
  const changes: string[] = [];
  for (const before of signed.accounts) {
    const after = now.accounts.find((a) => a.account === before.account) ?? { account: before.account, runId: null, booksImportId: null, cases: {} };
    if (after.runId !== before.runId) {
      changes.push(
        after.runId === null
          ? `${before.account}: the snapshot it was signed on (run ${before.runId}) is no longer the day's snapshot`
          : `${before.account}: a better snapshot became the day's snapshot (run ${before.runId ?? 'none'} → run ${after.runId})`,
      );
    }
    if (after.booksImportId !== before.booksImportId) {
      changes.push(`${before.account}: the books were re-imported (import ${before.booksImportId ?? 'none'} → import ${after.booksImportId ?? 'none'})`);
    }
    for (const [id, state] of Object.entries(after.cases)) {
      const was = before.cases[id];
      if (was === undefined) changes.push(`${before.account}: case #${id} appeared (${state})`);
      else if ((was === 'resolved' || was === 'accepted') && (state === 'open' || state === 'acknowledged')) changes.push(`${before.account}: case #${id} was reopened (${was} → ${state})`);
    }
  }
  return changes;
}

/**
 * Compares every standing sign-off with its date's inputs now; each one whose inputs changed
 * (books re-imported, a better snapshot, a case reopened) is marked "changed after sign-off"
 * and, in the same transaction, a `signoff.invalidated` event is queued (once per sign-off).
 * Cheap when nothing is signed; the worker calls it every minute, commands that change inputs
 * at their end. Returns the sign-offs it invalidated.
 */
export async function detectSignoffChanges(ctx: AppContext): Promise<Array<{ signoff: Signoff; changes: string[] }>> {
  const db = ctx.database.db;
  const invalidated: Array<{ signoff: Signoff; changes: string[] }> = [];
  for (const signoff of await listLiveSignoffs(db)) {
    const changes = describeInputChanges(signoff.inputs, await loadSignoffInputs(db, signoff.accountSet, signoff.businessDate));
    if (changes.length === 0) continue;
    const at = ctx.clock.now();
    const recorded = await db.transaction().execute(async (trx) => {
      if (!(await markSignoffInvalidated(trx, signoff.id, changes, at))) return false;
      const data: SignoffInvalidatedData = { signoffId: signoff.id, businessDate: signoff.businessDate, accounts: signoff.accountSet, preparedBy: signoff.preparedBy, approvedBy: signoff.approvedBy, changes };
      await enqueueEvent(trx, ctx.config, 'signoff.invalidated', data, `signoff.invalidated:${signoff.id}`, at);
      await insertAudit(trx, { at, userName: null, address: null, action: 'signoff.invalidated', target: signoff.businessDate, outcome: 'ok', detail: { signoff: signoff.id, changes } });
      return true;
    });
    if (recorded) {
      ctx.logger.warn({ signoff: signoff.id, businessDate: signoff.businessDate, changes }, 'a signed business date changed after sign-off: it must be signed again');
      invalidated.push({ signoff: { ...signoff, invalidatedAt: at, invalidation: changes }, changes });
    }
  }
  return invalidated;
}

/** Refuses a date given on the command line or a form that is not a real date (the CLI's own check). */
export function requireDate(value: string | undefined, what: string): string {
  return parseBusinessDate(value ?? '', what);
}
