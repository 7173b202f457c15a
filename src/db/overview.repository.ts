import { sql, type Kysely } from 'kysely';
import type { Database } from './database.types.js';
import { ATTENTION_STATUSES } from './result-records.js';

// The console's questions about many dates at once: which accounts have data at all, the latest
// date with something to look at, each account's state per date, and a currency's recent balances.
// Each reads a bounded range of dates (the overview's 14, a trend's few weeks), never all history.

/** Every account the database holds data of (captures, misses, books or results), configured or not. */
export async function listAccountsWithData(db: Kysely<Database>): Promise<string[]> {
  // A skip scan per table: from each account to the next through the index that leads with the
  // account, one probe per account, where a union of the tables read every row of history (the
  // day view and the cases inbox ask this on every page).
  const { rows } = await sql<{ account: string }>`
    with recursive
      r(account) as (select min(account) from snapshot_runs
        union all select (select min(x.account) from snapshot_runs x where x.account > r.account) from r where r.account is not null),
      m(account) as (select min(account) from missed_dates
        union all select (select min(x.account) from missed_dates x where x.account > m.account) from m where m.account is not null),
      e(account) as (select min(account) from expected_balances
        union all select (select min(x.account) from expected_balances x where x.account > e.account) from e where e.account is not null),
      z(account) as (select min(account) from reconciliation_results
        union all select (select min(x.account) from reconciliation_results x where x.account > z.account) from z where z.account is not null)
    select account from (select account from r union select account from m union select account from e union select account from z) a
    where account is not null
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
  /** Results needing attention (ATTENTION_STATUSES) whose case has not accepted them. */
  unmatched: number;
  /** Results needing attention that their case accepted. */
  accepted: number;
  /** Results explained by a reconciling item, or within materiality. */
  explained: number;
  immaterial: number;
  awaitingStatement: number;
  results: number;
}

export async function listAccountDateFacts(db: Kysely<Database>, accounts: readonly string[], from: string, to: string): Promise<AccountDateFacts[]> {
  if (accounts.length === 0) return [];
  const { rows } = await sql<{
    account: string;
    business_date: string;
    reconciliation: string | null;
    capture: string | null;
    unmatched: string | null;
    accepted: string | null;
    explained: string | null;
    immaterial: string | null;
    awaiting_statement: string | null;
    results: string | null;
  }>`
    with states as (
      select account, business_date, state from reconciliation_status where business_date between ${from}::date and ${to}::date and account = any(${[...accounts]}::text[])
    ), captures as (
      select account, business_date, status from capture_days where business_date between ${from}::date and ${to}::date and account = any(${[...accounts]}::text[])
    ), results as (
      -- A result is accepted when the case that saw it on its date has accepted it.
      select r.account, r.business_date, count(*) as results,
        count(*) filter (where r.status = any(${[...ATTENTION_STATUSES]}::text[]) and a.case_id is null) as unmatched,
        count(*) filter (where r.status = any(${[...ATTENTION_STATUSES]}::text[]) and a.case_id is not null) as accepted,
        count(*) filter (where r.status = 'explained') as explained,
        count(*) filter (where r.status = 'immaterial') as immaterial,
        count(*) filter (where r.status = 'awaiting_statement') as awaiting_statement
      from reconciliation_results r
      left join lateral (
        select o.case_id from case_occurrences o join reconciliation_cases c on c.id = o.case_id
        where o.business_date = r.business_date and c.account = r.account and c.currency is not distinct from r.currency and c.state = 'accepted'
        limit 1
      ) a on true
      where r.business_date between ${from}::date and ${to}::date and r.account = any(${[...accounts]}::text[])
      group by r.account, r.business_date
    )
    -- Each view filtered by the range and the accounts itself, then joined on the keys: a view
    -- joined to a list of keys is not filtered by them, and was computed over all history.
    select k.account, k.business_date::text as business_date, s.state as reconciliation, c.status as capture,
      r.unmatched::text as unmatched, r.accepted::text as accepted, r.explained::text as explained, r.immaterial::text as immaterial,
      r.awaiting_statement::text as awaiting_statement, r.results::text as results
    from (select account, business_date from states union select account, business_date from captures) k
    left join states s on s.account = k.account and s.business_date = k.business_date
    left join captures c on c.account = k.account and c.business_date = k.business_date
    left join results r on r.account = k.account and r.business_date = k.business_date`.execute(db);
  return rows.map((r) => ({
    account: r.account,
    businessDate: r.business_date,
    reconciliation: r.reconciliation,
    capture: r.capture,
    unmatched: Number(r.unmatched ?? 0),
    accepted: Number(r.accepted ?? 0),
    explained: Number(r.explained ?? 0),
    immaterial: Number(r.immaterial ?? 0),
    awaitingStatement: Number(r.awaiting_statement ?? 0),
    results: Number(r.results ?? 0),
  }));
}

/**
 * The sign-off of each date of a range, as its steps tell it (signoff_states): approved and
 * standing, prepared, or changed after sign-off (the latest ended by an invalidation), with the
 * id of that sign-off. A date whose latest sign-off was reopened has none standing.
 */
export async function listSignoffStatesOfRange(db: Kysely<Database>, from: string, to: string): Promise<Map<string, { state: 'approved' | 'prepared' | 'changed after sign-off'; signoffId: number }>> {
  const rows = await db
    .selectFrom('signoffs as s')
    .innerJoin('signoff_states as st', 'st.signoff_id', 's.id')
    .select(['s.id', 's.business_date', 'st.approved_by', 'st.invalidated_at', 'st.reopened_at'])
    .where('s.business_date', '>=', from)
    .where('s.business_date', '<=', to)
    .orderBy('s.id', 'desc')
    .execute();
  const out = new Map<string, { state: 'approved' | 'prepared' | 'changed after sign-off'; signoffId: number }>();
  const seen = new Set<string>();
  for (const r of rows) {
    if (r.invalidated_at === null && r.reopened_at === null) {
      out.set(r.business_date, { state: r.approved_by === null ? 'prepared' : 'approved', signoffId: r.id });
    } else if (!seen.has(r.business_date) && r.reopened_at === null) {
      out.set(r.business_date, { state: 'changed after sign-off', signoffId: r.id });
    }
    seen.add(r.business_date);
  }
  return out;
}

/** An account's balance of one currency on one business date, from the daily snapshots. */
export interface BalancePoint {
  account: string;
  currency: string;
  businessDate: string;
  balance: bigint;
  scale: number | null;
}

/** Some accounts' balances over a range of dates, by account, currency and date: one query for a page of accounts. */
export async function listRecentBalances(db: Kysely<Database>, accounts: readonly string[], from: string, to: string): Promise<BalancePoint[]> {
  if (accounts.length === 0) return [];
  // Each run's balances looked up by its id (the ordered LATERAL stays a keyed lookup, an
  // index-only scan of the run's key), where a join with daily_balances could hash all of
  // balance_snapshots for a page of accounts. A currency's dates come as one row, "date balance
  // scale" joined by commas: a page of 25 accounts × 50 currencies × 14 dates is 1,250 rows to
  // decode, not 17,500 (half the client's time).
  const { rows } = await sql<{ account: string; currency: string; points: string }>`
    select a.account, s.currency,
      string_agg(a.business_date::text || ' ' || s.balance::text || ' ' || coalesce(s.scale::text, ''), ',' order by a.business_date) as points
    from authoritative_runs a
    cross join lateral (
      select b.currency, b.balance, b.scale from balance_snapshots b where b.run_id = a.run_id
    ) s
    where a.account = any(${[...accounts]}::text[]) and a.business_date between ${from}::date and ${to}::date
    group by a.account, s.currency
    order by a.account, s.currency`.execute(db);
  const out: BalancePoint[] = [];
  for (const r of rows) {
    for (const point of r.points.split(',')) {
      const [businessDate, balance, scale] = point.split(' ') as [string, string, string];
      out.push({ account: r.account, currency: r.currency, businessDate, balance: BigInt(balance), scale: scale === '' ? null : Number(scale) });
    }
  }
  return out;
}
