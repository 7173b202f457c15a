import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** An unmatched books entry, as matching reads it. */
export interface UnmatchedBooksRow {
  id: string;
  currency: string;
  date: string;
  amount: bigint;
  reference: string | null;
}

/** An unmatched booked entry of an end-of-day statement, as matching reads it. */
export interface UnmatchedStatementRow {
  id: string;
  currency: string;
  date: string;
  amount: bigint;
  reference: string | null;
  bankReference: string | null;
  details: string | null;
}

/**
 * One string for each distinct value: a month's entries carry a few dozen dates and currencies,
 * and a hundred thousand rows read from the database would otherwise hold a copy each.
 */
function interning(): (value: string) => string {
  const seen = new Map<string, string>();
  return (value) => {
    const known = seen.get(value);
    if (known !== undefined) return known;
    seen.set(value, value);
    return value;
  };
}

/**
 * The rows as read, their amounts made exact and their dates and currencies shared: changed in
 * place rather than copied, because a month's first run reads a hundred thousand of each side and
 * a copy would hold twice the memory until the collector catches up.
 */
function inPlace<T extends { currency: string; date: string; amount: string }>(rows: T[]): Array<Omit<T, 'amount'> & { amount: bigint }> {
  const same = interning();
  for (const row of rows) {
    const r = row as unknown as { currency: string; date: string; amount: string | bigint };
    r.currency = same(r.currency);
    r.date = same(r.date);
    r.amount = BigInt(r.amount);
  }
  return rows as unknown as Array<Omit<T, 'amount'> & { amount: bigint }>;
}

// Who the rules' own matches and undos are recorded as (matching/matching-service.ts says the same).
const RULES = 'wallet-recon';

/**
 * The account's books entries the rules may match: in no active match, and in no match a person
 * undid (the rules leave those to people: what someone unmatched is not matched back behind them).
 */
export async function listUnmatchedBooksEntries(db: Db, account: string, range: { from?: string; to?: string } = {}): Promise<UnmatchedBooksRow[]> {
  const rows = await sql<{ id: string; currency: string; date: string; amount: string; reference: string | null }>`
    select e.id::text as id, e.currency, e.booking_date::text as date, e.amount::text as amount, e.reference
    from books_entries e
    where e.account = ${account}
      and (${range.from ?? null}::date is null or e.booking_date >= ${range.from ?? null}::date)
      and (${range.to ?? null}::date is null or e.booking_date <= ${range.to ?? null}::date)
      and not exists (select 1 from entry_match_members m join entry_matches x on x.id = m.match_id where m.books_entry_id = e.id and (x.state = 'active' or x.undone_by <> ${RULES}))
    order by e.booking_date, e.id`.execute(db);
  return inPlace(rows.rows);
}

/** The account's booked entries of end-of-day statements the rules may match (as listUnmatchedBooksEntries). */
export async function listUnmatchedStatementEntries(db: Db, account: string, range: { from?: string; to?: string } = {}): Promise<UnmatchedStatementRow[]> {
  const rows = await sql<{ id: string; currency: string; date: string; amount: string; reference: string | null; bankReference: string | null; details: string | null }>`
    select e.id::text as id, s.currency, coalesce(e.booking_date, e.value_date, s.business_date)::text as date, e.amount::text as amount, e.reference, e.bank_reference as "bankReference", e.details
    from bank_statement_entries e join bank_statements s on s.id = e.statement_pk
    where s.account = ${account} and not s.intraday and e.status = 'BOOK'
      and (${range.from ?? null}::date is null or coalesce(e.booking_date, e.value_date, s.business_date) >= ${range.from ?? null}::date)
      and (${range.to ?? null}::date is null or coalesce(e.booking_date, e.value_date, s.business_date) <= ${range.to ?? null}::date)
      and not exists (select 1 from entry_match_members m join entry_matches x on x.id = m.match_id where m.statement_entry_id = e.id and (x.state = 'active' or x.undone_by <> ${RULES}))
    order by 3, e.id`.execute(db);
  return inPlace(rows.rows);
}

export interface NewMatch {
  account: string;
  currency: string;
  businessDate: string;
  rule: string;
  matchedBy: string;
  note: string | null;
  books: readonly string[];
  statement: readonly string[];
}

// Matches written per statement: a month of 100,000 entries is a hundred statements, not one.
const MATCH_BATCH = 2_000;

/** Records matches and their members; returns their ids in the order given. */
export async function insertMatches(db: Db, matches: readonly NewMatch[], createdAt: Date): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < matches.length; start += MATCH_BATCH) {
    const batch = matches.slice(start, start + MATCH_BATCH);
    const inserted = await sql<{ id: string; ord: number }>`
      insert into entry_matches (account, currency, business_date, rule, state, matched_by, note, created_at)
      select account, currency, business_date, rule, 'active', matched_by, note, ${createdAt}
      from unnest(${batch.map((m) => m.account)}::text[], ${batch.map((m) => m.currency)}::text[], ${batch.map((m) => m.businessDate)}::date[],
        ${batch.map((m) => m.rule)}::text[], ${batch.map((m) => m.matchedBy)}::text[], ${batch.map((m) => m.note)}::text[]) with ordinality
        as t(account, currency, business_date, rule, matched_by, note, ord)
      order by ord
      returning id::text as id`.execute(db);
    const batchIds = inserted.rows.map((r) => r.id);
    const matchIds: string[] = [];
    const booksIds: Array<string | null> = [];
    const statementIds: Array<string | null> = [];
    batch.forEach((m, i) => {
      for (const b of m.books) {
        matchIds.push(batchIds[i]!);
        booksIds.push(b);
        statementIds.push(null);
      }
      for (const s of m.statement) {
        matchIds.push(batchIds[i]!);
        booksIds.push(null);
        statementIds.push(s);
      }
    });
    await sql`
      insert into entry_match_members (match_id, books_entry_id, statement_entry_id)
      select * from unnest(${matchIds}::bigint[], ${booksIds}::bigint[], ${statementIds}::bigint[])`.execute(db);
    ids.push(...batchIds);
  }
  return ids;
}

/** Marks active matches undone (they stay on record); returns the ids undone. */
export async function undoMatches(db: Db, ids: readonly string[], by: string, at: Date, note: string): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }>`
    update entry_matches set state = 'undone', undone_by = ${by}, undone_at = ${at}, undo_note = ${note}
    where id = any(${[...ids]}::bigint[]) and state = 'active'
    returning id::text as id`.execute(db);
  return rows.rows.map((r) => r.id).sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
}

/** The active matches that hold any of these books entries (or statement entries). */
export async function activeMatchesOf(db: Db, entries: { books?: readonly string[]; statement?: readonly string[] }): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    select distinct x.id::text as id from entry_match_members m join entry_matches x on x.id = m.match_id
    where x.state = 'active' and (m.books_entry_id = any(${[...(entries.books ?? [])]}::bigint[]) or m.statement_entry_id = any(${[...(entries.statement ?? [])]}::bigint[]))`.execute(db);
  return rows.rows.map((r) => r.id);
}

export interface MatchListing {
  id: string;
  account: string;
  currency: string;
  businessDate: string;
  rule: string;
  state: 'active' | 'undone';
  matchedBy: string;
  note: string | null;
  createdAt: Date;
  undoneBy: string | null;
  undoneAt: Date | null;
  undoNote: string | null;
  books: string[];
  statement: string[];
}

/** The matches of a date (active ones, or all with `all`), optionally of some accounts. */
export async function listMatches(db: Db, filter: { date?: string; accounts?: readonly string[]; all?: boolean; ids?: readonly string[] }): Promise<MatchListing[]> {
  const rows = await sql<{
    id: string;
    account: string;
    currency: string;
    business_date: string;
    rule: string;
    state: 'active' | 'undone';
    matched_by: string;
    note: string | null;
    created_at: Date;
    undone_by: string | null;
    undone_at: Date | null;
    undo_note: string | null;
    books: string[] | null;
    statement: string[] | null;
  }>`
    select x.id::text as id, x.account, x.currency, x.business_date::text as business_date, x.rule, x.state, x.matched_by, x.note, x.created_at, x.undone_by, x.undone_at, x.undo_note,
      (select array_agg(m.books_entry_id::text order by m.books_entry_id) from entry_match_members m where m.match_id = x.id and m.books_entry_id is not null) as books,
      (select array_agg(m.statement_entry_id::text order by m.statement_entry_id) from entry_match_members m where m.match_id = x.id and m.statement_entry_id is not null) as statement
    from entry_matches x
    where (${filter.date ?? null}::date is null or x.business_date = ${filter.date ?? null}::date)
      and (${filter.accounts === undefined}::boolean or x.account = any(${[...(filter.accounts ?? [])]}::text[]))
      and (${filter.ids === undefined}::boolean or x.id = any(${[...(filter.ids ?? [])]}::bigint[]))
      and (${filter.all === true}::boolean or x.state = 'active')
    order by x.account, x.business_date, x.id`.execute(db);
  return rows.rows.map((r) => ({
    id: r.id,
    account: r.account,
    currency: r.currency,
    businessDate: r.business_date,
    rule: r.rule,
    state: r.state,
    matchedBy: r.matched_by,
    note: r.note,
    createdAt: r.created_at,
    undoneBy: r.undone_by,
    undoneAt: r.undone_at,
    undoNote: r.undo_note,
    books: r.books ?? [],
    statement: r.statement ?? [],
  }));
}

/** Books entries by id: their account, currency, date, amount, and whether an active match holds them. */
export async function findBooksEntries(db: Db, ids: readonly string[]): Promise<Array<{ id: string; account: string; currency: string; date: string; amount: bigint; matched: boolean }>> {
  const rows = await sql<{ id: string; account: string; currency: string; date: string; amount: string; matched: boolean }>`
    select e.id::text as id, e.account, e.currency, e.booking_date::text as date, e.amount::text as amount,
      exists (select 1 from entry_match_members m join entry_matches x on x.id = m.match_id where m.books_entry_id = e.id and x.state = 'active') as matched
    from books_entries e where e.id = any(${[...ids]}::bigint[])`.execute(db);
  return rows.rows.map((r) => ({ ...r, amount: BigInt(r.amount) }));
}

/** Statement entries by id, as findBooksEntries. */
export async function findStatementEntries(db: Db, ids: readonly string[]): Promise<Array<{ id: string; account: string; currency: string; date: string; amount: bigint; matched: boolean }>> {
  const rows = await sql<{ id: string; account: string; currency: string; date: string; amount: string; matched: boolean }>`
    select e.id::text as id, s.account, s.currency, coalesce(e.booking_date, e.value_date, s.business_date)::text as date, e.amount::text as amount,
      exists (select 1 from entry_match_members m join entry_matches x on x.id = m.match_id where m.statement_entry_id = e.id and x.state = 'active') as matched
    from bank_statement_entries e join bank_statements s on s.id = e.statement_pk where e.id = any(${[...ids]}::bigint[])`.execute(db);
  return rows.rows.map((r) => ({ ...r, amount: BigInt(r.amount) }));
}
