import { sql, type Kysely, type Transaction } from 'kysely';
import type { BankStatementsTable, Database, StatementFormatName, StatementProofName } from './database.types.js';
import type { Insertable } from 'kysely';

type Db = Kysely<Database> | Transaction<Database>;

/** A statement row as written (the id is the table's). */
export type NewStatementRow = Omit<Insertable<BankStatementsTable>, 'id'>;

export interface NewStatementBalance {
  code: string;
  amount: bigint;
  date: string;
}

export interface NewStatementEntry {
  amount: bigint;
  creditDebit: 'credit' | 'debit';
  status: string;
  bookingDate: string | null;
  valueDate: string | null;
  reference: string | null;
  bankReference: string | null;
  details: string | null;
  reversal: boolean;
  charges?: bigint | null;
}

/** A stored statement as identity checks see it. */
export interface StoredStatementIdentity {
  id: number;
  statementId: string;
  format: StatementFormatName;
  fingerprint: string;
  businessDate: string;
}

// 12 bind parameters per entry row: 5,000 rows stay under PostgreSQL's 65,535.
const ENTRY_BATCH = 5_000;

/** Records one `statements import` command; returns its id. */
export async function insertStatementImport(db: Db, row: { importedAt: Date; files: string; statements: number; replaced: number }): Promise<number> {
  const inserted = await db
    .insertInto('statement_imports')
    .values({ imported_at: row.importedAt, files: row.files, statements: row.statements, replaced: row.replaced })
    .returning('id')
    .executeTakeFirstOrThrow();
  return inserted.id;
}

/** Sets the counts of an import once they are known. */
export async function updateStatementImport(db: Db, id: number, counts: { statements: number; replaced: number }): Promise<void> {
  await db.updateTable('statement_imports').set({ statements: counts.statements, replaced: counts.replaced }).where('id', '=', id).execute();
}

/**
 * The stored statement that is the same as one read: the same account and statement id, or (an
 * end-of-day statement) the same account, closing date and sequence number — the same statement
 * from another format, whose ids differ.
 */
export async function findSameStatement(
  db: Db,
  key: { account: string; statementId: string; businessDate: string; sequence: bigint | null; intraday: boolean },
): Promise<StoredStatementIdentity | undefined> {
  let query = db
    .selectFrom('bank_statements')
    .select(['id', 'statement_id', 'format', 'fingerprint', 'business_date'])
    .where('account', '=', key.account);
  query = query.where((eb) => {
    const byId = eb('statement_id', '=', key.statementId);
    if (key.intraday || key.sequence === null) return byId;
    return eb.or([byId, eb.and([eb('intraday', '=', false), eb('business_date', '=', key.businessDate), eb('sequence', '=', String(key.sequence))])]);
  });
  const rows = await query.orderBy('id').execute();
  // The row of the same id first, when there are both.
  const row = rows.find((r) => r.statement_id === key.statementId) ?? rows[0];
  return row === undefined ? undefined : { id: row.id, statementId: row.statement_id, format: row.format, fingerprint: row.fingerprint, businessDate: row.business_date };
}

/** Stores a statement whole: the row, its balances and its entries. Returns its id. */
export async function insertStatement(db: Db, row: NewStatementRow, balances: readonly NewStatementBalance[], entries: readonly NewStatementEntry[]): Promise<number> {
  const id = await insertStatementHead(db, row, balances);
  for (let start = 0; start < entries.length; start += ENTRY_BATCH) await insertStatementEntries(db, id, start + 1, entries.slice(start, start + ENTRY_BATCH));
  return id;
}

/** Stores a statement's row and balances, its entries to follow (insertStatementEntries). Returns its id. */
export async function insertStatementHead(db: Db, row: NewStatementRow, balances: readonly NewStatementBalance[]): Promise<number> {
  const { id } = await db.insertInto('bank_statements').values(row).returning('id').executeTakeFirstOrThrow();
  if (balances.length > 0) {
    await db
      .insertInto('bank_statement_balances')
      .values(balances.map((b, i) => ({ statement_pk: id, position: i + 1, code: b.code, amount: b.amount.toString(), balance_date: b.date })))
      .execute();
  }
  return id;
}

/** How many entries one insert writes (12 bind parameters each: under PostgreSQL's 65,535). */
export const STATEMENT_ENTRY_BATCH = ENTRY_BATCH;

/** Stores entries of a statement, numbered from `firstPosition`, in inserts of ENTRY_BATCH rows. */
export async function insertStatementEntries(db: Db, statementPk: number, firstPosition: number, entries: readonly NewStatementEntry[]): Promise<void> {
  for (let start = 0; start < entries.length; start += ENTRY_BATCH) {
    await db
      .insertInto('bank_statement_entries')
      .values(entries.slice(start, start + ENTRY_BATCH).map((e, i) => ({ statement_pk: statementPk, position: firstPosition + start + i, ...entryColumns(e) })))
      .execute();
  }
}

/** An entry's columns as stored (statement and page entries alike). */
export function entryColumns(e: NewStatementEntry) {
  return {
    amount: e.amount.toString(),
    credit_debit: e.creditDebit,
    status: e.status,
    booking_date: e.bookingDate,
    value_date: e.valueDate,
    reference: e.reference,
    bank_reference: e.bankReference,
    details: e.details,
    reversal: e.reversal,
    charges: e.charges === undefined || e.charges === null ? null : e.charges.toString(),
  };
}

/**
 * Links the entries of the accounts' notifications (camt.054) to the end-of-day statement that
 * books the same entry: the one with the same bank reference (AcctSvcrRef), the latest stored if
 * several. Entries already linked keep their link.
 */
export async function linkNotificationEntries(db: Db, accounts: readonly string[]): Promise<void> {
  if (accounts.length === 0) return;
  await sql`
    update bank_statement_entries n set linked_statement_pk = m.statement_pk
    from (
      select distinct on (ne.statement_pk, ne.position) ne.statement_pk as npk, ne.position as npos, e.statement_pk
      from bank_statement_entries ne
      join bank_statements ns on ns.id = ne.statement_pk and ns.format = 'camt.054' and ns.account = any(${[...accounts]}::text[])
      join bank_statements s on s.account = ns.account and not s.intraday
      join bank_statement_entries e on e.statement_pk = s.id and e.bank_reference = ne.bank_reference
      where ne.linked_statement_pk is null and ne.bank_reference is not null
      order by ne.statement_pk, ne.position, s.id desc
    ) m
    where n.statement_pk = m.npk and n.position = m.npos`.execute(db);
}

/** Removes a stored statement (its balances and entries go with it): --replace, before the new one is stored. */
export async function deleteStatement(db: Db, id: number): Promise<void> {
  await db.deleteFrom('bank_statements').where('id', '=', id).execute();
}

/** Records that a statement was replaced by other content (--replace). */
export async function recordStatementReplacement(
  db: Db,
  row: { account: string; statementId: string; importId: number; replacedAt: Date; oldFingerprint: string; newFingerprint: string },
): Promise<void> {
  await db
    .insertInto('statement_replacements')
    .values({ account: row.account, statement_id: row.statementId, import_id: row.importId, replaced_at: row.replacedAt, old_fingerprint: row.oldFingerprint, new_fingerprint: row.newFingerprint })
    .execute();
}

/** One stored statement with what its proof needs (amounts in minor units as digit strings). */
export interface StatementChainRow {
  id: number;
  statement_id: string;
  intraday: boolean;
  scale: number;
  sequence: string | null;
  business_date: string;
  closing: string | null;
  opbd: string | null;
  prcd: string | null;
  itbd: string | null;
  booked: string;
  proof: StatementProofName;
  proof_residual: string | null;
  proof_missing: string | null;
  proof_reason: string | null;
}

/** Every statement of an account in the order they chain: closing date, then sequence number, then creation time, then id. */
export async function listStatementChain(db: Db, account: string): Promise<StatementChainRow[]> {
  const rows = await sql<StatementChainRow>`
    select s.id, s.statement_id, s.intraday, s.scale, s.sequence::text as sequence, s.business_date::text as business_date, s.closing::text as closing,
      (select b.amount::text from bank_statement_balances b where b.statement_pk = s.id and b.code = 'OPBD' order by b.position limit 1) as opbd,
      (select b.amount::text from bank_statement_balances b where b.statement_pk = s.id and b.code = 'PRCD' order by b.position limit 1) as prcd,
      (select b.amount::text from bank_statement_balances b where b.statement_pk = s.id and b.code = 'ITBD' order by b.balance_date desc, b.position desc limit 1) as itbd,
      coalesce((select sum(e.amount) from bank_statement_entries e where e.statement_pk = s.id and e.status = 'BOOK'), 0)::text as booked,
      s.proof, s.proof_residual::text as proof_residual, s.proof_missing, s.proof_reason
    from bank_statements s
    where s.account = ${account}
    order by s.business_date, s.sequence nulls first, s.created_at nulls first, s.id`.execute(db);
  return rows.rows;
}

/** Writes a statement's proof; only called when it changed (the owed trigger fires on the update). */
export async function updateStatementProof(db: Db, id: number, proof: { proof: StatementProofName; residual: bigint | null; missing: string | null; reason: string | null }): Promise<void> {
  await db
    .updateTable('bank_statements')
    .set({ proof: proof.proof, proof_residual: proof.residual === null ? null : proof.residual.toString(), proof_missing: proof.missing, proof_reason: proof.reason })
    .where('id', '=', id)
    .execute();
}

/**
 * The statement a bank date is reconciled from: of the end-of-day statements closing on it, the
 * final one — the highest sequence number, then the latest creation time, never the order they
 * were stored in. `conflict` names another of that date that nothing orders before it (no or the
 * same sequence and creation time) and whose closing differs: which balance is the bank's is
 * then unknown.
 */
export interface ClosingStatement {
  id: number;
  statementId: string;
  currency: string;
  scale: number;
  closing: bigint;
  proof: StatementProofName;
  proofResidual: bigint | null;
  proofMissing: string | null;
  proofReason: string | null;
  conflict: { statementId: string; closing: bigint } | null;
}

export async function findClosingStatement(db: Db, account: string, businessDate: string): Promise<ClosingStatement | undefined> {
  const rows = await db
    .selectFrom('bank_statements')
    .select(['id', 'statement_id', 'currency', 'scale', 'closing', 'proof', 'proof_residual', 'proof_missing', 'proof_reason', 'sequence', 'created_at'])
    .where('account', '=', account)
    .where('business_date', '=', businessDate)
    .where('intraday', '=', false)
    .orderBy(sql`sequence desc nulls last`)
    .orderBy(sql`created_at desc nulls last`)
    .orderBy('id', 'desc')
    .execute();
  const row = rows[0];
  if (row === undefined) return undefined;
  const time = (d: Date | null) => (d === null ? null : new Date(d).getTime());
  const rival = rows.slice(1).find((r) => r.sequence === row.sequence && time(r.created_at) === time(row.created_at) && r.closing !== row.closing);
  return {
    id: row.id,
    statementId: row.statement_id,
    currency: row.currency,
    scale: row.scale,
    closing: BigInt(row.closing!),
    proof: row.proof,
    proofResidual: row.proof_residual === null ? null : BigInt(row.proof_residual),
    proofMissing: row.proof_missing,
    proofReason: row.proof_reason,
    conflict: rival === undefined ? null : { statementId: rival.statement_id, closing: BigInt(rival.closing!) },
  };
}

/** The closing booked balance of the account's latest end-of-day statement before a date (for the movement). */
export async function findPreviousClosing(db: Db, account: string, businessDate: string): Promise<{ closing: bigint; scale: number; currency: string } | undefined> {
  const row = await db
    .selectFrom('bank_statements')
    .select(['closing', 'scale', 'currency'])
    .where('account', '=', account)
    .where('business_date', '<', businessDate)
    .where('intraday', '=', false)
    .orderBy('business_date', 'desc')
    .orderBy(sql`sequence desc nulls last`)
    .orderBy(sql`created_at desc nulls last`)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return row === undefined ? undefined : { closing: BigInt(row.closing!), scale: row.scale, currency: row.currency };
}

/** The latest closing date among the end-of-day statements of each account (absent: none yet). */
export async function latestStatementDates(db: Db, accounts: readonly string[]): Promise<Map<string, string>> {
  if (accounts.length === 0) return new Map();
  const rows = await db
    .selectFrom('bank_statements')
    .select(['account', (eb) => eb.fn.max('business_date').as('latest')])
    .where('account', 'in', [...accounts])
    .where('intraday', '=', false)
    .groupBy('account')
    .execute();
  return new Map(rows.map((r) => [r.account, String(r.latest)]));
}

/** One row of `statements list`. */
export interface StatementListRow {
  account: string;
  statement_id: string;
  format: StatementFormatName;
  intraday: boolean;
  sequence: string | null;
  business_date: string;
  currency: string;
  scale: number;
  opening: string | null;
  closing: string | null;
  entries: number;
  proof: StatementProofName;
  proof_residual: string | null;
  proof_missing: string | null;
  id: number;
  file_sha256: string | null;
  /** A statement assembled from pages: their numbers (`1, 2`); null for a statement of one page. */
  pages: string | null;
}

/** Stored statements, by closing date, account and sequence; optionally of some accounts and a date range. */
export async function listStatements(db: Db, filter: { accounts?: readonly string[]; from?: string; to?: string; id?: number }): Promise<StatementListRow[]> {
  let query = db
    .selectFrom('bank_statements')
    .select(['account', 'statement_id', 'format', 'intraday', 'sequence', 'business_date', 'currency', 'scale', 'opening', 'closing', 'entries', 'proof', 'proof_residual', 'proof_missing', 'id', 'file_sha256'])
    .select(sql<string | null>`(select string_agg(p.page_number::text, ', ' order by p.page_number) from bank_statement_pages p where p.statement_pk = bank_statements.id)`.as('pages'))
    .orderBy('business_date')
    .orderBy('account')
    .orderBy('sequence')
    .orderBy('id');
  if (filter.accounts !== undefined) {
    if (filter.accounts.length === 0) return [];
    query = query.where('account', 'in', [...filter.accounts]);
  }
  if (filter.id !== undefined) query = query.where('id', '=', filter.id);
  if (filter.from !== undefined) query = query.where('business_date', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('business_date', '<=', filter.to);
  return query.execute();
}

/** The statements of these ids (a report's results name them): which statement, its format, proof and file. */
export async function listStatementsByIds(db: Db, ids: readonly number[]): Promise<Array<{ account: string; business_date: string; statement_id: string; format: string; proof: string; source_file: string }>> {
  if (ids.length === 0) return [];
  return db.selectFrom('bank_statements').select(['account', 'business_date', 'statement_id', 'format', 'proof', 'source_file']).where('id', 'in', [...ids]).execute();
}
