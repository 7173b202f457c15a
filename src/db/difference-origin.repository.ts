import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.types.js';
import { exactAmount } from './exact-amount.js';

type Db = Kysely<Database> | Transaction<Database>;

/** One stored result of an account and currency, as the trail of a difference reads it. */
export interface ResultTrailRow {
  date: string;
  status: string;
  gateway: bigint | null;
  books: bigint | null;
  difference: bigint | null;
  scale: number | null;
}

/**
 * The results of one account and currency that the trail of a difference opened on `openedOn`
 * needs: from the date before the last matched date before it (for that date's movements) to
 * `to`, oldest first; at most `limit` dates, the latest kept.
 */
export async function listResultTrail(db: Db, account: string, currency: string, openedOn: string, to: string, limit: number): Promise<{ rows: ResultTrailRow[]; cut: boolean }> {
  const base = db.selectFrom('reconciliation_results').where('account', '=', account).where('currency', '=', currency);
  const anchor = (await base.select((eb) => eb.fn.max('business_date').as('d')).where('status', '=', 'matched').where('business_date', '<', openedOn).executeTakeFirst())?.d ?? null;
  const before = anchor === null ? null : ((await base.select((eb) => eb.fn.max('business_date').as('d')).where('business_date', '<', anchor).executeTakeFirst())?.d ?? null);
  let query = base
    .select(['business_date', 'status', 'gateway_balance', 'expected_balance', 'difference', 'scale'])
    .where('business_date', '<=', to)
    .orderBy('business_date', 'desc')
    .limit(limit + 1);
  const from = before ?? anchor;
  if (from !== null) query = query.where('business_date', '>=', from);
  const found = await query.execute();
  const rows = found.slice(0, limit).reverse().map((r) => ({
    date: r.business_date,
    status: r.status,
    gateway: exactAmount(r.gateway_balance),
    books: exactAmount(r.expected_balance),
    difference: exactAmount(r.difference),
    scale: r.scale,
  }));
  return { rows, cut: found.length > limit };
}

/** Σ of the books entries of one account and currency per booking date and scale, over a range of dates. */
export async function sumBooksEntriesByDate(db: Db, account: string, currency: string, from: string, to: string): Promise<Array<{ date: string; scale: number; total: bigint }>> {
  const rows = await db
    .selectFrom('books_entries')
    .select(['booking_date', 'scale', sql<string>`sum(amount)::text`.as('total')])
    .where('account', '=', account)
    .where('currency', '=', currency)
    .where('booking_date', '>=', from)
    .where('booking_date', '<=', to)
    .groupBy(['booking_date', 'scale'])
    .execute();
  return rows.map((r) => ({ date: r.booking_date, scale: r.scale, total: BigInt(r.total) }));
}
