import { sql, type Kysely, type Transaction } from 'kysely';
import { currencyDecimals } from '../money/format-amount.js';
import type { BooksFormatName, Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface ExpectedBalanceInput {
  account: string;
  businessDate: string;
  currency: string;
  balance: bigint;
}

export interface ExpectedBalance {
  account: string;
  businessDate: string;
  currency: string;
  balance: bigint;
  source: string;
  /** The books import the row came from (null for rows imported before imports were recorded). */
  importId: number | null;
  /** Decimals of balance: the currency's ISO 4217 decimals (null: a code without them). */
  scale: number | null;
}

// One parameter per column (unnest), as for snapshot rows: a year of books is a few statements.
const BATCH_ROWS = 5_000;

/**
 * Stores a books file: each (account, business date) it names becomes exactly its rows. Keys
 * are inserted or replaced (recording the file as their source), and the day's keys the file
 * lacks are removed, so corrected books can drop a currency. Call inside a transaction.
 */
export async function replaceExpectedBalanceDays(
  db: Db,
  rows: readonly ExpectedBalanceInput[],
  source: string,
  importedAt: Date,
  how: { format?: BooksFormatName; amounts?: 'major' | 'minor' } = {},
): Promise<{ importId: number; inserted: number; replaced: number; changed: number; unchanged: number; removed: number }> {
  const { id: importId } = await db
    .insertInto('books_imports')
    .values({ source, imported_at: importedAt, rows: rows.length, format: how.format ?? null, amounts: how.amounts ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  // Over the whole file at once: a day's currencies may be spread over several upsert batches.
  const removedRows = await sql<{ currency: string }>`
    with file as (
      select * from unnest(
        ${rows.map((r) => r.account)}::text[],
        ${rows.map((r) => r.businessDate)}::date[],
        ${rows.map((r) => r.currency)}::text[]
      ) as f(account, business_date, currency)
    )
    delete from expected_balances e
    where (e.account, e.business_date) in (select account, business_date from file)
      and not exists (select 1 from file f where f.account = e.account and f.business_date = e.business_date and f.currency = e.currency)
    returning e.currency`.execute(db);
  let inserted = 0;
  let changed = 0;
  let unchanged = 0;
  for (let start = 0; start < rows.length; start += BATCH_ROWS) {
    const batch = rows.slice(start, start + BATCH_ROWS);
    // xmax = 0 only on a freshly inserted tuple: it tells a new key from a replaced one. The
    // `previous` CTE reads the statement's starting snapshot, so it still holds the old balances:
    // a replaced key whose balance is the same is "unchanged" (it now names this import all the same).
    const result = await sql<{ inserted: boolean; unchanged: boolean }>`
      with u as (
        select * from unnest(
          ${batch.map((r) => r.account)}::text[],
          ${batch.map((r) => r.businessDate)}::date[],
          ${batch.map((r) => r.currency)}::text[],
          ${batch.map((r) => r.balance.toString())}::numeric[],
          ${batch.map((r) => currencyDecimals(r.currency))}::smallint[]
        ) as u(account, business_date, currency, balance, scale)
      ), previous as (
        select e.account, e.business_date, e.currency, e.balance from expected_balances e
        join u on u.account = e.account and u.business_date = e.business_date and u.currency = e.currency
      )
      insert into expected_balances (account, business_date, currency, balance, source, imported_at, import_id, scale)
      select u.account, u.business_date, u.currency, u.balance, ${source}, ${importedAt}, ${importId}::integer, u.scale from u
      on conflict (account, business_date, currency)
      do update set balance = excluded.balance, source = excluded.source, imported_at = excluded.imported_at, import_id = excluded.import_id, scale = excluded.scale
      returning (xmax = 0) as inserted, exists (
        select 1 from previous p
        where p.account = expected_balances.account and p.business_date = expected_balances.business_date
          and p.currency = expected_balances.currency and p.balance = expected_balances.balance
      ) as unchanged`.execute(db);
    for (const row of result.rows) {
      if (row.inserted) inserted++;
      else if (row.unchanged) unchanged++;
      else changed++;
    }
  }
  return { importId, inserted, replaced: changed + unchanged, changed, unchanged, removed: removedRows.rows.length };
}

/** One key a books import would add, change or remove (before/after in minor units). */
export interface BooksChange {
  kind: 'new' | 'changed' | 'removed';
  account: string;
  businessDate: string;
  currency: string;
  before: bigint | null;
  after: bigint | null;
}

/**
 * What replaceExpectedBalanceDays would do with these rows, read without writing anything:
 * the counts it would return and each key it would add, change or remove.
 */
export async function previewExpectedBalanceDays(
  db: Db,
  rows: readonly ExpectedBalanceInput[],
): Promise<{ inserted: number; changed: number; unchanged: number; removed: number; changes: BooksChange[] }> {
  const stored = await sql<{ account: string; business_date: string; currency: string; balance: string }>`
    select e.account, e.business_date, e.currency, e.balance from expected_balances e
    where (e.account, e.business_date) in (
      select * from unnest(${rows.map((r) => r.account)}::text[], ${rows.map((r) => r.businessDate)}::date[])
    )`.execute(db);
  const key = (account: string, businessDate: string, currency: string) => `${account}|${businessDate}|${currency}`;
  const before = new Map(stored.rows.map((r) => [key(r.account, r.business_date, r.currency), r]));
  const inFile = new Set<string>();
  const changes: BooksChange[] = [];
  let unchanged = 0;
  for (const r of rows) {
    const k = key(r.account, r.businessDate, r.currency);
    inFile.add(k);
    const old = before.get(k);
    if (old === undefined) changes.push({ kind: 'new', account: r.account, businessDate: r.businessDate, currency: r.currency, before: null, after: r.balance });
    else if (BigInt(old.balance) !== r.balance) changes.push({ kind: 'changed', account: r.account, businessDate: r.businessDate, currency: r.currency, before: BigInt(old.balance), after: r.balance });
    else unchanged++;
  }
  for (const [k, old] of before) {
    if (!inFile.has(k)) changes.push({ kind: 'removed', account: old.account, businessDate: old.business_date, currency: old.currency, before: BigInt(old.balance), after: null });
  }
  changes.sort((a, b) => a.account.localeCompare(b.account) || a.businessDate.localeCompare(b.businessDate) || a.currency.localeCompare(b.currency));
  const count = (kind: BooksChange['kind']) => changes.filter((c) => c.kind === kind).length;
  return { inserted: count('new'), changed: count('changed'), unchanged, removed: count('removed'), changes };
}

/**
 * Makes concurrent imports of the same accounts take turns until the transaction ends: each
 * file is a day's complete books, and two of them merged would be neither. Sorted, so two
 * imports never take the locks crosswise.
 */
export async function lockBooksOfAccounts(db: Transaction<Database>, accounts: readonly string[]): Promise<void> {
  for (const account of [...new Set(accounts)].sort()) {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`wallet-recon:books:${account}`}, 0))`.execute(db);
  }
}

/** The books of one account for one business date, by currency. */
export async function listExpectedBalances(db: Db, account: string, businessDate: string): Promise<ExpectedBalance[]> {
  return listExpectedBalancesBetween(db, { from: businessDate, to: businessDate, account });
}

/** The books over a date range (one account or all), ordered by account, currency and date. */
export async function listExpectedBalancesBetween(db: Db, range: { from: string; to: string; account?: string }): Promise<ExpectedBalance[]> {
  let query = db
    .selectFrom('expected_balances')
    .select(['account', 'business_date', 'currency', 'balance', 'source', 'import_id', 'scale'])
    .where('business_date', '>=', range.from)
    .where('business_date', '<=', range.to)
    .orderBy('account')
    .orderBy('currency')
    .orderBy('business_date');
  if (range.account !== undefined) query = query.where('account', '=', range.account);
  const rows = await query.execute();
  return rows.map((r) => ({ account: r.account, businessDate: r.business_date, currency: r.currency, balance: BigInt(r.balance), source: r.source, importId: r.import_id, scale: r.scale }));
}

/** The books imports with these ids (source file and time), for reports that say what was compared. */
export async function listBooksImportsByIds(
  db: Db,
  ids: readonly number[],
): Promise<Array<{ id: number; source: string; importedAt: Date; format: BooksFormatName | null; amounts: 'major' | 'minor' | null }>> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('books_imports').select(['id', 'source', 'imported_at', 'format', 'amounts']).where('id', 'in', [...ids]).orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, source: r.source, importedAt: r.imported_at, format: r.format, amounts: r.amounts }));
}
