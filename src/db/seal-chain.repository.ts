import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

// The hash expressions of migration 2026-11-27T2701, written out here rather than calling the
// functions it stored: a verifier that called functions kept in the database would trust whoever
// can replace them. Only built-in functions (sha256, to_char, jsonb) are used.
const ts = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
const link = (prev: string, content: string) => `encode(sha256(convert_to(coalesce(${prev}, '') || '|' || (${content})::text, 'UTF8')), 'hex')`;
const raw = (text: string): RawBuilder<unknown> => sql.raw(text);

const SIGNOFF_SEAL = link('prev_hash', `jsonb_build_array(id, to_jsonb(account_set), to_char(business_date, 'YYYY-MM-DD'), prepared_by, ${ts('prepared_at')}, report_sha256, inputs)`);
const SIGNOFF_APPROVAL = link('seal_hash', `jsonb_build_array(approved_by, ${ts('approved_at')})`);
const SIGNOFF_INVALIDATION = link('coalesce(approval_hash, seal_hash)', `jsonb_build_array(${ts('invalidated_at')}, invalidation)`);
const SIGNOFF_REOPEN = link('approval_hash', `jsonb_build_array(reopened_by, ${ts('reopened_at')}, reopen_note)`);
const CASE_EVENT = link('prev_hash', `jsonb_build_array(id, case_id, ${ts('at')}, actor, action, from_state, to_state, note, evidence)`);
const AUDIT = link('prev_hash', `jsonb_build_array(id, ${ts('at')}, user_name, address, action, target, outcome, detail)`);

/** A sign-off row as stored, with each of its hashes recomputed from its content. */
export interface SignoffSealRow {
  id: number;
  businessDate: string;
  chainSeq: string | null;
  prevHash: string | null;
  /** The seal of the sign-off at chain position chain_seq - 1 (null for the first, or when that row is gone). */
  before: string | null;
  reportHtml: string;
  reportSha256: string;
  /** Which later steps the row's columns record (an approval, an invalidation, a reopening). */
  records: { approved: boolean; invalidated: boolean; reopened: boolean };
  stored: { seal: string | null; approval: string | null; invalidation: string | null; reopen: string | null };
  recomputed: { seal: string; approval: string | null; invalidation: string | null; reopen: string | null };
}

/** Every sign-off (or those of `ids`) in chain order (rows outside the chain last, by id). */
export async function listSignoffSeals(db: Db, ids?: readonly number[]): Promise<SignoffSealRow[]> {
  if (ids !== undefined && ids.length === 0) return [];
  const filter = ids === undefined ? sql`true` : sql`s.id in (select unnest(${[...ids]}::int[]))`;
  const rows = await sql<{
    id: number;
    business_date: string;
    seq: string | null;
    prev_hash: string | null;
    before: string | null;
    report_html: string;
    report_sha256: string;
    seal_hash: string | null;
    approval_hash: string | null;
    invalidation_hash: string | null;
    reopen_hash: string | null;
    seal_now: string;
    approval_now: string | null;
    invalidation_now: string | null;
    reopen_now: string | null;
    has_approval: boolean;
    has_invalidation: boolean;
    has_reopen: boolean;
  }>`
    select id, to_char(business_date, 'YYYY-MM-DD') as business_date, chain_seq::text as seq, prev_hash, report_html, report_sha256,
      seal_hash, approval_hash, invalidation_hash, reopen_hash,
      ${raw(SIGNOFF_SEAL)} as seal_now,
      case when approved_by is null and approved_at is null then null else ${raw(SIGNOFF_APPROVAL)} end as approval_now,
      case when invalidated_at is null then null else ${raw(SIGNOFF_INVALIDATION)} end as invalidation_now,
      case when reopened_at is null then null else ${raw(SIGNOFF_REOPEN)} end as reopen_now
      , (select p.seal_hash from signoffs p where p.chain_seq = s.chain_seq - 1) as before,
      (approved_by is not null or approved_at is not null or approval_hash is not null) as has_approval,
      (invalidated_at is not null or invalidation_hash is not null) as has_invalidation,
      (reopened_at is not null or reopened_by is not null or reopen_hash is not null) as has_reopen
    from signoffs s
    where ${filter}
    order by chain_seq nulls last, id`.execute(db);
  return rows.rows.map((r) => ({
    id: r.id,
    businessDate: r.business_date,
    chainSeq: r.seq,
    prevHash: r.prev_hash,
    before: r.before,
    reportHtml: r.report_html,
    reportSha256: r.report_sha256,
    records: { approved: r.has_approval, invalidated: r.has_invalidation, reopened: r.has_reopen },
    stored: { seal: r.seal_hash, approval: r.approval_hash, invalidation: r.invalidation_hash, reopen: r.reopen_hash },
    recomputed: { seal: r.seal_now, approval: r.approval_now, invalidation: r.invalidation_now, reopen: r.reopen_now },
  }));
}

/** A chained row of case_events or console_audit: its stored link and hash, and the hash recomputed. */
export interface ChainRow {
  id: string;
  chainSeq: string | null;
  prevHash: string | null;
  rowHash: string | null;
  recomputed: string;
}

/** One page of a chained table in chain order, after chain position `afterSeq`: pages keep memory flat however long the trail grows. */
export async function listChainPage(db: Db, table: 'case_events' | 'console_audit', afterSeq: string | null, limit: number): Promise<ChainRow[]> {
  const hash = raw(table === 'case_events' ? CASE_EVENT : AUDIT);
  // Ordered by the bigint column, not its text (the alias "seq" keeps ORDER BY off the text).
  const rows = await sql<{ id: string; seq: string | null; prev_hash: string | null; row_hash: string | null; now: string }>`
    select id::text as id, chain_seq::text as seq, prev_hash, row_hash, ${hash} as now
    from ${sql.table(table)}
    where chain_seq is not null and chain_seq > ${afterSeq ?? '0'}::bigint
    order by chain_seq limit ${limit}`.execute(db);
  return rows.rows.map((r) => ({ id: r.id, chainSeq: r.seq, prevHash: r.prev_hash, rowHash: r.row_hash, recomputed: r.now }));
}

/** The rows of a chained table that carry no chain position: written past its trigger. */
export async function listUnchainedRows(db: Db, table: 'case_events' | 'console_audit', limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>`select id::text as id from ${sql.table(table)} where chain_seq is null order by id limit ${limit}`.execute(db);
  return rows.rows.map((r) => r.id);
}
