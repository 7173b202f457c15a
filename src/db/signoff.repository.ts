import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, ReconciliationStatus } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * What a business date was signed on: the account set and tolerance settings, and per account
 * the run its results were computed from, the books imports, the previous date's run (movement),
 * a digest of the sealed results and the states of the date's cases. Fields marked optional are
 * missing from sign-offs made before they were recorded; a comparison skips what it cannot know.
 */
export interface SignoffInputs {
  accountSet?: string[];
  /** RECON_TOLERANCE, RECON_TOLERANCE_BPS and RECON_TOLERANCE_<CUR> as configured at preparation. */
  tolerance?: unknown;
  accounts: Array<{
    account: string;
    /** The run the date's results were computed from (null: nothing captured). */
    runId: number | null;
    /** The newest books import among the date's expected balances (null: no books). */
    booksImportId: number | null;
    /** Every books import the date's expected balances come from. */
    booksImportIds?: number[];
    /** The run of the previous captured date, which the movement is measured from. */
    previousRunId?: number | null;
    /** SHA-256 over the date's stored results (statuses and amounts), in a fixed order. */
    resultsDigest?: string;
    /** SHA-256 over the date's stored books (currency, balance, scale), in a fixed order. */
    booksDigest?: string;
    /** The bank statements of the date (a bank account's), each with the SHA-256 of its file as imported. */
    statements?: Array<{ statement_id: string; file_sha256: string | null }>;
    /** SHA-256 over the balances of the date's statements, in a fixed order. */
    statementBalancesDigest?: string;
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
  reopenedAt: Date | null;
  reopenedBy: string | null;
  reopenNote: string | null;
  /** The chain hashes the database wrote for each step (null for a step not taken). */
  hashes: { seal: string | null; approval: string | null; reopen: string | null };
}

const columns = [
  'id',
  'account_set',
  'business_date',
  'prepared_by',
  'prepared_at',
  'approved_by',
  'approved_at',
  'report_sha256',
  'inputs',
  'invalidated_at',
  'invalidation',
  'reopened_at',
  'reopened_by',
  'reopen_note',
  'seal_hash',
  'approval_hash',
  'reopen_hash',
] as const;

type Row = {
  id: number;
  account_set: string[];
  business_date: string;
  prepared_by: string;
  prepared_at: Date;
  approved_by: string | null;
  approved_at: Date | null;
  report_sha256: string;
  inputs: unknown;
  invalidated_at: Date | null;
  invalidation: unknown;
  reopened_at: Date | null;
  reopened_by: string | null;
  reopen_note: string | null;
  seal_hash: string | null;
  approval_hash: string | null;
  reopen_hash: string | null;
};

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
    reopenedAt: r.reopened_at,
    reopenedBy: r.reopened_by,
    reopenNote: r.reopen_note,
    hashes: { seal: r.seal_hash, approval: r.approval_hash, reopen: r.reopen_hash },
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

/**
 * Sign-offs as their steps tell them: the sealed content from the row, and the approval,
 * invalidation and reopening from signoff_steps (the view signoff_states), never from the row's
 * columns — a column nulled or filled in past the triggers changes nothing shown or decided.
 */
function selectSignoffs(db: Db) {
  return db
    .selectFrom('signoffs as s')
    .innerJoin('signoff_states as st', 'st.signoff_id', 's.id')
    .select([
      's.id',
      's.account_set',
      's.business_date',
      's.prepared_by',
      's.prepared_at',
      'st.approved_by',
      'st.approved_at',
      's.report_sha256',
      's.inputs',
      'st.invalidated_at',
      'st.invalidation',
      'st.reopened_at',
      'st.reopened_by',
      'st.reopen_note',
      's.seal_hash',
      's.approval_hash',
      's.reopen_hash',
    ]);
}

/** The sign-offs of a date, newest first. */
export async function listSignoffsOfDate(db: Db, businessDate: string): Promise<Signoff[]> {
  return (await selectSignoffs(db).where('s.business_date', '=', businessDate).orderBy('s.id', 'desc').execute()).map(signoffFromRow);
}

export async function findSignoff(db: Db, id: number): Promise<Signoff | undefined> {
  const row = await selectSignoffs(db).where('s.id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : signoffFromRow(row);
}

/** The sealed report's bytes as stored. */
export async function readSignoffReport(db: Db, id: number): Promise<{ html: string; sha256: string; businessDate: string } | undefined> {
  const row = await db.selectFrom('signoffs').select(['report_html', 'report_sha256', 'business_date']).where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : { html: row.report_html, sha256: row.report_sha256, businessDate: row.business_date };
}

/** Sign-offs still standing (neither invalidated nor reopened), oldest first; with `dates`, of those dates only. */
export async function listLiveSignoffs(db: Db, dates?: readonly string[]): Promise<Signoff[]> {
  if (dates !== undefined && dates.length === 0) return [];
  let query = selectSignoffs(db).where('st.invalidated_at', 'is', null).where('st.reopened_at', 'is', null);
  if (dates !== undefined) query = query.where('s.business_date', 'in', [...dates]);
  return (await query.orderBy('s.id').execute()).map(signoffFromRow);
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

/** Writes the reopening once, on a standing approved sign-off; false when it changed meanwhile. */
export async function markSignoffReopened(db: Db, id: number, by: string, at: Date, note: string): Promise<boolean> {
  const result = await db
    .updateTable('signoffs')
    .set({ reopened_by: by, reopened_at: at, reopen_note: note })
    .where('id', '=', id)
    .where('approved_by', 'is not', null)
    .where('invalidated_at', 'is', null)
    .where('reopened_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** A lock on one (account, business date): the approved sign-off that holds it. */
export interface DateLock {
  signoffId: number;
  account: string;
  businessDate: string;
  approvedBy: string;
  approvedAt: Date;
}

/** The locks among these (account, business date) pairs, one per locked pair. */
export async function findDateLocks(db: Db, pairs: ReadonlyArray<{ account: string; businessDate: string }>): Promise<DateLock[]> {
  if (pairs.length === 0) return [];
  const rows = await sql<{ signoff_id: number; account: string; business_date: string; approved_by: string; approved_at: Date }>`
    select l.signoff_id, l.account, to_char(l.business_date, 'YYYY-MM-DD') as business_date, l.approved_by, l.approved_at
    from locked_dates l
    where (l.account, l.business_date) in (select * from unnest(${pairs.map((p) => p.account)}::text[], ${pairs.map((p) => p.businessDate)}::date[]))
    order by l.business_date, l.account`.execute(db);
  return rows.rows.map((r) => ({ signoffId: r.signoff_id, account: r.account, businessDate: r.business_date, approvedBy: r.approved_by, approvedAt: r.approved_at }));
}

/** Stores the signature of one sign-off step. */
export async function insertSignoffSignature(db: Db, s: { signoffId: number; step: 'prepare' | 'approve' | 'reopen'; signedHash: string; publicKey: string; signature: string }): Promise<void> {
  await db.insertInto('signoff_signatures').values({ signoff_id: s.signoffId, step: s.step, signed_hash: s.signedHash, public_key: s.publicKey, signature: s.signature }).execute();
}

export interface StoredSignature {
  signoffId: number;
  step: 'prepare' | 'approve' | 'reopen';
  signedHash: string;
  publicKey: string;
  signature: string;
}

export async function listSignoffSignatures(db: Db): Promise<StoredSignature[]> {
  const rows = await db.selectFrom('signoff_signatures').select(['signoff_id', 'step', 'signed_hash', 'public_key', 'signature']).orderBy('id').execute();
  return rows.map((r) => ({ signoffId: r.signoff_id, step: r.step, signedHash: r.signed_hash, publicKey: r.public_key, signature: r.signature }));
}

/** The current inputs of a business date for the given accounts (see SignoffInputs). */
export async function loadSignoffInputs(db: Db, accounts: readonly string[], businessDate: string, tolerance: unknown): Promise<SignoffInputs> {
  if (accounts.length === 0) return { accountSet: [], tolerance, accounts: [] };
  const list = [...accounts];
  const books = await db
    .selectFrom('expected_balances')
    .select(['account', 'import_id'])
    .distinct()
    .where('business_date', '=', businessDate)
    .where('account', 'in', list)
    .execute();
  // The results as sealed: their own run and books import, and a digest of what they say.
  const results = await sql<{ account: string; run_id: number | null; digest: string }>`
    select account, max(run_id) as run_id,
      encode(sha256(convert_to(string_agg(concat_ws('|', coalesce(currency, '-'), status, gateway_balance, single_balance, expected_balance,
        previous_balance, movement, difference, scale), ';' order by coalesce(currency, '')), 'UTF8')), 'hex') as digest
    from reconciliation_results
    where business_date = ${businessDate} and account in (select unnest(${list}::text[]))
    group by account`.execute(db);
  const digests = await loadSealedDigests(db, list, businessDate);
  const statements = await db
    .selectFrom('bank_statements')
    .select(['account', 'statement_id', 'file_sha256'])
    .where('business_date', '=', businessDate)
    .where('account', 'in', list)
    .orderBy('account')
    .orderBy('statement_id')
    .orderBy('id')
    .execute();
  const previous = await sql<{ account: string; run_id: number }>`
    select a.account, a.run_id from authoritative_runs a
    where a.account in (select unnest(${list}::text[]))
      and a.business_date = (select max(r.business_date) from snapshot_runs r where r.account = a.account and r.business_date < ${businessDate} and r.status = 'succeeded')`.execute(db);
  const cases = await db
    .selectFrom('case_occurrences as o')
    .innerJoin('reconciliation_cases as c', 'c.id', 'o.case_id')
    .select(['c.id', 'c.account', 'c.state'])
    .where('o.business_date', '=', businessDate)
    .where('c.account', 'in', list)
    .orderBy('c.id')
    .execute();
  return {
    accountSet: [...list].sort(),
    tolerance,
    accounts: [...list].sort().map((account) => {
      const ids = books.filter((b) => b.account === account && b.import_id !== null).map((b) => b.import_id as number).sort((a, b) => a - b);
      const result = results.rows.find((r) => r.account === account);
      return {
        account,
        runId: result?.run_id ?? null,
        booksImportId: ids.at(-1) ?? null,
        booksImportIds: ids,
        previousRunId: previous.rows.find((r) => r.account === account)?.run_id ?? null,
        resultsDigest: result?.digest ?? '',
        booksDigest: digests.get(account)?.books ?? '',
        statements: statements.filter((st) => st.account === account).map((st) => ({ statement_id: st.statement_id, file_sha256: st.file_sha256 })),
        statementBalancesDigest: digests.get(account)?.statementBalances ?? '',
        cases: Object.fromEntries(cases.filter((c) => c.account === account).map((c) => [String(c.id), c.state])),
      };
    }),
  };
}

/** Whether the date's closing balance is final: an end-of-day capture that finished by the cut-off. */
export async function findAuthoritativeRunTiming(db: Db, account: string, businessDate: string): Promise<{ endOfDay: boolean; finishedByCutoff: boolean } | undefined> {
  const row = await db
    .selectFrom('authoritative_runs')
    .select(['end_of_day', 'after_cutoff'])
    .where('account', '=', account)
    .where('business_date', '=', businessDate)
    .executeTakeFirst();
  return row === undefined ? undefined : { endOfDay: row.end_of_day, finishedByCutoff: !row.after_cutoff };
}

/** Cases of a date that block its sign-off: open ones, and acknowledged ones whose acknowledgement carries no note. */
export async function listBlockingCases(
  db: Db,
  accounts: readonly string[],
  businessDate: string,
): Promise<Array<{ id: number; account: string; currency: string | null; kind: string; state: string; why: 'open' | 'acknowledged without a note' }>> {
  if (accounts.length === 0) return [];
  const rows = await sql<{ id: number; account: string; currency: string | null; kind: string; state: string; noted: boolean }>`
    select c.id, c.account, c.currency, c.kind, c.state,
      coalesce((select btrim(coalesce(e.note, '')) <> '' from case_events e where e.case_id = c.id and e.action = 'acknowledged' order by e.id desc limit 1), false) as noted
    from case_occurrences o
    join reconciliation_cases c on c.id = o.case_id
    where o.business_date = ${businessDate} and c.account in (select unnest(${[...accounts]}::text[]))
      and (c.state = 'open' or c.state = 'acknowledged')
    order by c.id`.execute(db);
  return rows.rows
    .filter((r) => r.state === 'open' || !r.noted)
    .map((r) => ({ id: r.id, account: r.account, currency: r.currency, kind: r.kind, state: r.state, why: r.state === 'open' ? 'open' : 'acknowledged without a note' }));
}

/** The status of each result of a date for these accounts (the settle check classifies them). */
export async function listResultStatuses(db: Db, accounts: readonly string[], businessDate: string): Promise<Array<{ account: string; currency: string | null; status: ReconciliationStatus | 'explained' | 'immaterial' | 'conflicting_statements' }>> {
  if (accounts.length === 0) return [];
  return db.selectFrom('reconciliation_results').select(['account', 'currency', 'status']).where('business_date', '=', businessDate).where('account', 'in', [...accounts]).orderBy('account').orderBy('currency').execute();
}

/**
 * The digests of what a date's sign-off seals, per account, as they are now: its results (the same
 * expression as SignoffInputs.resultsDigest), its books and its statements' balances. An account
 * without any has empty digests. `signoff verify` compares them with the sealed ones.
 */
export async function loadSealedDigests(db: Db, accounts: readonly string[], businessDate: string): Promise<Map<string, { results: string; books: string; statementBalances: string }>> {
  const list = [...accounts];
  const digests = new Map(list.map((account) => [account, { results: '', books: '', statementBalances: '' }]));
  if (list.length === 0) return digests;
  const rows = await sql<{ account: string; kind: 'results' | 'books' | 'statementBalances'; digest: string }>`
    select account, 'results' as kind,
      encode(sha256(convert_to(string_agg(concat_ws('|', coalesce(currency, '-'), status, gateway_balance, single_balance, expected_balance,
        previous_balance, movement, difference, scale), ';' order by coalesce(currency, '')), 'UTF8')), 'hex') as digest
    from reconciliation_results
    where business_date = ${businessDate} and account in (select unnest(${list}::text[]))
    group by account
    union all
    select account, 'books', encode(sha256(convert_to(string_agg(concat_ws('|', currency, balance, scale), ';' order by currency), 'UTF8')), 'hex')
    from expected_balances
    where business_date = ${businessDate} and account in (select unnest(${list}::text[]))
    group by account
    union all
    select s.account, 'statementBalances', encode(sha256(convert_to(string_agg(concat_ws('|', s.statement_id, s.fingerprint, b.position, b.code, b.amount, b.balance_date), ';' order by s.statement_id, s.id, b.position), 'UTF8')), 'hex')
    from bank_statements s join bank_statement_balances b on b.statement_pk = s.id
    where s.business_date = ${businessDate} and s.account in (select unnest(${list}::text[]))
    group by s.account`.execute(db);
  for (const r of rows.rows) digests.get(r.account)![r.kind] = r.digest;
  return digests;
}
