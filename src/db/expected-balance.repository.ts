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

/*
 * Staged imports: a books (or statements) file of any size is streamed into a temporary table of the
 * import's transaction in batches, then checked and compared with the stored books set-based,
 * so the process holds a batch, never the file. The table is dropped when the transaction ends.
 */

// Staged rows stored per statement: ~50,000 keys take a few seconds even on a busy server.
const APPLY_SLICE_LINES = 50_000;

/** Creates the transaction's staging table (dropped at commit or rollback). */
export async function createBooksStage(trx: Transaction<Database>): Promise<void> {
  await sql`
    create temp table books_stage (
      line integer not null,
      account text not null,
      business_date date not null,
      currency text not null,
      balance numeric not null,
      scale smallint
    ) on commit drop`.execute(trx);
}

/**
 * Adds a batch of validated rows to the staging table: one statement, one parameter per column.
 * A row's scale is its own (a statement's gateway decimals) or, left out, its currency's ISO 4217 decimals.
 */
export async function stageBooksRows(trx: Transaction<Database>, rows: ReadonlyArray<ExpectedBalanceInput & { line: number; scale?: number }>): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into books_stage (line, account, business_date, currency, balance, scale)
    select * from unnest(
      ${rows.map((r) => r.line)}::integer[],
      ${rows.map((r) => r.account)}::text[],
      ${rows.map((r) => r.businessDate)}::date[],
      ${rows.map((r) => r.currency)}::text[],
      ${rows.map((r) => r.balance.toString())}::numeric[],
      ${rows.map((r) => r.scale ?? currencyDecimals(r.currency))}::smallint[]
    )`.execute(trx);
}

/**
 * Indexes and analyses the staged rows once they are all in: the checks and the comparison join
 * them with the stored books by key, and without statistics the planner takes a temporary table
 * for a few rows and loops over a million.
 */
export async function indexBooksStage(trx: Transaction<Database>): Promise<void> {
  await sql`create index on books_stage (account, business_date, currency, line)`.execute(trx);
  await sql`create index on books_stage (line)`.execute(trx);
  await sql`analyze books_stage`.execute(trx);
}

/** How many staged rows each (account, business date) has. */
export async function countStagedRowsByDay(trx: Transaction<Database>): Promise<Map<string, number>> {
  const rows = await sql<{ account: string; business_date: string; rows: string }>`
    select account, business_date::text as business_date, count(*) as rows from books_stage group by account, business_date`.execute(trx);
  return new Map(rows.rows.map((r) => [`${r.account}|${r.business_date}`, Number(r.rows)]));
}

/** Staged rows that repeat an earlier row's key (the first `limit` by line), and how many there are. */
export async function findStagedDuplicates(
  trx: Transaction<Database>,
  limit: number,
): Promise<{ count: number; listed: Array<{ line: number; firstLine: number; account: string; businessDate: string; currency: string }> }> {
  const rows = await sql<{ line: number; first_line: number; account: string; business_date: string; currency: string; total: string }>`
    with ranked as (
      select line, account, business_date, currency,
        first_value(line) over w as first_line, row_number() over w as n
      from books_stage window w as (partition by account, business_date, currency order by line)
    )
    select line, first_line, account, business_date::text as business_date, currency, count(*) over () as total
    from ranked where n > 1 order by line limit ${limit}`.execute(trx);
  return {
    count: Number(rows.rows[0]?.total ?? 0),
    listed: rows.rows.map((r) => ({ line: r.line, firstLine: r.first_line, account: r.account, businessDate: r.business_date, currency: r.currency })),
  };
}

/** What the staged rows hold: their number, accounts, date range, days and (account, currency) pairs. */
export async function summarizeBooksStage(trx: Transaction<Database>): Promise<{
  rows: number;
  accounts: string[];
  firstDate: string | null;
  lastDate: string | null;
  days: Array<{ account: string; businessDate: string }>;
  currencies: Array<{ account: string; currency: string }>;
}> {
  const totals = await sql<{ rows: string; first_date: string | null; last_date: string | null }>`
    select count(*) as rows, min(business_date)::text as first_date, max(business_date)::text as last_date from books_stage`.execute(trx);
  const days = await sql<{ account: string; business_date: string }>`
    select distinct account, business_date::text as business_date from books_stage order by account, business_date`.execute(trx);
  const currencies = await sql<{ account: string; currency: string }>`
    select distinct account, currency from books_stage order by account, currency`.execute(trx);
  const t = totals.rows[0]!;
  return {
    rows: Number(t.rows),
    accounts: [...new Set(days.rows.map((d) => d.account))],
    firstDate: t.first_date,
    lastDate: t.last_date,
    days: days.rows.map((d) => ({ account: d.account, businessDate: d.business_date })),
    currencies: currencies.rows,
  };
}

/**
 * What storing the staged rows would do, worked out set-based: the counts, and the first
 * `limit` changes (new, changed, removed keys) in account, date and currency order.
 */
export async function previewBooksStage(
  trx: Transaction<Database>,
  limit: number,
): Promise<{ inserted: number; changed: number; unchanged: number; removed: number; changes: BooksChange[] }> {
  const counts = await sql<{ inserted: string; changed: string; unchanged: string; removed: string }>`
    with staged_days as (select distinct account, business_date from books_stage)
    select
      (select count(*) from books_stage s where not exists (
        select 1 from expected_balances e where e.account = s.account and e.business_date = s.business_date and e.currency = s.currency)) as inserted,
      (select count(*) from books_stage s join expected_balances e
        on e.account = s.account and e.business_date = s.business_date and e.currency = s.currency where e.balance <> s.balance) as changed,
      (select count(*) from books_stage s join expected_balances e
        on e.account = s.account and e.business_date = s.business_date and e.currency = s.currency where e.balance = s.balance) as unchanged,
      (select count(*) from expected_balances e join staged_days d on d.account = e.account and d.business_date = e.business_date
        where not exists (select 1 from books_stage s where s.account = e.account and s.business_date = e.business_date and s.currency = e.currency)) as removed`.execute(trx);
  const c = counts.rows[0]!;
  const changes =
    limit <= 0
      ? []
      : (
          await sql<{ kind: BooksChange['kind']; account: string; business_date: string; currency: string; before: string | null; after: string | null }>`
            with staged_days as (select distinct account, business_date from books_stage)
            select * from (
              select case when e.balance is null then 'new' else 'changed' end as kind, s.account, s.business_date::text as business_date, s.currency,
                e.balance::text as before, s.balance::text as after
              from books_stage s left join expected_balances e
                on e.account = s.account and e.business_date = s.business_date and e.currency = s.currency
              where e.balance is null or e.balance <> s.balance
              union all
              select 'removed', e.account, e.business_date::text, e.currency, e.balance::text, null
              from expected_balances e join staged_days d on d.account = e.account and d.business_date = e.business_date
              where not exists (select 1 from books_stage s where s.account = e.account and s.business_date = e.business_date and s.currency = e.currency)
            ) c order by account, business_date, currency limit ${limit}`.execute(trx)
        ).rows.map((r) => ({
          kind: r.kind,
          account: r.account,
          businessDate: r.business_date,
          currency: r.currency,
          before: r.before === null ? null : BigInt(r.before),
          after: r.after === null ? null : BigInt(r.after),
        }));
  return { inserted: Number(c.inserted), changed: Number(c.changed), unchanged: Number(c.unchanged), removed: Number(c.removed), changes };
}

/** The first `limit` stored keys the staged rows would remove (their days' currencies the rows lack). */
export async function listStagedRemovals(trx: Transaction<Database>, limit: number): Promise<BooksChange[]> {
  const rows = await sql<{ account: string; business_date: string; currency: string; balance: string }>`
    with staged_days as (select distinct account, business_date from books_stage)
    select e.account, e.business_date::text as business_date, e.currency, e.balance::text as balance
    from expected_balances e join staged_days d on d.account = e.account and d.business_date = e.business_date
    where not exists (select 1 from books_stage s where s.account = e.account and s.business_date = e.business_date and s.currency = e.currency)
    order by e.account, e.business_date, e.currency limit ${limit}`.execute(trx);
  return rows.rows.map((r) => ({ kind: 'removed' as const, account: r.account, businessDate: r.business_date, currency: r.currency, before: BigInt(r.balance), after: null }));
}

/**
 * Stores the staged rows as one books import: each staged (account, business date) becomes
 * exactly its staged rows (keys inserted or replaced, naming this import; the day's other keys
 * removed). Call after previewBooksStage in the same locked transaction for the counts.
 */
export async function applyBooksStage(
  trx: Transaction<Database>,
  source: string,
  importedAt: Date,
  how: { rows: number; format?: BooksFormatName; amounts?: 'major' | 'minor' },
): Promise<{ importId: number; removed: number }> {
  const { id: importId } = await trx
    .insertInto('books_imports')
    .values({ source, imported_at: importedAt, rows: how.rows, format: how.format ?? null, amounts: how.amounts ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  const removed = await sql`
    delete from expected_balances e
    using (select distinct account, business_date from books_stage) d
    where d.account = e.account and d.business_date = e.business_date
      and not exists (select 1 from books_stage s where s.account = e.account and s.business_date = e.business_date and s.currency = e.currency)`.execute(trx);
  // In slices of lines: each statement stays well inside the statement timeout, however large the file.
  const span = await sql<{ first: number | null; last: number | null }>`select min(line) as first, max(line) as last from books_stage`.execute(trx);
  const { first, last } = span.rows[0]!;
  for (let from = first ?? 1; first !== null && last !== null && from <= last; from += APPLY_SLICE_LINES) {
    await sql`
      insert into expected_balances (account, business_date, currency, balance, source, imported_at, import_id, scale)
      select s.account, s.business_date, s.currency, s.balance, ${source}, ${importedAt}, ${importId}::integer, s.scale from books_stage s
      where s.line >= ${from}::integer and s.line < ${from + APPLY_SLICE_LINES}::integer
      on conflict (account, business_date, currency)
      do update set balance = excluded.balance, source = excluded.source, imported_at = excluded.imported_at, import_id = excluded.import_id, scale = excluded.scale`.execute(trx);
  }
  return { importId, removed: Number(removed.numAffectedRows ?? 0n) };
}

/** The staged (account, business date) days whose rows differ from the stored books (a key new, changed or removed), with how many keys differ. */
export async function listStagedChangedDays(trx: Transaction<Database>): Promise<Array<{ account: string; businessDate: string; changes: number }>> {
  const rows = await sql<{ account: string; business_date: string; changes: string }>`
    with staged_days as (select distinct account, business_date from books_stage)
    select account, business_date::text as business_date, count(*) as changes from (
      select s.account, s.business_date from books_stage s left join expected_balances e
        on e.account = s.account and e.business_date = s.business_date and e.currency = s.currency
      where e.balance is null or e.balance <> s.balance
      union all
      select e.account, e.business_date from expected_balances e join staged_days d on d.account = e.account and d.business_date = e.business_date
      where not exists (select 1 from books_stage s where s.account = e.account and s.business_date = e.business_date and s.currency = e.currency)
    ) c group by account, business_date order by account, business_date`.execute(trx);
  return rows.rows.map((r) => ({ account: r.account, businessDate: r.business_date, changes: Number(r.changes) }));
}

/** Takes these (account, business date) days out of the stage: applyBooksStage then leaves them as stored. */
export async function dropStagedDays(trx: Transaction<Database>, days: ReadonlyArray<{ account: string; businessDate: string }>): Promise<void> {
  if (days.length === 0) return;
  await sql`
    delete from books_stage s using unnest(${days.map((d) => d.account)}::text[], ${days.map((d) => d.businessDate)}::date[]) as d(account, business_date)
    where s.account = d.account and s.business_date = d.business_date`.execute(trx);
}
