import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Above this many account-dates a writer locks its accounts whole: each advisory lock is an entry
 * in the server's shared lock table (max_locks_per_transaction), which a years-long import must
 * not exhaust.
 */
export const MAX_DATE_LOCKS = 64;

const accountKey = (account: string) => `wallet-recon:inputs:${account}`;
const dateKey = (account: string, businessDate: string) => `wallet-recon:inputs:${account}|${businessDate}`;

async function take(db: Db, keys: readonly string[], mode: 'shared' | 'exclusive'): Promise<void> {
  if (keys.length === 0) return;
  const fn = sql.raw(mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock');
  // Always in the same (sorted) order, so two writers never wait on each other in a cycle.
  await sql`select ${fn}(hashtextextended(k, 0)) from (select k from unnest(${[...new Set(keys)].sort()}::text[]) as k order by k) as keys`.execute(db);
}

/**
 * Takes the per-(account, business date) lock of a date's inputs until the transaction ends:
 * approve, reopen and every writer of a date's inputs (books, statements, results, captures) take
 * it, so an approval and a write never interleave — whoever comes second sees the other's commit.
 * A hierarchy keeps the lock table small: the account lock is taken shared and each date lock
 * exclusive; a writer of more than MAX_DATE_LOCKS dates takes its accounts' locks exclusive instead.
 * Advisory locks are plain PostgreSQL functions, so PGlite (one connection) takes them too.
 */
export async function lockAccountDates(db: Db, pairs: ReadonlyArray<{ account: string; businessDate: string }>): Promise<void> {
  const accounts = [...new Set(pairs.map((p) => p.account))];
  const unique = [...new Set(pairs.map((p) => dateKey(p.account, p.businessDate)))];
  if (unique.length > MAX_DATE_LOCKS) {
    await take(db, accounts.map(accountKey), 'exclusive');
    return;
  }
  if (unique.length === 0) return;
  // One round trip for both levels: every account lock is taken (shared, sorted) before the first
  // date lock, as the lateral subquery's rows wait on the aggregate of the account locks; the
  // date locks (exclusive) follow in sorted order. Sorted subqueries are never flattened.
  await sql`
    select count(pg_advisory_xact_lock(hashtextextended(d.k, 0)))
    from (
      select count(pg_advisory_xact_lock_shared(hashtextextended(a.k, 0))) as n
      from (select k from unnest(${accounts.map(accountKey).sort()}::text[]) as k order by k) as a
    ) as shared,
    lateral (select k from unnest(${unique.sort()}::text[]) as k where shared.n >= 0 order by k) as d`.execute(db);
}
