import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, StatementFormatName } from './database.types.js';
import { entryColumns, STATEMENT_ENTRY_BATCH, type NewStatementBalance, type NewStatementEntry } from './bank-statement.repository.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A page of a statement sent in several, as stored while its statement waits for its other pages. */
export interface StoredPage {
  id: number;
  pageNumber: number;
  lastPage: boolean;
  statementId: string;
  sequence: bigint | null;
  format: StatementFormatName;
  currency: string;
  scale: number;
  businessDate: string;
  fromDate: string | null;
  toDate: string | null;
  createdAt: Date | null;
  balances: NewStatementBalance[];
  entries: number;
  fingerprint: string;
  sourceFile: string;
  fileSha256: string | null;
  /** The statement it is part of once whole; null while it waits. */
  statementPk: number | null;
}

export interface NewPage {
  account: string;
  pageKey: string;
  statementId: string;
  sequence: bigint | null;
  pageNumber: number;
  lastPage: boolean;
  format: StatementFormatName;
  currency: string;
  scale: number;
  businessDate: string;
  fromDate: string | null;
  toDate: string | null;
  createdAt: string | null;
  balances: readonly NewStatementBalance[];
  entries: number;
  fingerprint: string;
  importId: number;
  sourceFile: string;
  fileSha256: string | null;
}

/** Stores a page (its entries to follow, insertPageEntries); returns its id. */
export async function insertPage(db: Db, page: NewPage): Promise<number> {
  const { id } = await db
    .insertInto('bank_statement_pages')
    .values({
      account: page.account,
      page_key: page.pageKey,
      statement_id: page.statementId,
      sequence: page.sequence === null ? null : page.sequence.toString(),
      page_number: page.pageNumber,
      last_page: page.lastPage,
      format: page.format,
      currency: page.currency,
      scale: page.scale,
      business_date: page.businessDate,
      from_date: page.fromDate,
      to_date: page.toDate,
      created_at: page.createdAt,
      balances: JSON.stringify(page.balances.map((b) => ({ code: b.code, amount: b.amount.toString(), date: b.date }))),
      entries: page.entries,
      fingerprint: page.fingerprint,
      import_id: page.importId,
      source_file: page.sourceFile,
      file_sha256: page.fileSha256,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Stores entries of a page, numbered from `firstPosition`. */
export async function insertPageEntries(db: Db, pagePk: number, firstPosition: number, entries: readonly NewStatementEntry[]): Promise<void> {
  for (let start = 0; start < entries.length; start += STATEMENT_ENTRY_BATCH) {
    await db
      .insertInto('bank_statement_page_entries')
      .values(entries.slice(start, start + STATEMENT_ENTRY_BATCH).map((e, i) => ({ page_pk: pagePk, position: firstPosition + start + i, ...entryColumns(e) })))
      .execute();
  }
}

/** Removes a page still waiting for its statement (--replace of a page with other content). */
export async function deletePage(db: Db, id: number): Promise<void> {
  await db.deleteFrom('bank_statement_pages').where('id', '=', id).execute();
}

/** The stored pages of one statement (account and page key), by page number. */
export async function listPagesOf(db: Db, account: string, pageKey: string): Promise<StoredPage[]> {
  const rows = await db.selectFrom('bank_statement_pages').selectAll().where('account', '=', account).where('page_key', '=', pageKey).orderBy('page_number').execute();
  return rows.map(pageOfRow);
}

/** The pages waiting for the rest of their statement, of some accounts (all when not given). */
export async function listWaitingPages(db: Db, accounts?: readonly string[]): Promise<Array<StoredPage & { account: string; pageKey: string }>> {
  let query = db.selectFrom('bank_statement_pages').selectAll().where('statement_pk', 'is', null).orderBy('account').orderBy('page_key').orderBy('page_number');
  if (accounts !== undefined) {
    if (accounts.length === 0) return [];
    query = query.where('account', 'in', [...accounts]);
  }
  return (await query.execute()).map((r) => ({ ...pageOfRow(r), account: r.account, pageKey: r.page_key }));
}

/** The booked entries of pages as statementFingerprint keys (amount@value date), and their sum. */
export async function bookedKeysOfPages(db: Db, pageIds: readonly number[]): Promise<{ keys: string[]; booked: bigint }> {
  if (pageIds.length === 0) return { keys: [], booked: 0n };
  const rows = await sql<{ amount: string; day: string }>`
    select amount::text as amount, coalesce(value_date::text, booking_date::text, '') as day
    from bank_statement_page_entries where page_pk = any(${[...pageIds]}::integer[]) and status = 'BOOK'`.execute(db);
  return { keys: rows.rows.map((r) => `${r.amount}@${r.day}`), booked: rows.rows.reduce((sum, r) => sum + BigInt(r.amount), 0n) };
}

/** Copies the entries of pages, in page order, into a statement's entries (numbered from 1), in the database. */
export async function copyPageEntries(db: Db, statementPk: number, pageIds: readonly number[]): Promise<void> {
  await sql`
    insert into bank_statement_entries (statement_pk, position, amount, credit_debit, status, booking_date, value_date, reference, bank_reference, details, reversal, charges)
    select ${statementPk}, row_number() over (order by p.page_number, e.position), e.amount, e.credit_debit, e.status, e.booking_date, e.value_date, e.reference, e.bank_reference, e.details, e.reversal, e.charges
    from bank_statement_page_entries e join bank_statement_pages p on p.id = e.page_pk
    where p.id = any(${[...pageIds]}::integer[])`.execute(db);
}

/** Pages now part of a whole statement: they name it, and their own copies of its entries go. */
export async function attachPages(db: Db, pageIds: readonly number[], statementPk: number): Promise<void> {
  if (pageIds.length === 0) return;
  await db.updateTable('bank_statement_pages').set({ statement_pk: statementPk }).where('id', 'in', [...pageIds]).execute();
  await db.deleteFrom('bank_statement_page_entries').where('page_pk', 'in', [...pageIds]).execute();
}

function pageOfRow(r: {
  id: number;
  page_number: number;
  last_page: boolean;
  statement_id: string;
  sequence: string | null;
  format: StatementFormatName;
  currency: string;
  scale: number;
  business_date: string;
  from_date: string | null;
  to_date: string | null;
  created_at: Date | null;
  balances: Array<{ code: string; amount: string; date: string }> | string;
  entries: number;
  fingerprint: string;
  source_file: string;
  file_sha256: string | null;
  statement_pk: number | null;
}): StoredPage {
  // PGlite and pg both return jsonb parsed; a driver returning text is read as well.
  const balances = typeof r.balances === 'string' ? (JSON.parse(r.balances) as Array<{ code: string; amount: string; date: string }>) : r.balances;
  const day = (d: unknown) => (d === null ? null : d instanceof Date ? d.toISOString().slice(0, 10) : String(d));
  return {
    id: r.id,
    pageNumber: r.page_number,
    lastPage: r.last_page,
    statementId: r.statement_id,
    sequence: r.sequence === null ? null : BigInt(r.sequence),
    format: r.format,
    currency: r.currency,
    scale: r.scale,
    businessDate: day(r.business_date)!,
    fromDate: day(r.from_date),
    toDate: day(r.to_date),
    createdAt: r.created_at,
    balances: balances.map((b) => ({ code: b.code, amount: BigInt(b.amount), date: b.date })),
    entries: r.entries,
    fingerprint: r.fingerprint,
    sourceFile: r.source_file,
    fileSha256: r.file_sha256,
    statementPk: r.statement_pk,
  };
}
