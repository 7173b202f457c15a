import type { AppContext } from '../app-context.js';
import { bankAccountNamed, businessCalendarOf } from '../config/index.js';
import { listReconciliationStatus } from '../db/reconciliation-owed.repository.js';
import { findAuthoritativeRunTiming } from '../db/signoff.repository.js';
import { booksAwaitedOn } from '../reconciliation/awaited-deadlines.js';
import { formatLocalTime } from '../business-date/local-time.js';

/** One account of a date that cannot be signed yet, and why. */
export interface UnsettledAccount {
  account: string;
  /** owed, awaiting_books, capture_window or not_captured; for a bank account day_open or awaiting_statement (it is never captured). */
  state: 'owed' | 'awaiting_books' | 'capture_window' | 'not_captured' | 'day_open' | 'awaiting_statement';
  /** A sentence for people: what is still to come and what to do. */
  detail: string;
}

/**
 * The accounts of a date whose results are not final: a capture may still change the closing
 * balance (the date's capture window is open and no capture finished by the cut-off), an input
 * changed since the last reconcile (owed), or the books are still awaited. A date is signed only
 * when this is empty: a seal over results that will change is no evidence.
 */
export async function findUnsettledAccounts(ctx: AppContext, accounts: readonly string[], businessDate: string): Promise<UnsettledAccount[]> {
  const now = ctx.clock.now();
  const window = businessCalendarOf(ctx.config).windowOf(businessDate);
  const statuses = await listReconciliationStatus(ctx.database.db, { from: businessDate, to: businessDate, accounts });
  const unsettled: UnsettledAccount[] = [];
  for (const account of accounts) {
    const bank = bankAccountNamed(ctx.config, account) !== undefined;
    if (bank && now < window.cutoffAt) {
      unsettled.push({ account, state: 'day_open', detail: `its cut-off (${formatLocalTime(window.cutoffAt, ctx.config.timezone)}) has not passed: the day is not over` });
      continue;
    }
    if (bank) {
      // A bank account's closing balance is its statement's: no capture window, the statement settles it.
      const status = statuses.find((s) => s.account === account);
      if (status === undefined || status.state === 'awaiting_statement') {
        unsettled.push({ account, state: 'awaiting_statement', detail: 'its bank statement has not been imported and its deadline has not passed: import it ("wallet-recon statements import")' });
      } else if (status.state === 'owed') {
        unsettled.push({ account, state: 'owed', detail: `results owed (${status.owed_reason ?? 'an input changed'}): run "wallet-recon reconcile --date ${businessDate}"` });
      } else if (status.state === 'awaiting_books') {
        unsettled.push({ account, state: 'awaiting_books', detail: booksAwaitedOn(ctx, businessDate) ? 'its books have not been imported and their deadline has not passed: import them ("wallet-recon ledger import")' : `its books deadline passed: run "wallet-recon reconcile --date ${businessDate}" to record them as missing` });
      }
      continue;
    }
    if (now < window.cutoffAt) {
      unsettled.push({ account, state: 'capture_window', detail: `its cut-off (${formatLocalTime(window.cutoffAt, ctx.config.timezone)}) has not passed: the day is not over` });
      continue;
    }
    const timing = await findAuthoritativeRunTiming(ctx.database.db, account, businessDate);
    if (now < window.closesAt && !(timing?.endOfDay === true && timing.finishedByCutoff)) {
      unsettled.push({ account, state: 'capture_window', detail: `inside its capture window until ${formatLocalTime(window.closesAt, ctx.config.timezone)}: a capture may still set its closing balance` });
      continue;
    }
    const status = statuses.find((s) => s.account === account);
    if (status === undefined || status.state === 'not_captured') {
      unsettled.push({ account, state: 'not_captured', detail: 'nothing captured and no miss recorded: nothing to sign for it' });
    } else if (status.state === 'owed') {
      unsettled.push({ account, state: 'owed', detail: `results owed (${status.owed_reason ?? 'an input changed'}): run "wallet-recon reconcile --date ${businessDate}"` });
    } else if (status.state === 'awaiting_books') {
      unsettled.push({
        account,
        state: 'awaiting_books',
        detail: booksAwaitedOn(ctx, businessDate)
          ? 'its books have not been imported and their deadline has not passed: import them ("wallet-recon ledger import")'
          : `its books deadline passed: run "wallet-recon reconcile --date ${businessDate}" to record them as missing`,
      });
    }
  }
  return unsettled;
}

/** The refusal for unsettled accounts, each named with its state. */
export function describeUnsettled(businessDate: string, unsettled: readonly UnsettledAccount[]): string {
  return `${businessDate} cannot be signed yet: ${unsettled.map((u) => `${u.account} is ${u.state} (${u.detail})`).join('; ')}. Nothing was signed.`;
}
