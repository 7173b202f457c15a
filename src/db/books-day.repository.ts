import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A closing balance of the books as stored: minor units of `scale` (null: stored before scales were recorded). */
export interface StoredClosing {
  businessDate: string;
  balance: bigint;
  scale: number | null;
  importId: number | null;
}

/** The books entries of one currency booked after the previous closing up to the date, per stored scale. */
export interface EntriesSince {
  scale: number;
  total: bigint;
  count: number;
  /** How many of them are booked on the date itself. */
  onDate: number;
  /** The newest import they came from. */
  importId: number | null;
}

/** What the books hold for one account, currency and date: its closing, the previous closing, and the entries between. */
export interface BooksDayRows {
  currency: string;
  closing: StoredClosing | null;
  previous: StoredClosing | null;
  entries: EntriesSince[];
}

/**
 * The books of one account on a date, per currency: the closing balance of the date (if
 * imported), the latest closing before it, and the books entries booked after that one up to the
 * date (all entries up to the date where no earlier closing exists). Currencies are those with a
 * closing on the date or an entry booked on it. Day-scoped: an index range per currency.
 */
export async function readBooksDay(db: Db, account: string, date: string): Promise<BooksDayRows[]> {
  const rows = await sql<{
    currency: string;
    closing: string | null;
    closing_scale: number | null;
    closing_import: number | null;
    previous_date: string | null;
    previous: string | null;
    previous_scale: number | null;
    previous_import: number | null;
  }>`
    with currencies as (
      select currency from expected_balances where account = ${account} and business_date = ${date}::date
      union
      select currency from books_entries where account = ${account} and booking_date = ${date}::date
    )
    select c.currency, b.balance::text as closing, b.scale as closing_scale, b.import_id as closing_import,
      p.business_date::text as previous_date, p.balance::text as previous, p.scale as previous_scale, p.import_id as previous_import
    from currencies c
    left join expected_balances b on b.account = ${account} and b.business_date = ${date}::date and b.currency = c.currency
    left join lateral (
      select e.business_date, e.balance, e.scale, e.import_id from expected_balances e
      where e.account = ${account} and e.currency = c.currency and e.business_date < ${date}::date
      order by e.business_date desc limit 1
    ) p on true
    order by c.currency`.execute(db);
  if (rows.rows.length === 0) return [];
  const entries = await sql<{ currency: string; scale: number; total: string; n: string; on_date: string; import_id: number | null }>`
    select e.currency, e.scale, sum(e.amount)::text as total, count(*)::text as n,
      count(*) filter (where e.booking_date = ${date}::date)::text as on_date, max(e.import_id) as import_id
    from books_entries e
    join unnest(${rows.rows.map((r) => r.currency)}::text[], ${rows.rows.map((r) => r.previous_date)}::date[]) as c(currency, since) on c.currency = e.currency
    where e.account = ${account} and e.booking_date <= ${date}::date and (c.since is null or e.booking_date > c.since)
    group by e.currency, e.scale
    order by e.currency, e.scale`.execute(db);
  return rows.rows.map((r) => ({
    currency: r.currency,
    closing: r.closing === null ? null : { businessDate: date, balance: BigInt(r.closing), scale: r.closing_scale, importId: r.closing_import },
    previous: r.previous === null || r.previous_date === null ? null : { businessDate: r.previous_date, balance: BigInt(r.previous), scale: r.previous_scale, importId: r.previous_import },
    entries: entries.rows
      .filter((e) => e.currency === r.currency)
      .map((e) => ({ scale: Number(e.scale), total: BigInt(e.total), count: Number(e.n), onDate: Number(e.on_date), importId: e.import_id })),
  }));
}

/** Every currency and stored scale a day's books hold: what the comparison scale is chosen from. */
export function booksDayScales(rows: readonly BooksDayRows[]): Array<{ currency: string; scale: number | null }> {
  return rows.flatMap((r) => [
    ...(r.closing === null ? [] : [{ currency: r.currency, scale: r.closing.scale }]),
    ...(r.previous === null ? [] : [{ currency: r.currency, scale: r.previous.scale }]),
    ...r.entries.map((e) => ({ currency: r.currency, scale: e.scale })),
  ]);
}
