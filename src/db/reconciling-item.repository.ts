import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, ItemKind, ItemState, ReconcilingItemsTable, ResultSource } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A reconciling item as read: amounts exact, in minor units of `scale`. */
export interface ReconcilingItem {
  /** The item's id; null for an item derived from an unmatched entry (named by its entry id). */
  id: number | null;
  account: string;
  source: ResultSource;
  currency: string;
  kind: ItemKind;
  amount: bigint;
  scale: number;
  openedOn: string;
  expectedClear: string | null;
  state: ItemState;
  clearedOn: string | null;
  clearedBy: string | null;
  clearNote: string | null;
  note: string | null;
  evidence: string | null;
  createdBy: string | null;
  booksEntryId: number | null;
  statementEntryId: number | null;
  overdueRaisedOn: string | null;
}

export interface NewReconcilingItem {
  account: string;
  source: ResultSource;
  currency: string;
  kind: ItemKind;
  amount: bigint;
  scale: number;
  openedOn: string;
  expectedClear: string | null;
  note: string;
  evidence: string | null;
  createdBy: string;
  createdAt: Date;
}

function itemFromRow(r: Selectable<ReconcilingItemsTable>): ReconcilingItem {
  return {
    id: Number(r.id),
    account: r.account,
    source: r.source,
    currency: r.currency,
    kind: r.kind,
    amount: BigInt(r.amount),
    scale: r.scale,
    openedOn: r.opened_on,
    expectedClear: r.expected_clear,
    state: r.state,
    clearedOn: r.cleared_on,
    clearedBy: r.cleared_by,
    clearNote: r.clear_note,
    note: r.note,
    evidence: r.evidence,
    createdBy: r.created_by,
    booksEntryId: r.books_entry_id === null ? null : Number(r.books_entry_id),
    statementEntryId: r.statement_entry_id === null ? null : Number(r.statement_entry_id),
    overdueRaisedOn: r.overdue_raised_on,
  };
}

/** Adds an item and its `added` event; returns its id. */
export async function insertItem(db: Db, item: NewReconcilingItem): Promise<number> {
  const row = await db
    .insertInto('reconciling_items')
    .values({
      account: item.account,
      source: item.source,
      currency: item.currency,
      kind: item.kind,
      amount: item.amount.toString(),
      scale: item.scale,
      opened_on: item.openedOn,
      expected_clear: item.expectedClear,
      note: item.note,
      evidence: item.evidence,
      created_by: item.createdBy,
      created_at: item.createdAt,
      books_entry_id: null,
      statement_entry_id: null,
      overdue_raised_on: null,
      cleared_on: null,
      cleared_by: null,
      clear_note: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const id = Number(row.id);
  await insertItemEvent(db, { itemId: id, at: item.createdAt, actor: item.createdBy, action: 'added', note: item.note });
  return id;
}

/** One stored item; with `forUpdate`, locked until the transaction ends. */
export async function findItem(db: Db, id: number, options: { forUpdate?: boolean } = {}): Promise<ReconcilingItem | undefined> {
  let query = db.selectFrom('reconciling_items').selectAll().where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : itemFromRow(row);
}

/** Clears an open item on a date with who and why, and records the `cleared` event. */
export async function clearItem(db: Db, id: number, clear: { clearedOn: string; clearedBy: string; note: string; at: Date }): Promise<void> {
  await db.updateTable('reconciling_items').set({ state: 'cleared', cleared_on: clear.clearedOn, cleared_by: clear.clearedBy, clear_note: clear.note }).where('id', '=', id).where('state', '=', 'open').execute();
  await insertItemEvent(db, { itemId: id, at: clear.at, actor: clear.clearedBy, action: 'cleared', note: clear.note });
}

export async function insertItemEvent(db: Db, e: { itemId: number; at: Date; actor: string; action: 'added' | 'cleared' | 'overdue'; note: string | null }): Promise<void> {
  await db.insertInto('reconciling_item_events').values({ item_id: e.itemId, at: e.at, actor: e.actor, action: e.action, note: e.note }).execute();
}

/** An item's audit trail, oldest first. */
export async function listItemEvents(db: Db, itemId: number): Promise<Array<{ at: Date; actor: string; action: string; note: string | null }>> {
  return db.selectFrom('reconciling_item_events').select(['at', 'actor', 'action', 'note']).where('item_id', '=', itemId).orderBy('id').execute();
}

/** The stored items of these accounts open on a date (opened on or before it, not cleared by then), oldest first. */
export async function listItemsOpenOn(db: Db, accounts: readonly string[], date: string): Promise<ReconcilingItem[]> {
  if (accounts.length === 0) return [];
  const rows = await db
    .selectFrom('reconciling_items')
    .selectAll()
    .where('account', 'in', accounts)
    .where('opened_on', '<=', date)
    .where((eb) => eb.or([eb('cleared_on', 'is', null), eb('cleared_on', '>', date)]))
    .orderBy('opened_on')
    .orderBy('id')
    .execute();
  return rows.map(itemFromRow);
}

/** Stored items for `items list`: of one account or all, newest first (open before cleared). */
export async function listItems(db: Db, filter: { account?: string }): Promise<ReconcilingItem[]> {
  let query = db.selectFrom('reconciling_items').selectAll();
  if (filter.account !== undefined) query = query.where('account', '=', filter.account);
  const rows = await query.orderBy(sql`state = 'cleared'`).orderBy('opened_on').orderBy('id').execute();
  return rows.map(itemFromRow);
}

/** Items of these accounts open on `date` past their expected clearing date whose overdue was never raised, locked. */
export async function listOverdueToRaise(db: Transaction<Database>, accounts: readonly string[], date: string): Promise<ReconcilingItem[]> {
  if (accounts.length === 0) return [];
  const rows = await db
    .selectFrom('reconciling_items')
    .selectAll()
    .where('account', 'in', accounts)
    .where('overdue_raised_on', 'is', null)
    .where('expected_clear', '<', date)
    .where('opened_on', '<=', date)
    .where((eb) => eb.or([eb('cleared_on', 'is', null), eb('cleared_on', '>', date)]))
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.map(itemFromRow);
}

export async function markOverdueRaised(db: Db, id: number, date: string): Promise<void> {
  await db.updateTable('reconciling_items').set({ overdue_raised_on: date }).where('id', '=', id).execute();
}

/** Open items of an account and currency already raised overdue (still counting on `date`). */
export async function countOverdueOpen(db: Db, account: string, currency: string, date: string): Promise<number> {
  const row = await db
    .selectFrom('reconciling_items')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account', '=', account)
    .where('currency', '=', currency)
    .where('state', '=', 'open')
    .where('overdue_raised_on', 'is not', null)
    .where('expected_clear', '<', date)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The business dates of an account that have results, from `from` on: those an item's change re-reconciles. */
export async function listResultDatesFrom(db: Db, account: string, from: string): Promise<string[]> {
  const rows = await db.selectFrom('reconciliation_results').select('business_date').distinct().where('account', '=', account).where('business_date', '>=', from).orderBy('business_date').execute();
  return rows.map((r) => r.business_date);
}

/**
 * The items unmatched entries make of these accounts on a date, derived (never stored): a books
 * entry no active match of that date or earlier holds is an `outstanding` item of the opposite
 * amount (−500.00 paid in the books, not at the bank: +500.00); a booked entry of an end-of-day
 * statement likewise an `unrecorded` item of its own signed amount (a fee of −2.50: −2.50). Each
 * is open from its entry's date until the date of the match that takes it (a match belongs to the
 * date of its latest entry). `expectedClearDays` (the account's `matching:` rule) sets when it is due.
 */
export async function listEntryItemsOpenOn(db: Db, accounts: ReadonlyArray<{ account: string; expectedClearDays?: number }>, date: string): Promise<ReconcilingItem[]> {
  if (accounts.length === 0) return [];
  const names = accounts.map((a) => a.account);
  const days = new Map(accounts.map((a) => [a.account, a.expectedClearDays]));
  const rows = await sql<{ side: 'books' | 'statement'; id: string; account: string; currency: string; amount: string; scale: number; opened_on: string }>`
    select 'books' as side, e.id::text as id, e.account, e.currency, (-e.amount)::text as amount, e.scale, e.booking_date::text as opened_on
    from books_entries e
    where e.account = any(${names}::text[]) and e.booking_date <= ${date}::date
      and not exists (
        select 1 from entry_match_members m join entry_matches x on x.id = m.match_id
        where m.books_entry_id = e.id and x.state = 'active' and x.business_date <= ${date}::date)
    union all
    select 'statement', e.id::text, s.account, s.currency, e.amount::text, s.scale::integer, coalesce(e.booking_date, e.value_date, s.business_date)::text
    from bank_statement_entries e join bank_statements s on s.id = e.statement_pk
    where s.account = any(${names}::text[]) and not s.intraday and e.status = 'BOOK'
      and coalesce(e.booking_date, e.value_date, s.business_date) <= ${date}::date
      -- A statement line is unrecorded in the books only once the account keeps its books at entry
      -- level: from its first books entry on (earlier lines are in the opening balances; an account
      -- whose books come as closing balances alone has no entry to match them with).
      and coalesce(e.booking_date, e.value_date, s.business_date) >= (select min(b.booking_date) from books_entries b where b.account = s.account)
      and not exists (
        select 1 from entry_match_members m join entry_matches x on x.id = m.match_id
        where m.statement_entry_id = e.id and x.state = 'active' and x.business_date <= ${date}::date)
    order by 7, 1, 2`.execute(db);
  return rows.rows.map((r) => {
    const clearDays = days.get(r.account);
    return {
      id: null,
      account: r.account,
      source: 'bank',
      currency: r.currency,
      kind: r.side === 'books' ? 'outstanding' : 'unrecorded',
      amount: BigInt(r.amount),
      scale: Number(r.scale),
      openedOn: r.opened_on,
      expectedClear: clearDays === undefined ? null : addDays(r.opened_on, clearDays),
      state: 'open',
      clearedOn: null,
      clearedBy: null,
      clearNote: null,
      note: null,
      evidence: null,
      createdBy: null,
      booksEntryId: r.side === 'books' ? Number(r.id) : null,
      statementEntryId: r.side === 'statement' ? Number(r.id) : null,
      overdueRaisedOn: null,
    };
  });
}

function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** Which of these entry items (by their entry) were already raised overdue. */
export async function listRaisedEntryItems(db: Db, items: ReadonlyArray<Pick<ReconcilingItem, 'booksEntryId' | 'statementEntryId'>>): Promise<Set<string>> {
  const books = items.flatMap((i) => (i.booksEntryId === null ? [] : [String(i.booksEntryId)]));
  const statement = items.flatMap((i) => (i.statementEntryId === null ? [] : [String(i.statementEntryId)]));
  if (books.length + statement.length === 0) return new Set();
  const rows = await sql<{ key: string }>`
    select coalesce('books:' || books_entry_id::text, 'statement:' || statement_entry_id::text) as key from entry_item_overdue
    where books_entry_id = any(${books}::bigint[]) or statement_entry_id = any(${statement}::bigint[])`.execute(db);
  return new Set(rows.rows.map((r) => r.key));
}

/** The key an entry item is raised under: `books:17` or `statement:42`. */
export function entryItemKey(item: Pick<ReconcilingItem, 'booksEntryId' | 'statementEntryId'>): string {
  return item.booksEntryId !== null ? `books:${item.booksEntryId}` : `statement:${item.statementEntryId}`;
}

/** Records an entry item raised overdue on a date; false when it already was (another pass won). */
export async function markEntryItemRaised(db: Db, item: ReconcilingItem, date: string, at: Date): Promise<boolean> {
  const rows = await sql`
    insert into entry_item_overdue (account, currency, books_entry_id, statement_entry_id, expected_clear, raised_on, raised_at)
    values (${item.account}, ${item.currency}, ${item.booksEntryId}, ${item.statementEntryId}, ${item.expectedClear}::date, ${date}::date, ${at})
    on conflict do nothing returning id`.execute(db);
  return rows.rows.length === 1;
}

/** Entry items of an account and currency raised overdue that are still unmatched on `date` (no active match of that date or earlier). */
export async function countRaisedEntryItemsOpen(db: Db, account: string, currency: string, date: string): Promise<number> {
  const row = await sql<{ n: string }>`
    select count(*)::text as n from entry_item_overdue o
    where o.account = ${account} and o.currency = ${currency}
      and not exists (
        select 1 from entry_match_members m join entry_matches x on x.id = m.match_id
        where (m.books_entry_id = o.books_entry_id or m.statement_entry_id = o.statement_entry_id) and x.state = 'active' and x.business_date <= ${date}::date)`.execute(db);
  return Number(row.rows[0]!.n);
}
