import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

// The content each sign-off chain hash is taken over, as the database writes it (migration
// 2026-11-27T2701; the same expressions as seal-chain.repository.ts). The pack carries this text
// beside each hash, so an auditor recomputes every link offline with nothing but SHA-256:
// hash = sha256(previous hash (or "") + "|" + content).
const ts = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const raw = (text: string): RawBuilder<unknown> => sql.raw(text);
const SEAL_CONTENT = `jsonb_build_array(id, to_jsonb(account_set), to_char(business_date, 'YYYY-MM-DD'), prepared_by, ${ts('prepared_at')}, report_sha256, inputs)::text`;
const APPROVAL_CONTENT = `case when approved_by is null and approved_at is null then null else jsonb_build_array(approved_by, ${ts('approved_at')})::text end`;
const INVALIDATION_CONTENT = `case when invalidated_at is null then null else jsonb_build_array(${ts('invalidated_at')}, invalidation)::text end`;
const REOPEN_CONTENT = `case when reopened_at is null then null else jsonb_build_array(reopened_by, ${ts('reopened_at')}, reopen_note)::text end`;

/** One sign-off chain row as a pack carries it: its links, its hashes and the content each hash covers. */
export interface PackChainRow {
  id: number;
  chain_seq: string;
  business_date: string;
  report_sha256: string;
  prev_hash: string | null;
  seal_content: string;
  seal_hash: string;
  approval_content: string | null;
  approval_hash: string | null;
  invalidation_content: string | null;
  invalidation_hash: string | null;
  reopen_content: string | null;
  reopen_hash: string | null;
}

/** The business dates from `from` to `to` on which any account has a result or a reconciliation state, ascending. */
export async function listDatesWithResults(db: Db, from: string, to: string): Promise<string[]> {
  const rows = await sql<{ d: string }>`
    select to_char(business_date, 'YYYY-MM-DD') as d from reconciliation_results where business_date between ${from}::date and ${to}::date
    union
    select to_char(business_date, 'YYYY-MM-DD') as d from reconciliation_days where business_date between ${from}::date and ${to}::date
    order by d`.execute(db);
  return rows.rows.map((r) => r.d);
}

// chain_seq is selected as text (a bigint), under its own name: an ORDER BY of the bare name would
// sort by that text ("10" before "9"), so the queries order by the table's column, signoffs.chain_seq.
const chainColumns = raw(`id, chain_seq::text as chain_seq, to_char(business_date, 'YYYY-MM-DD') as business_date, report_sha256, prev_hash,
  ${SEAL_CONTENT} as seal_content, seal_hash, ${APPROVAL_CONTENT} as approval_content, approval_hash,
  ${INVALIDATION_CONTENT} as invalidation_content, invalidation_hash, ${REOPEN_CONTENT} as reopen_content, reopen_hash`);

/** Every sign-off of these dates (each date's whole history) in chain order. */
export async function listChainRowsOfDates(db: Db, dates: readonly string[]): Promise<PackChainRow[]> {
  if (dates.length === 0) return [];
  const rows = await sql<PackChainRow>`select ${chainColumns} from signoffs where business_date in (select unnest(${[...dates]}::date[])) and chain_seq is not null order by signoffs.chain_seq`.execute(db);
  return rows.rows;
}

/** The sign-off chain from position `fromSeq` to `toSeq`, both included, in order: contiguous, so its links can be checked. */
export async function listChainRowsBetween(db: Db, fromSeq: string, toSeq: string): Promise<PackChainRow[]> {
  const rows = await sql<PackChainRow>`select ${chainColumns} from signoffs where chain_seq between ${fromSeq}::bigint and ${toSeq}::bigint order by signoffs.chain_seq`.execute(db);
  return rows.rows;
}

/** The signatures of these sign-offs' steps, in the order they were made. */
export async function listSignaturesOf(db: Db, signoffIds: readonly number[]) {
  if (signoffIds.length === 0) return [];
  return db.selectFrom('signoff_signatures').select(['signoff_id', 'step', 'signed_hash', 'public_key', 'signature']).where('signoff_id', 'in', [...signoffIds]).orderBy('id').execute();
}

/**
 * A sign-off's steps as the pack carries them (migration 2026-12-02T2101): each with the content
 * its hash covers, so an auditor recomputes hash = sha256(prev_hash (or "") + "|" + content), and
 * its signature of that hash (Ed25519, over the hash's hex text) when it was signed.
 */
export async function listStepsOf(db: Db, signoffId: number) {
  const rows = await sql<{ id: string; kind: string; actor: string; at: string; chain_seq: string; prev_hash: string | null; content: string; hash: string | null; public_key: string | null; signature: string | null }>`
    select id::text as id, kind, actor, ${raw(ts('at'))} as at, chain_seq::text as chain_seq, prev_hash,
      jsonb_build_array(id, signoff_id, kind, actor, ${raw(ts('at'))}, detail)::text as content, hash, public_key, signature
    from signoff_steps where signoff_id = ${signoffId} order by signoff_steps.chain_seq`.execute(db);
  return rows.rows;
}

/** A sign-off's record as the pack shows it (its report aside). */
export async function findSignoffRecord(db: Db, id: number) {
  return db
    .selectFrom('signoffs')
    .select(['id', 'business_date', 'account_set', 'prepared_by', 'prepared_at', 'approved_by', 'approved_at', 'report_sha256', 'inputs', 'invalidated_at', 'invalidation', 'reopened_by', 'reopened_at', 'reopen_note'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

/** A date's stored results, in a fixed order. */
export async function listResultsOfDate(db: Db, date: string) {
  return db
    .selectFrom('reconciliation_results')
    .select(['account', 'currency', 'status', 'gateway_balance', 'single_balance', 'previous_balance', 'movement', 'expected_balance', 'difference', 'scale', 'run_id', 'books_import_id', 'case_id', 'note', 'computed_at'])
    .where('business_date', '=', date)
    .orderBy('account')
    .orderBy(sql`coalesce(currency, '')`)
    .execute();
}

/** The cases seen on a date, each with its occurrence that day and its whole event history. */
export async function listCasesOfDate(db: Db, date: string) {
  const cases = await db
    .selectFrom('case_occurrences as o')
    .innerJoin('reconciliation_cases as c', 'c.id', 'o.case_id')
    .select(['c.id', 'c.account', 'c.currency', 'c.kind', 'c.state', 'c.resolution', 'c.opened_on', 'c.last_seen_on', 'c.occurrences', 'c.assignee', 'c.resolved_on', 'o.status as status_that_day', 'o.difference as difference_that_day'])
    .where('o.business_date', '=', date)
    .orderBy('c.id')
    .execute();
  if (cases.length === 0) return [];
  const events = await db
    .selectFrom('case_events')
    .select(['id', 'case_id', 'at', 'actor', 'action', 'from_state', 'to_state', 'note', 'evidence'])
    .where('case_id', 'in', cases.map((c) => c.id))
    .orderBy('id')
    .execute();
  return cases.map((c) => ({ ...c, events: events.filter((e) => e.case_id === c.id).map(({ case_id: _caseId, ...e }) => e) }));
}

/** The books imports a date's books and results come from, with where each came from. */
export async function listBooksImportsOfDate(db: Db, date: string) {
  const rows = await sql<{ id: number; source: string; imported_at: Date; rows: number; format: string | null; amounts: string | null; file_sha256: string | null; file_name: string | null; sql_query: string | null; rows_sha256: string | null }>`
    select b.id, b.source, b.imported_at, b.rows, b.format, b.amounts, b.file_sha256, f.first_name as file_name, b.sql_query, b.rows_sha256
    from books_imports b left join stored_files f on f.sha256 = b.file_sha256
    where b.id in (select import_id from expected_balances where business_date = ${date}::date
                   union select books_import_id from reconciliation_results where business_date = ${date}::date)
    order by b.id`.execute(db);
  return rows.rows;
}

/** The bank statements of a date with their roll-forward proofs, balances and original file. */
export async function listStatementsOfDate(db: Db, date: string) {
  const statements = await sql<{
    id: number;
    account: string;
    statement_id: string;
    format: string;
    intraday: boolean;
    currency: string;
    scale: number;
    opening: string | null;
    closing: string | null;
    entries: number;
    proof: string;
    proof_residual: string | null;
    proof_missing: string | null;
    proof_reason: string | null;
    source_file: string;
    file_sha256: string | null;
    file_name: string | null;
  }>`
    select s.id, s.account, s.statement_id, s.format, s.intraday, s.currency, s.scale, s.opening, s.closing, s.entries,
      s.proof, s.proof_residual, s.proof_missing, s.proof_reason, s.source_file, s.file_sha256, f.first_name as file_name
    from bank_statements s left join stored_files f on f.sha256 = s.file_sha256
    where s.business_date = ${date}::date
    order by s.account, s.statement_id, s.id`.execute(db);
  if (statements.rows.length === 0) return [];
  const balances = await db
    .selectFrom('bank_statement_balances')
    .select(['statement_pk', 'position', 'code', 'amount', 'balance_date'])
    .where('statement_pk', 'in', statements.rows.map((s) => s.id))
    .orderBy('statement_pk')
    .orderBy('position')
    .execute();
  return statements.rows.map((s) => ({ ...s, balances: balances.filter((b) => b.statement_pk === s.id).map(({ statement_pk: _pk, ...b }) => b) }));
}

/** One row of the roll-forward: an account's currency on one date. */
export interface RollForwardRow {
  account: string;
  currency: string | null;
  business_date: string;
  previous_balance: string | null;
  movement: string | null;
  gateway_balance: string | null;
  expected_balance: string | null;
  difference: string | null;
  /** Open reconciling items of the date (minor units), and what they leave unexplained (the difference where none). */
  items_total: string | null;
  unexplained: string | null;
  scale: number | null;
  status: string;
}

/**
 * The roll-forward rows of these dates for the accounts after `afterAccount` (exclusive), a few
 * accounts at a time in account, currency, date order: a month of many accounts is read in pages.
 */
export async function listRollForwardPage(db: Db, dates: readonly string[], afterAccount: string | null, accounts: number): Promise<RollForwardRow[]> {
  const rows = await sql<RollForwardRow>`
    with page as (
      select distinct account from reconciliation_results
      where business_date in (select unnest(${[...dates]}::date[])) and account > ${afterAccount ?? ''}
      order by account limit ${accounts}
    )
    select r.account, r.currency, to_char(r.business_date, 'YYYY-MM-DD') as business_date, r.previous_balance::text as previous_balance, r.movement::text as movement,
      r.gateway_balance::text as gateway_balance, r.expected_balance::text as expected_balance, r.difference::text as difference,
      r.items_total::text as items_total, coalesce(r.unexplained, r.difference)::text as unexplained, r.scale, r.status
    from reconciliation_results r join page p on p.account = r.account
    where r.business_date in (select unnest(${[...dates]}::date[]))
    order by r.account, coalesce(r.currency, ''), r.business_date`.execute(db);
  return rows.rows;
}

/**
 * The reconciling items people recorded that count on a date (opened by then, not cleared before
 * it), and the matches of books and statement entries that belong to it, each with its entry ids:
 * what explained the date's differences, in the order they were made.
 */
export async function listItemsAndMatchesOfDate(db: Db, date: string): Promise<{ items: unknown[]; matches: unknown[] }> {
  const items = await db
    .selectFrom('reconciling_items')
    .selectAll()
    .where('opened_on', '<=', date)
    .where((eb) => eb.or([eb('cleared_on', 'is', null), eb('cleared_on', '>=', date)]))
    .orderBy('id')
    .execute();
  const matches = await sql<Record<string, unknown>>`
    select m.*,
      coalesce((select array_agg(x.books_entry_id order by x.books_entry_id) from entry_match_members x where x.match_id = m.id and x.books_entry_id is not null), '{}') as books_entries,
      coalesce((select array_agg(x.statement_entry_id order by x.statement_entry_id) from entry_match_members x where x.match_id = m.id and x.statement_entry_id is not null), '{}') as statement_entries
    from entry_matches m where m.business_date = ${date}::date order by m.id`.execute(db);
  return { items, matches: matches.rows };
}
