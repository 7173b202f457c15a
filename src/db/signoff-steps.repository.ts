import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

export type StepKind = 'prepared' | 'approved' | 'invalidated' | 'reopened';

// The step hash of migration 2026-12-02T2101, written out with built-in functions only (like
// seal-chain.repository.ts): a verifier calling functions kept in the database would trust
// whoever can replace them.
const STEP_HASH = `encode(sha256(convert_to(coalesce(t.prev_hash, '') || '|' || (jsonb_build_array(t.id, t.signoff_id, t.kind, t.actor,
  to_char(t.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), t.detail))::text, 'UTF8')), 'hex')`;
const raw = (text: string): RawBuilder<unknown> => sql.raw(text);

/** A step as stored, with its hash recomputed and the hash of the step before it in the chain. */
export interface StoredStep {
  id: string;
  signoffId: number;
  kind: StepKind;
  actor: string;
  at: Date;
  detail: Record<string, unknown>;
  chainSeq: string | null;
  prevHash: string | null;
  hash: string | null;
  recomputed: string;
  publicKey: string | null;
  signature: string | null;
  /** The hash of the step at chain position chain_seq - 1; null when this is the first, or when that step is gone. */
  before: string | null;
  /** Whether a step at chain_seq - 1 exists (true for the first step). */
  beforeExists: boolean;
  /** Whether the sign-off row records this step as it says: same actor, time and hash of the row (false when the row is gone). */
  agrees: boolean;
}

/** The steps of these sign-offs (or all), in chain order (steps outside the chain last). */
export async function listSteps(db: Db, signoffIds?: readonly number[]): Promise<StoredStep[]> {
  if (signoffIds !== undefined && signoffIds.length === 0) return [];
  const filter = signoffIds === undefined ? sql`true` : sql`t.signoff_id in (select unnest(${[...signoffIds]}::int[]))`;
  const rows = await sql<{
    id: string;
    signoff_id: number;
    kind: StepKind;
    actor: string;
    at: Date;
    detail: Record<string, unknown>;
    seq: string | null;
    prev_hash: string | null;
    hash: string | null;
    now: string;
    public_key: string | null;
    signature: string | null;
    before: string | null;
    before_exists: boolean;
    agrees: boolean | null;
  }>`
    select t.id::text as id, t.signoff_id, t.kind, t.actor, t.at, t.detail, t.chain_seq::text as seq, t.prev_hash, t.hash, ${raw(STEP_HASH)} as now,
      t.public_key, t.signature,
      (select p.hash from signoff_steps p where p.chain_seq = t.chain_seq - 1) as before,
      (t.chain_seq = 1 or exists (select 1 from signoff_steps p where p.chain_seq = t.chain_seq - 1)) as before_exists,
      case t.kind
        when 'prepared' then s.prepared_by = t.actor and s.prepared_at = t.at and s.seal_hash is not distinct from t.detail ->> 'seal'
        when 'approved' then s.approved_by = t.actor and s.approved_at = t.at and s.approval_hash is not distinct from t.detail ->> 'approval'
        when 'invalidated' then s.invalidated_at = t.at and s.invalidation_hash is not distinct from t.detail ->> 'invalidation'
        when 'reopened' then s.reopened_by = t.actor and s.reopened_at = t.at and s.reopen_hash is not distinct from t.detail ->> 'reopen'
      end as agrees
    from signoff_steps t
    left join signoffs s on s.id = t.signoff_id
    where ${filter}
    order by t.chain_seq nulls last, t.id`.execute(db);
  return rows.rows.map((r) => ({
    id: r.id,
    signoffId: r.signoff_id,
    kind: r.kind,
    actor: r.actor,
    at: r.at,
    detail: r.detail,
    chainSeq: r.seq,
    prevHash: r.prev_hash,
    hash: r.hash,
    recomputed: r.now,
    publicKey: r.public_key,
    signature: r.signature,
    before: r.before,
    beforeExists: r.before_exists === true,
    agrees: r.agrees === true,
  }));
}

/** The chain position of the first step signed with this public key; undefined when none is. */
export async function firstStepSignedBy(db: Db, publicKey: string): Promise<string | undefined> {
  const row = await sql<{ seq: string | null }>`select min(chain_seq)::text as seq from signoff_steps where public_key = ${publicKey}`.execute(db);
  return row.rows[0]?.seq ?? undefined;
}

/** The hash of one step of a sign-off (written by the trigger on signoffs); undefined when there is none. */
export async function findStepHash(db: Db, signoffId: number, kind: StepKind): Promise<{ id: string; hash: string } | undefined> {
  const row = await db.selectFrom('signoff_steps').select(['id', 'hash']).where('signoff_id', '=', signoffId).where('kind', '=', kind).executeTakeFirst();
  return row === undefined || row.hash === null ? undefined : { id: row.id, hash: row.hash };
}

/** Adds a step's signature, once (the append-only trigger allows nothing else). */
export async function addStepSignature(db: Db, stepId: string, publicKey: string, signature: string): Promise<void> {
  await db.updateTable('signoff_steps').set({ public_key: publicKey, signature }).where('id', '=', stepId).where('signature', 'is', null).execute();
}
