import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import { bankAccountNamed, bankBooksOn, businessCalendarOf } from '../config/index.js';
import type { Database, ReconciliationState, ReconciliationStatus } from '../db/database.types.js';
import { listReconciliationStatus } from '../db/reconciliation-owed.repository.js';
import { findAuthoritativeRunTiming, listResultStatuses } from '../db/signoff.repository.js';
import { booksAwaitedOn } from '../reconciliation/awaited-deadlines.js';
import { formatLocalTime } from '../business-date/local-time.js';

/** One account of a date that cannot be signed yet, and why. */
export interface UnsettledAccount {
  account: string;
  /** The day's state (or a result's status) that is not final; a bank account (never captured) is `day_open` before its cut-off, never `capture_window` or `not_captured`. */
  state: 'owed' | 'awaiting_books' | 'awaiting_statement' | 'no_books' | 'capture_window' | 'not_captured' | 'conflicting_statements' | 'day_open';
  /** A sentence for people: what is still to come and what to do. */
  detail: string;
}

/**
 * Whether a day in this state (of the reconciliation_status view) can be signed: only `current`
 * is final. Written as a switch without a default, so a state added to the type fails to compile
 * here until it is classified.
 */
export function dayStateSettled(state: ReconciliationState): boolean {
  switch (state) {
    case 'current':
      return true;
    case 'owed':
    case 'awaiting_books':
    case 'no_books':
    case 'awaiting_statement':
    case 'not_captured':
      return false;
  }
}

/** Every status a result can carry: the type's, and those the database check allows for open work. */
export type ResultStatusValue = ReconciliationStatus | 'explained' | 'immaterial' | 'conflicting_statements';

/**
 * How a result's status stands for a sign-off: `final` (agrees, or its difference is explained or
 * immaterial), `exception` (final, and signed only once its case is handled: acknowledged with a
 * note, accepted or resolved), or `pending` (an input is still to come or two sources disagree:
 * the date cannot be signed whatever its cases say).
 */
export function resultStatusSettles(status: ResultStatusValue): 'final' | 'exception' | 'pending' {
  switch (status) {
    case 'matched':
    case 'explained':
    case 'immaterial':
      return 'final';
    case 'break':
    case 'missing_in_ledger':
    case 'missing_in_gateway':
    case 'endpoint_mismatch':
    case 'no_snapshot':
    case 'disappeared':
    case 'unknown_decimals':
    case 'no_books':
    case 'roll_forward_break':
    case 'sequence_gap':
    case 'no_statement':
      return 'exception';
    case 'awaiting_books':
    case 'awaiting_statement':
    case 'conflicting_statements':
      return 'pending';
  }
}

/**
 * The accounts of a date whose results are not final: a capture may still change the closing
 * balance (the date's capture window is open and no capture finished by the cut-off), an input
 * changed since the last reconcile (owed), or the books are still awaited. A date is signed only
 * when this is empty: a seal over results that will change is no evidence.
 */
export async function findUnsettledAccounts(ctx: AppContext, accounts: readonly string[], businessDate: string, db: Kysely<Database> | Transaction<Database> = ctx.database.db): Promise<UnsettledAccount[]> {
  const now = ctx.clock.now();
  const window = businessCalendarOf(ctx.config).windowOf(businessDate);
  const statuses = await listReconciliationStatus(db, { from: businessDate, to: businessDate, accounts });
  const results = await listResultStatuses(db, accounts, businessDate);
  const unsettled: UnsettledAccount[] = [];
  for (const account of accounts) {
    // A bank account's closing balance is its statement's: no capture window, the statement settles it.
    const bankAccount = bankAccountNamed(ctx.config, account);
    const bank = bankAccount !== undefined;
    if (now < window.cutoffAt) {
      unsettled.push({ account, state: bank ? 'day_open' : 'capture_window', detail: `its cut-off (${formatLocalTime(window.cutoffAt, ctx.config.timezone)}) has not passed: the day is not over` });
      continue;
    }
    if (!bank) {
      const timing = await findAuthoritativeRunTiming(db, account, businessDate);
      if (now < window.closesAt && !(timing?.endOfDay === true && timing.finishedByCutoff)) {
        unsettled.push({ account, state: 'capture_window', detail: `inside its capture window until ${formatLocalTime(window.closesAt, ctx.config.timezone)}: a capture may still set its closing balance` });
        continue;
      }
    }
    const status = statuses.find((s) => s.account === account);
    const found = status?.state ?? 'not_captured';
    // A day its bank does not book (its calendar) has no statement and no result: nothing to settle.
    if (bank && found === 'not_captured' && status?.bank_statement_id == null && !bankBooksOn(bankAccount.calendar, businessDate)) continue;
    const state = bank && found === 'not_captured' ? 'awaiting_statement' : found;
    if (state === 'not_captured') {
      unsettled.push({ account, state: 'not_captured', detail: 'nothing captured and no miss recorded: nothing to sign for it' });
    } else if (state === 'owed') {
      unsettled.push({ account, state: 'owed', detail: `results owed (${status?.owed_reason ?? 'an input changed'}): run "wallet-recon reconcile --date ${businessDate}"` });
    } else if (state === 'awaiting_books' || state === 'no_books') {
      unsettled.push({
        account,
        state,
        detail: booksAwaitedOn(ctx, businessDate)
          ? 'its books have not been imported and their deadline has not passed: import them ("wallet-recon ledger import")'
          : `its books deadline passed: run "wallet-recon reconcile --date ${businessDate}" to record them as missing`,
      });
    } else if (state === 'awaiting_statement') {
      unsettled.push({ account, state, detail: 'its bank statement has not been imported and its deadline has not passed: import it ("wallet-recon statements import")' });
    } else if (!dayStateSettled(state)) {
      unsettled.push({ account, state: 'owed', detail: `its state ${state} is not final` });
    } else {
      // The day is current: a result still waiting for an input, or two sources that disagree, blocks as well.
      const pending = results.filter((r) => r.account === account && resultStatusSettles(r.status) === 'pending');
      for (const r of pending) {
        const what = r.status === 'conflicting_statements' ? 'two final statements of the day disagree: replace the wrong one (statements import --replace)' : `its ${r.currency ?? 'result'} is ${r.status}`;
        unsettled.push({ account, state: r.status === 'awaiting_books' ? 'awaiting_books' : r.status === 'awaiting_statement' ? 'awaiting_statement' : 'conflicting_statements', detail: what });
      }
    }
  }
  return unsettled;
}

/** The refusal for unsettled accounts, each named with its state. */
export function describeUnsettled(businessDate: string, unsettled: readonly UnsettledAccount[]): string {
  return `${businessDate} cannot be signed yet: ${unsettled.map((u) => `${u.account} is ${u.state} (${u.detail})`).join('; ')}. Nothing was signed.`;
}
