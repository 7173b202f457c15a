import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What a business date was signed on, per account: the day's snapshot, its books and its cases. */
export interface SignoffInputs {
  accounts: Array<{
    account: string;
    /** The authoritative run of the date (null: nothing captured). */
    runId: number | null;
    /** The latest books import among the date's expected balances (null: no books). */
    booksImportId: number | null;
    /** The date's discrepancy cases and their state, by case id. */
    cases: Record<string, string>;
  }>;
}

export interface Signoff {
  id: number;
  accountSet: string[];
  businessDate: string;
  preparedBy: string;
  preparedAt: Date;
  approvedBy: string | null;
  approvedAt: Date | null;
  reportSha256: string;
  inputs: SignoffInputs;
  invalidatedAt: Date | null;
  /** What changed after sign-off, one sentence each. */
  invalidation: string[] | null;
}

const columns = ['id', 'account_set', 'business_date', 'prepared_by', 'prepared_at', 'approved_by', 'approved_at', 'report_sha256', 'inputs', 'invalidated_at', 'invalidation'] as const;

type Row = { id: number; account_set: string[]; business_date: string; prepared_by: string; prepared_at: Date; approved_by: string | null; approved_at: Date | null; report_sha256: string; inputs: unknown; invalidated_at: Date | null; invalidation: unknown };

function signoffFromRow(r: Row): Signoff {
  return {
    id: r.id,
    accountSet: r.account_set,
    businessDate: r.business_date,
    preparedBy: r.prepared_by,
    preparedAt: r.prepared_at,
    approvedBy: r.approved_by,
    approvedAt: r.approved_at,
    reportSha256: r.report_sha256,
    inputs: r.inputs as SignoffInputs,
    invalidatedAt: r.invalidated_at,
    invalidation: r.invalidation as string[] | null,
  };
}

export async function insertSignoff(
  db: Db,
  s: { accountSet: readonly string[]; businessDate: string; preparedBy: string; preparedAt: Date; reportSha256: string; reportHtml: string; inputs: SignoffInputs },
): Promise<Signoff> {
  const row = await db
    .insertInto('signoffs')
    .values({
      account_set: [...s.accountSet],
      business_date: s.businessDate,
      prepared_by: s.preparedBy,
      prepared_at: s.preparedAt,
      report_sha256: s.reportSha256,
      report_html: s.reportHtml,
      inputs: JSON.stringify(s.inputs),
    })
    .returning(columns)
    .executeTakeFirstOrThrow();
  return signoffFromRow(row);
}

/** The sign-offs of a date, newest first. */
export async function listSignoffsOfDate(db: Db, businessDate: string): Promise<Signoff[]> {
  return (await db.selectFrom('signoffs').select(columns).where('business_date', '=', businessDate).orderBy('id', 'desc').execute()).map(signoffFromRow);
}

export async function findSignoff(db: Db, id: number, options: { forUpdate?: boolean } = {}): Promise<Signoff | undefined> {
  let query = db.selectFrom('signoffs').select(columns).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row === undefined ? undefined : signoffFromRow(row);
}

/** The sealed report's bytes as stored. */
export async function readSignoffReport(db: Db, id: number): Promise<{ html: string; sha256: string; businessDate: string } | undefined> {
  const row = await db.selectFrom('signoffs').select(['report_html', 'report_sha256', 'business_date']).where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : { html: row.report_html, sha256: row.report_sha256, businessDate: row.business_date };
}

/** Sign-offs still standing (not invalidated), oldest first. */
export async function listLiveSignoffs(db: Db): Promise<Signoff[]> {
  return (await db.selectFrom('signoffs').select(columns).where('invalidated_at', 'is', null).orderBy('id').execute()).map(signoffFromRow);
}

/** Writes the approval once; false when it was already approved (or invalidated) meanwhile. */
export async function markSignoffApproved(db: Db, id: number, by: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('signoffs')
    .set({ approved_by: by, approved_at: at })
    .where('id', '=', id)
    .where('approved_by', 'is', null)
    .where('invalidated_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Writes the invalidation once; false when another process recorded it first. */
export async function markSignoffInvalidated(db: Db, id: number, changes: readonly string[], at: Date): Promise<boolean> {
  const result = await db
    .updateTable('signoffs')
    .set({ invalidated_at: at, invalidation: JSON.stringify(changes) })
    .where('id', '=', id)
    .where('invalidated_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** The current inputs of a business date for the given accounts (see SignoffInputs). */
export async function loadSignoffInputs(db: Db, accounts: readonly string[], businessDate: string): Promise<SignoffInputs> {
  if (accounts.length === 0) return { accounts: [] };
  const runs = await db.selectFrom('authoritative_runs').select(['account', 'run_id']).where('business_date', '=', businessDate).where('account', 'in', [...accounts]).execute();
  const books = await db
    .selectFrom('expected_balances')
    .select(['account', (eb) => eb.fn.max('import_id').as('import_id')])
    .where('business_date', '=', businessDate)
    .where('account', 'in', [...accounts])
    .groupBy('account')
    .execute();
  const cases = await db
    .selectFrom('case_occurrences as o')
    .innerJoin('reconciliation_cases as c', 'c.id', 'o.case_id')
    .select(['c.id', 'c.account', 'c.state'])
    .where('o.business_date', '=', businessDate)
    .where('c.account', 'in', [...accounts])
    .orderBy('c.id')
    .execute();
  return {
    accounts: [...accounts].sort().map((account) => ({
      account,
      runId: runs.find((r) => r.account === account)?.run_id ?? null,
      booksImportId: books.find((b) => b.account === account)?.import_id ?? null,
      cases: Object.fromEntries(cases.filter((c) => c.account === account).map((c) => [String(c.id), c.state])),
    })),
  };
}
