import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.types.js';
import { listSignoffSeals, type SignoffSealRow } from '../db/seal-chain.repository.js';
import { firstStepSignedBy, listSteps, type StepKind, type StoredStep } from '../db/signoff-steps.repository.js';
import { findSignoff, listSignoffSignatures, loadSealedDigests, type StoredSignature } from '../db/signoff.repository.js';
import { sealOf } from './seal.js';
import { ConfigError } from '../errors.js';
import { loadVerificationKey, signatureHolds, type VerificationKey } from './signing.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Why one sign-off does not verify: the first row found broken, named. */
export interface SignoffProblem {
  signoffId: number;
  businessDate: string;
  table: 'signoffs' | 'signoff_steps';
  /** The broken row: a sign-off id, or a step id. */
  row: string;
  problem: string;
}

const ORDER: readonly StepKind[] = ['prepared', 'approved', 'invalidated', 'reopened'];
const LEGACY: Partial<Record<StepKind, { step: StoredSignature['step']; detail: string }>> = {
  prepared: { step: 'prepare', detail: 'seal' },
  approved: { step: 'approve', detail: 'approval' },
  reopened: { step: 'reopen', detail: 'reopen' },
};

/**
 * Checks each sign-off (of `ids`, or all) as a reader must before trusting it, and returns the
 * first problem of each one that does not verify (none: it verifies). In order: its row (seal,
 * link to the sign-off before it, the hashes of its approval, invalidation and reopening, its
 * sealed report with `withReports`), its steps (each hash recomputed, each linked to the step
 * before it in the chain, each agreeing with the row, the row recording no step that is missing),
 * their signatures (with a pinned key: every step since RECON_SIGNING_SINCE signed by it; with
 * RECON_SIGNING_KEY_FILE: every step since the first one it signed), and for a date its steps
 * say is approved and standing, the date's results, books and statement balances against the
 * sealed digests.
 */
export async function findSignoffProblems(
  db: Db,
  options: { ids?: readonly number[]; key: VerificationKey | undefined; withReports?: boolean; only?: 'structure' | 'signatures' },
): Promise<SignoffProblem[]> {
  const seals = await listSignoffSeals(db, options.ids);
  const steps = await listSteps(db, options.ids);
  const key = options.key;
  const legacy = key?.pinned === true ? await listSignoffSignatures(db) : [];
  const firstSigned = key !== undefined && !key.pinned ? await firstStepSignedBy(db, key.publicKey) : undefined;
  const problems: SignoffProblem[] = [];
  for (const s of seals) {
    const own = steps.filter((t) => t.signoffId === s.id);
    const structure = options.only !== 'signatures';
    const signatures = options.only !== 'structure';
    const found =
      (structure ? (rowProblem(s, options.withReports ?? true) ?? stepsProblem(s, own)) : undefined) ??
      (signatures ? signaturesProblem(s, own, key, firstSigned, legacy) : undefined) ??
      (structure ? await dayProblem(db, s, own) : undefined);
    if (found !== undefined) problems.push({ signoffId: s.id, businessDate: s.businessDate, ...found, problem: found.whole === true ? found.problem : `sign-off #${s.id} of ${s.businessDate}: ${found.problem}` });
  }
  return problems;
}

/** A problem found; `whole` when its text already names the sign-off. */
type Found = { table: 'signoffs' | 'signoff_steps'; row: string; problem: string; whole?: boolean } | undefined;

/** The sign-off row: written in the chain, linked to the row before it, each hash matching its content. */
export function rowProblem(s: SignoffSealRow, withReport: boolean): Found {
  const found = (problem: string): Found => ({ table: 'signoffs', row: String(s.id), problem });
  if (s.chainSeq === null || s.stored.seal === null) return found('it was written past the chain (it has no seal)');
  if (s.chainSeq !== '1' && s.before === null) return found(`the sign-off before it in the chain (position ${BigInt(s.chainSeq) - 1n}) was removed or written past the chain`);
  if (s.prevHash !== (s.chainSeq === '1' ? null : s.before)) return found('it does not link to the sign-off before it (a sign-off was removed, inserted or changed before it)');
  if (s.stored.seal !== s.recomputed.seal) return found('its content was changed after it was sealed (preparer, time, inputs or report hash)');
  if (s.stored.approval !== s.recomputed.approval) return found('its approval was changed or added past the database rules');
  if (s.stored.invalidation !== s.recomputed.invalidation) return found('its invalidation was changed or added past the database rules');
  if (s.stored.reopen !== s.recomputed.reopen) return found('its reopening was changed or added past the database rules');
  if (withReport && sealOf(s.reportHtml) !== s.reportSha256) return found('its sealed report does not match its seal (the report was altered after sealing)');
  return undefined;
}

/** The steps of one sign-off: chained, unaltered, in an order the rules allow, and the same as its row records. */
function stepsProblem(s: SignoffSealRow, own: readonly StoredStep[]): Found {
  for (const t of own) {
    const found = (problem: string): Found => ({ table: 'signoff_steps', row: t.id, problem: `its ${t.kind} step (signoff_steps row ${t.id}) ${problem}` });
    if (t.chainSeq === null || t.hash === null) return found('was written past the chain (it has no place in it)');
    if (t.hash !== t.recomputed) return found('was changed after it was written (its hash does not match its content)');
    if (!t.beforeExists) return found(`follows a step that was removed (chain position ${BigInt(t.chainSeq) - 1n} is missing)`);
    if (t.prevHash !== (t.chainSeq === '1' ? null : t.before)) return found('does not link to the step before it (a step was removed, inserted or changed before it)');
  }
  const kinds = new Set(own.map((t) => t.kind));
  const recorded: Record<StepKind, boolean> = { prepared: true, approved: s.records.approved, invalidated: s.records.invalidated, reopened: s.records.reopened };
  for (const kind of ORDER) {
    if (recorded[kind] && !kinds.has(kind)) return { table: 'signoffs', row: String(s.id), problem: `its ${kind} step is missing from signoff_steps (removed past the database rules), though its row records it` };
    if (!recorded[kind] && kinds.has(kind)) {
      const t = own.find((x) => x.kind === kind)!;
      return { table: 'signoff_steps', row: t.id, problem: `its ${kind} step (signoff_steps row ${t.id}) is not recorded by its row (the row's ${kind === 'approved' ? 'approval' : kind === 'reopened' ? 'reopening' : 'invalidation'} was removed past the database rules)` };
    }
  }
  if (kinds.has('reopened') && !kinds.has('approved')) return { table: 'signoffs', row: String(s.id), problem: 'it was reopened without an approval step' };
  const differs = own.find((t) => !t.agrees);
  if (differs !== undefined) return { table: 'signoff_steps', row: differs.id, problem: `its ${differs.kind} step (signoff_steps row ${differs.id}) and its row disagree (actor, time or hash changed past the database rules)` };
  return undefined;
}

/** The signatures of one sign-off's steps: each one present holds; with a key, the steps owed one carry one by that key. */
function signaturesProblem(s: SignoffSealRow, own: readonly StoredStep[], key: VerificationKey | undefined, firstSigned: string | undefined, legacy: readonly StoredSignature[]): Found {
  for (const t of own) {
    const found = (problem: string): Found => ({ table: 'signoff_steps', row: t.id, problem: `its ${t.kind} step (signoff_steps row ${t.id}) ${problem}` });
    if (t.signature !== null && (t.publicKey === null || t.hash === null || !signatureHolds(t.publicKey, t.hash, t.signature))) return found('carries a signature that does not verify');
    if (key === undefined) continue;
    if (key.pinned) {
      if (t.at.getTime() < key.since.getTime()) continue;
      if (t.kind === 'invalidated') {
        // The program invalidates only prepared sign-offs; an invalidation after an approval would unlock a date unsigned.
        if (own.some((x) => x.kind === 'approved')) return found(`invalidates an approved sign-off: no step since ${key.since.toISOString()} may (a locked date is unlocked only by a signed reopening)`);
        if (t.signature !== null && t.publicKey !== key.publicKey) return found(`is signed with another key than the pinned one (${key.file})`);
        continue;
      }
      if (t.signature !== null && t.publicKey === key.publicKey) continue;
      const old = LEGACY[t.kind];
      const stepHash = old === undefined ? undefined : t.detail[old.detail];
      const signedBefore = legacy.some((g) => g.signoffId === s.id && g.step === old?.step && g.publicKey === key.publicKey && g.signedHash === stepHash && signatureHolds(g.publicKey, g.signedHash, g.signature));
      if (signedBefore) continue;
      return found(t.signature === null ? `carries no signature, and every step since ${key.since.toISOString()} must be signed by the pinned key (${key.file})` : `is signed with another key than the pinned one (${key.file})`);
    }
    if (t.signature !== null && t.publicKey !== key.publicKey) return found(`is signed with another key than RECON_SIGNING_KEY_FILE's`);
    if (t.kind !== 'invalidated' && t.signature === null && firstSigned !== undefined && t.chainSeq !== null && BigInt(t.chainSeq) > BigInt(firstSigned)) {
      return found('carries no signature, though every step since the first one signed by RECON_SIGNING_KEY_FILE must carry one');
    }
  }
  return undefined;
}

/** For a sign-off its steps say approved and standing: the date's data now against the sealed digests. */
async function dayProblem(db: Db, s: SignoffSealRow, own: readonly StoredStep[]): Promise<Found> {
  const kinds = new Set(own.map((t) => t.kind));
  if (!kinds.has('approved') || kinds.has('invalidated') || kinds.has('reopened')) return undefined;
  const signoff = await findSignoff(db, s.id);
  if (signoff === undefined) return undefined;
  const now = await loadSealedDigests(db, signoff.accountSet, signoff.businessDate);
  for (const sealed of signoff.inputs.accounts ?? []) {
    const current = now.get(sealed.account) ?? { results: '', books: '', statementBalances: '' };
    const changed = [
      sealed.resultsDigest !== undefined && sealed.resultsDigest !== current.results ? 'results' : '',
      sealed.booksDigest !== undefined && sealed.booksDigest !== current.books ? 'books' : '',
      sealed.statementBalancesDigest !== undefined && sealed.statementBalancesDigest !== current.statementBalances ? 'statement balances' : '',
    ].filter(Boolean);
    if (changed.length > 0) {
      return { table: 'signoffs', row: String(s.id), whole: true, problem: `${signoff.businessDate} of account "${sealed.account}" (sign-off #${s.id}): its ${changed.join(', ')} differ from the sealed ones (changed past the lock)` };
    }
  }
  return undefined;
}

/**
 * What a reader is shown about these sign-offs: for each one that does not verify, the first
 * broken row named. The key is loaded as `signoff verify` loads it; a key that cannot be loaded
 * (a pinned file gone) leaves nothing verified, and each sign-off is said not to verify, why named.
 */
export async function problemsToShow(db: Db, config: Parameters<typeof loadVerificationKey>[0], ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  let key: VerificationKey | undefined;
  try {
    key = loadVerificationKey(config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return new Map(ids.map((id) => [id, `its signatures cannot be checked: ${error.message}`]));
  }
  return new Map((await findSignoffProblems(db, { ids, key })).map((p) => [p.signoffId, p.problem]));
}
