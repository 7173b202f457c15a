import { sql, type Kysely, type Transaction } from 'kysely';
import type { CaptureDaysView, Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface MissedDate {
  account: string;
  businessDate: string;
  cutoffAt: Date;
  windowClosedAt: Date;
  recordedAt: Date;
  lastError: string | null;
}

/**
 * Records that an account's business date was missed. Returns false when it was already
 * recorded (by another replica), so only one process raises the alarm for it.
 */
export async function recordMissedDate(db: Db, missed: MissedDate): Promise<boolean> {
  const rows = await db
    .insertInto('missed_dates')
    .values({
      account: missed.account,
      business_date: missed.businessDate,
      cutoff_at: missed.cutoffAt,
      window_closed_at: missed.windowClosedAt,
      recorded_at: missed.recordedAt,
      last_error: missed.lastError,
    })
    .onConflict((oc) => oc.columns(['account', 'business_date']).doNothing())
    .returning('account')
    .execute();
  return rows.length === 1;
}

/** The newest failure message of an account's runs for a business date, if any. */
export async function findLastRunError(db: Db, account: string, businessDate: string): Promise<string | null> {
  const row = await db
    .selectFrom('snapshot_runs')
    .select('error')
    .where('account', '=', account)
    .where('business_date', '=', businessDate)
    .where('status', 'in', ['failed', 'abandoned'])
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row?.error ?? null;
}

/**
 * How many of the account's latest settled business dates were missed in a row: pending dates
 * are passed over, a captured date ends the count (at most 1000).
 */
export async function countConsecutiveMissedDates(db: Db, account: string): Promise<number> {
  // The recorded misses after the latest captured date (an end-of-day run that succeeded): two
  // index probes, where walking capture_days back from today read up to 1000 dates of history.
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from (
      select 1 from missed_dates m
      where m.account = ${account}
        and m.business_date > coalesce(
          (select max(r.business_date) from snapshot_runs r where r.account = ${account} and r.status = 'succeeded' and r.end_of_day),
          '-infinity'::date)
      limit 1000
    ) x`.execute(db);
  return Number(rows[0]!.n);
}

/**
 * Records that a worker serves these accounts from a business date on (the first such record per
 * account stays): dates before it were never the worker's to capture, so never missed.
 */
export async function recordScheduledAccounts(db: Db, accounts: readonly string[], businessDate: string, slot: Date): Promise<void> {
  if (accounts.length === 0) return;
  await db
    .insertInto('scheduled_accounts')
    .values(accounts.map((account) => ({ account, first_business_date: businessDate, first_slot: slot })))
    .onConflict((oc) => oc.column('account').doNothing())
    .execute();
}

/** The first business date a worker served each account: no date before it can have been missed. */
export async function findFirstServedDates(db: Db, accounts: readonly string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const rows = await db
    .selectFrom('scheduled_accounts')
    .select(['account', sql<string>`first_business_date::text`.as('first_date')])
    .where('account', 'in', [...accounts])
    .execute();
  return new Map(rows.map((r) => [r.account, r.first_date]));
}

/**
 * Each account's first tracked business date: its first run (whatever its outcome) or its first
 * books, whichever is earlier. A date before it is history the account was not tracked for, not
 * a gap. Accounts with neither are absent.
 */
export async function findFirstTrackedDates(db: Db, accounts: readonly string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  // Per account, the first date of each table through its (account, business_date) index: two
  // index probes per account, not a pass over all history (least() skips a table without rows).
  const { rows } = await sql<{ account: string; first_date: string | null }>`
    select a.account, least(
      (select min(r.business_date) from snapshot_runs r where r.account = a.account),
      (select min(e.business_date) from expected_balances e where e.account = a.account))::text as first_date
    from unnest(${[...accounts]}::text[]) as a(account)`.execute(db);
  return new Map(rows.flatMap((r) => (r.first_date === null ? [] : [[r.account, r.first_date] as const])));
}

/**
 * Each account's first business date the tool could have captured: the earliest date of any of
 * its runs (whatever their outcome), of a worker serving it, or of a recorded miss. An account
 * absent here was never captured nor served: no date of it could have been.
 */
export async function findFirstCapturableDates(db: Db, accounts: readonly string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const rows = await sql<{ account: string; first_date: string }>`
    select account, min(business_date)::text as first_date from (
      select account, business_date from snapshot_runs where account = any(${[...accounts]}::text[])
      union all select account, first_business_date as business_date from scheduled_accounts where account = any(${[...accounts]}::text[])
      union all select account, business_date from missed_dates where account = any(${[...accounts]}::text[])
    ) capturable group by account`.execute(db);
  return new Map(rows.rows.map((r) => [r.account, r.first_date]));
}

/**
 * The night's own errors per account: the last error of a scheduled end-of-day attempt for the
 * date that failed (or was abandoned). A manual or intraday run that failed the same day is not
 * the night's and is left out.
 */
export async function listNightErrors(db: Db, businessDate: string, accounts: readonly string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const rows = await db
    .selectFrom('snapshot_runs')
    .select(['account', 'error'])
    .where('business_date', '=', businessDate)
    .where('account', 'in', [...accounts])
    .where('trigger', '=', 'schedule')
    .where('end_of_day', '=', true)
    .where('status', 'in', ['failed', 'abandoned'])
    .where('error', 'is not', null)
    .orderBy('started_at')
    .orderBy('id')
    .execute();
  return new Map(rows.map((r) => [r.account, r.error!]));
}

/** Account-date pairs from `from` on that are settled (captured at end of day, or recorded missed). */
export async function listSettledDates(db: Db, accounts: readonly string[], from: string): Promise<Set<string>> {
  if (accounts.length === 0) return new Set();
  const rows = await db
    .selectFrom('capture_days')
    .select(['account', 'business_date'])
    .where('account', 'in', [...accounts])
    .where('business_date', '>=', from)
    .where('status', '<>', 'pending')
    .execute();
  return new Set(rows.map((r) => `${r.account}|${r.business_date}`));
}

/** Rows of the capture_days view, newest date first. */
export async function listCaptureDays(db: Db, options: { account?: string; from?: string; to?: string; limit?: number }): Promise<CaptureDaysView[]> {
  let query = db.selectFrom('capture_days').selectAll().orderBy('business_date', 'desc').orderBy('account');
  if (options.account !== undefined) query = query.where('account', '=', options.account);
  if (options.from !== undefined) query = query.where('business_date', '>=', options.from);
  if (options.to !== undefined) query = query.where('business_date', '<=', options.to);
  if (options.limit !== undefined) query = query.limit(options.limit);
  return query.execute();
}
