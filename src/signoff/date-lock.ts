import { findDateLocks, type DateLock } from '../db/signoff.repository.js';
import type { Database } from '../db/database.types.js';
import type { Kysely, Transaction } from 'kysely';
import { DateLockedError } from '../errors.js';
import { formatLocalTime } from '../business-date/local-time.js';

export type { DateLock };

/**
 * The refusal of a write to a closed date: which date and account, which sign-off holds the lock,
 * who approved it (the time in RECON_TIMEZONE), and the way out. `what` says what would have changed ("the books would change").
 */
export function lockedDateError(lock: DateLock, what: string, timezone: string): DateLockedError {
  return new DateLockedError(
    `${lock.businessDate} of account "${lock.account}" is signed off and locked (sign-off #${lock.signoffId}, approved by ${lock.approvedBy} at ${formatLocalTime(lock.approvedAt, timezone)}): ${what}. ` +
      `Nothing was written. If the closed day must change, an approver reopens it first: wallet-recon signoff reopen --date ${lock.businessDate} --as NAME --password-stdin --note TEXT`,
  );
}

/** The locks holding any of these (account, business date) pairs; empty when none is closed. */
export async function findLocks(db: Kysely<Database> | Transaction<Database>, pairs: ReadonlyArray<{ account: string; businessDate: string }>): Promise<DateLock[]> {
  const unique = [...new Map(pairs.map((p) => [`${p.account}|${p.businessDate}`, p])).values()];
  return findDateLocks(db, unique);
}
