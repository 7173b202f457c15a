import { sql, type Kysely } from 'kysely';
import type { Database } from './database.types.js';

// The console's questions about many dates at once: which accounts have data at all, the latest
// date with something to look at, each account's state per date, and a currency's recent balances.
// Each reads a bounded range of dates (the overview's 14, a trend's few weeks), never all history.

/** Every account the database holds data of (captures, misses, books or results), configured or not. */
export async function listAccountsWithData(db: Kysely<Database>): Promise<string[]> {
  const { rows } = await sql<{ account: string }>`
    select account from snapshot_runs
    union select account from missed_dates
    union select account from expected_balances
    union select account from reconciliation_results
    order by account`.execute(db);
  return rows.map((r) => r.account);
}

/** The latest business date, not after `notAfter`, that has results or owed work; undefined when none has. */
export async function findLatestDateWithWork(db: Kysely<Database>, notAfter: string): Promise<string | undefined> {
  const { rows } = await sql<{ business_date: string | null }>`
    select max(business_date)::text as business_date from (
      select max(business_date) as business_date from reconciliation_results where business_date <= ${notAfter}::date
      union all select max(business_date) from reconciliation_owed where business_date <= ${notAfter}::date
      union all select max(business_date) from missed_dates where business_date <= ${notAfter}::date
    ) d`.execute(db);
  return rows[0]?.business_date ?? undefined;
}

/** What an account's business date holds, for the overview's cell. */
export interface AccountDateFacts {
  account: string;
  businessDate: string;
  /** reconciliation_status.state: current, owed, awaiting_books, not_captured. */
  reconciliation: string | null;
  /** capture_days.status: captured, missed, pending. */
  capture: string | null;
  /** Results that did not match, apart from those awaiting books. */
  unmatched: number;
  results: number;
}

export async function listAccountDateFacts(db: Kysely<Database>, accounts: readonly string[], from: string, to: string): Promise<AccountDateFacts[]> {
  if (accounts.length === 0) return [];
  const { rows } = await sql<{ account: string; business_date: string; reconciliation: string | null; capture: string | null; unmatched: string | null; results: string | null }>`
    with keys as (
      select account, business_date from reconciliation_status where business_date between ${from}::date and ${to}::date and account = any(${[...accounts]}::text[])
      union select account, business_date from capture_days where business_date between ${from}::date and ${to}::date and account = any(${[...accounts]}::text[])
    ), results as (
      select account, business_date, count(*) as results,
        count(*) filter (where status not in ('matched', 'awaiting_books')) as unmatched
      from reconciliation_results
      where business_date between ${from}::date and ${to}::date and account = any(${[...accounts]}::text[])
      group by account, business_date
    )
    select k.account, k.business_date::text as business_date, s.state as reconciliation, c.status as capture,
      r.unmatched::text as unmatched, r.results::text as results
    from keys k
    left join reconciliation_status s on s.account = k.account and s.business_date = k.business_date
    left join capture_days c on c.account = k.account and c.business_date = k.business_date
    left join results r on r.account = k.account and r.business_date = k.business_date`.execute(db);
  return rows.map((r) => ({ account: r.account, businessDate: r.business_date, reconciliation: r.reconciliation, capture: r.capture, unmatched: Number(r.unmatched ?? 0), results: Number(r.results ?? 0) }));
}

/** The sign-off of each date of a range: approved and standing, prepared, or changed after sign-off. */
export async function listSignoffStatesOfRange(db: Kysely<Database>, from: string, to: string): Promise<Map<string, 'approved' | 'prepared' | 'changed after sign-off'>> {
  const rows = await db.selectFrom('signoffs').select(['business_date', 'approved_by', 'invalidated_at']).where('business_date', '>=', from).where('business_date', '<=', to).execute();
  const out = new Map<string, 'approved' | 'prepared' | 'changed after sign-off'>();
  for (const r of rows) {
    const standing = r.invalidated_at === null ? (r.approved_by === null ? 'prepared' : 'approved') : undefined;
    if (standing !== undefined) out.set(r.business_date, standing);
    else if (!out.has(r.business_date)) out.set(r.business_date, 'changed after sign-off');
  }
  return out;
}

/** An account's balances of one currency over a range of dates, oldest first, from the daily snapshots. */
export interface BalancePoint {
  currency: string;
  businessDate: string;
  balance: bigint;
  scale: number | null;
}

export async function listRecentBalances(db: Kysely<Database>, account: string, from: string, to: string): Promise<BalancePoint[]> {
  const rows = await db
    .selectFrom('daily_balances')
    .select(['currency', 'business_date', 'balance', 'scale'])
    .where('account', '=', account)
    .where('business_date', '>=', from)
    .where('business_date', '<=', to)
    .orderBy('currency')
    .orderBy('business_date')
    .execute();
  return rows.map((r) => ({ currency: r.currency, businessDate: r.business_date, balance: BigInt(r.balance), scale: r.scale }));
}
