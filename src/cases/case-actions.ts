import type { Transaction } from 'kysely';
import type { Database } from '../db/database.types.js';
import type { AppContext } from '../app-context.js';
import { isCalendarDate } from '../clock.js';
import { businessCalendarOf } from '../config/index.js';
import { listCaseEvidence, findCase, insertEvent, listOccurrences, lockAccountCases, updateCase } from '../db/reconciliation-case.repository.js';
import { UsageError } from '../errors.js';
import { describeAmount, describeCase, type CaseAction, type CaseState, type ReconciliationCase } from './case-model.js';

/** What a person can do to a case from the command line. */
export type ManualCaseAction = 'ack' | 'assign' | 'note' | 'resolve' | 'accept' | 'reopen';
export const MANUAL_CASE_ACTIONS: readonly ManualCaseAction[] = ['ack', 'assign', 'note', 'resolve', 'accept', 'reopen'];

/**
 * The allowed-transition table: from which states each action may be taken. A note fits any
 * case; nothing resolved can be accepted or assigned (reopen it first); only a case that is
 * resolved or accepted can be reopened.
 */
export const ALLOWED_FROM: Readonly<Record<ManualCaseAction, readonly CaseState[]>> = {
  ack: ['open'],
  assign: ['open', 'acknowledged', 'accepted'],
  note: ['open', 'acknowledged', 'resolved', 'accepted'],
  resolve: ['open', 'acknowledged', 'accepted'],
  accept: ['open', 'acknowledged'],
  reopen: ['resolved', 'accepted'],
};

/** The actions allowed from a state, in the table's order. */
export function actionsAllowedFrom(state: CaseState): ManualCaseAction[] {
  return MANUAL_CASE_ACTIONS.filter((a) => ALLOWED_FROM[a].includes(state));
}

export interface CaseActionRequest {
  caseId: number;
  action: ManualCaseAction;
  actor: string;
  note?: string;
  /** assign: the assignee. */
  to?: string;
  /** assign: due date YYYY-MM-DD. */
  due?: string;
  /** accept: last business date the acceptance covers. */
  until?: string;
  /** More writes that belong with the action (the console's audit row), in its transaction: both or neither. */
  alsoInTransaction?: (trx: Transaction<Database>) => Promise<void>;
}

/** What an action did: the case before and after. */
export interface CaseActionOutcome {
  before: ReconciliationCase;
  after: ReconciliationCase;
}

const NOTE_REQUIRED: Readonly<Partial<Record<ManualCaseAction, string>>> = {
  // An acknowledged case lets its date be signed off: the note is what the sign-off rests on.
  ack: 'what is being done about it',
  note: 'the text of the note',
  resolve: 'how it was fixed (the booking)',
  accept: 'why the difference is accepted',
  reopen: 'why it is reopened',
};

/** Whether an action is refused without a note (the CLI's --note, the console's required field). */
export function noteRequiredFor(action: ManualCaseAction): boolean {
  return NOTE_REQUIRED[action] !== undefined;
}

/**
 * Applies one manual action to a case in one transaction, with its event in the audit trail.
 * A transition the table does not allow, or a missing note, is a UsageError that names the
 * case's state and what is allowed from it; nothing is changed then.
 */
export async function applyCaseAction(ctx: AppContext, request: CaseActionRequest): Promise<CaseActionOutcome> {
  const note = request.note?.trim() || undefined;
  const needed = NOTE_REQUIRED[request.action];
  if (needed !== undefined && note === undefined) throw new UsageError(`cases ${request.action} needs --note TEXT saying ${needed}; an empty note is not accepted.`);
  if (request.action === 'assign' && !request.to?.trim()) throw new UsageError('cases assign needs --to NAME: the person who follows the case up.');
  const today = businessCalendarOf(ctx.config).businessDateOf(ctx.clock.now());
  if (request.due !== undefined && !isCalendarDate(request.due)) throw new UsageError(`--due ${JSON.stringify(request.due)} is not a real date: use YYYY-MM-DD, for example ${today}.`);
  if (request.until !== undefined) {
    if (!isCalendarDate(request.until)) throw new UsageError(`--until ${JSON.stringify(request.until)} is not a real date: use YYYY-MM-DD, for example ${today}.`);
  }
  const at = ctx.clock.now();

  return ctx.database.db.transaction().execute(async (trx) => {
    // The account's case lock first, as a reconciliation takes it: one that is tracking this
    // case finishes (and its write lands) before the decision is read and made, never after.
    const found = await findCase(trx, request.caseId);
    if (found !== undefined) await lockAccountCases(trx, found.account);
    const before = found && (await findCase(trx, request.caseId, { forUpdate: true }));
    if (before === undefined) throw new UsageError(`There is no case #${request.caseId}. Run "wallet-recon cases --state active" to list the cases that need attention.`);
    // An acceptance may end on the reviewed date itself: the latest date the case was seen, not today.
    if (request.action === 'accept' && request.until !== undefined && request.until < before.lastSeenOn) {
      throw new UsageError(
        `--until ${request.until} is before ${before.lastSeenOn}, the latest date case #${before.id} was seen: give that date or a later one, or leave --until out for an acceptance without end. Nothing was changed.`,
      );
    }
    if (!ALLOWED_FROM[request.action].includes(before.state)) {
      const allowed = actionsAllowedFrom(before.state);
      const resolution = before.resolution === null || before.state === 'accepted' ? '' : ` (${before.resolution})`;
      throw new UsageError(
        `Case ${describeCase(before)} is ${before.state}${resolution}: "${request.action}" is allowed only from ${ALLOWED_FROM[request.action].join(' or ')}. ` +
          `From ${before.state} you can: ${allowed.join(', ')}. Nothing was changed.`,
      );
    }

    let after: ReconciliationCase = before;
    let action: CaseAction;
    let eventNote: string | undefined = note;
    let evidence: unknown;
    switch (request.action) {
      case 'ack':
        after = { ...before, state: 'acknowledged' };
        action = 'acknowledged';
        break;
      case 'assign': {
        const to = request.to!.trim();
        after = { ...before, assignee: to, dueOn: request.due ?? before.dueOn };
        action = 'assigned';
        eventNote = [`assigned to ${to}${after.dueOn === null ? '' : `, due ${after.dueOn}`}`, note].filter(Boolean).join(': ');
        break;
      }
      case 'note':
        action = 'noted';
        break;
      case 'resolve':
        // Fixed by a booking recorded today: a discrepancy on an earlier date is history only.
        after = { ...before, state: 'resolved', resolution: 'fixed', resolvedOn: today > before.lastSeenOn ? today : before.lastSeenOn, acceptedUntil: null, acceptedDifference: null };
        action = 'resolved';
        break;
      case 'accept':
        after = { ...before, state: 'accepted', resolution: 'accepted', acceptedUntil: request.until ?? null, acceptedDifference: before.latestDifference };
        action = 'accepted';
        eventNote = `${note}${request.until === undefined ? '' : ` (until ${request.until})`}; accepted ${describeAmount(before.latestDifference, before.currency)}`;
        // The evidence as it is at acceptance, frozen in the append-only trail.
        evidence = {
          accepted_difference: before.latestDifference === null ? null : before.latestDifference.toString(),
          accepted_until: request.until ?? null,
          occurrences: (await listOccurrences(trx, before.id)).map((o) => ({ business_date: o.businessDate, status: o.status, difference: o.difference?.toString() ?? null, run_id: o.runId })),
          results: await listCaseEvidence(trx, before.id),
        };
        break;
      case 'reopen':
        after = { ...before, state: 'open', resolution: null, resolvedOn: null, acceptedUntil: null, acceptedDifference: null };
        action = 'reopened';
        break;
    }
    if (after !== before) await updateCase(trx, before.id, after, at);
    await insertEvent(trx, { caseId: before.id, at, actor: request.actor, action, fromState: before.state, toState: after.state, note: eventNote ?? null, evidence });
    await request.alsoInTransaction?.(trx);
    return { before, after };
  });
}
