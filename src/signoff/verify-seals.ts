import type { AppContext } from '../app-context.js';
import { listChainPage, listSignoffSeals, listUnchainedRows, type SignoffSealRow } from '../db/seal-chain.repository.js';
import { listSignoffSignatures } from '../db/signoff.repository.js';
import { listSteps } from '../db/signoff-steps.repository.js';
import { sealOf } from './seal.js';
import { findSignoffProblems } from './signoff-integrity.js';
import { loadVerificationKey, signatureHolds, type SignedStep, type VerificationKey } from './signing.js';

/** The first row that does not hold: which table, which row, and what is wrong with it. */
export interface SealProblem {
  table: 'signoffs' | 'signoff_steps' | 'case_events' | 'console_audit' | 'signoff_signatures';
  id: string;
  problem: string;
}

export interface SealVerification {
  /** Rows checked per table. */
  checked: { signoffs: number; reports: number; caseEvents: number; auditRows: number; signatures: number; steps: number; signedSteps: number };
  /** Whether the signatures were checked against a key: RECON_SIGNING_KEY_FILE's, or the pinned one. */
  keyChecked: boolean;
  /** The key checked against: pinned (RECON_SIGNING_PUBLIC_KEY_FILE since RECON_SIGNING_SINCE), the private key file's, or none. */
  key: VerificationKey | undefined;
  problem: SealProblem | undefined;
}

const PAGE = 5_000;

/**
 * Recomputes what the seals promise and stops at the first row that breaks it: each sealed
 * report's SHA-256 (all, or with `date` that date's), the sign-off chain (up to that date's last
 * sign-off with `date`), the case_events and console_audit chains, every signature, the chain of
 * sign-off steps, and each sign-off as findSignoffProblems checks it (its steps against its row,
 * the steps' signatures — with a pinned key, every step since RECON_SIGNING_SINCE signed by it —
 * and an approved date's data against its sealed digests).
 */
export async function verifySeals(ctx: AppContext, options: { date?: string } = {}): Promise<SealVerification> {
  const db = ctx.database.db;
  const checked = { signoffs: 0, reports: 0, caseEvents: 0, auditRows: 0, signatures: 0, steps: 0, signedSteps: 0 };
  const key = loadVerificationKey(ctx.config);
  const result = (problem?: SealProblem): SealVerification => ({ checked, keyChecked: key !== undefined, key, problem });

  const all = await listSignoffSeals(db);
  const lastOfDate = options.date === undefined ? undefined : all.findLastIndex((s) => s.businessDate === options.date);
  const signoffs = lastOfDate === undefined ? all : all.slice(0, lastOfDate + 1);
  let previous: string | null = null;
  for (const s of signoffs) {
    const problem = checkSignoff(s, previous, options.date === undefined || s.businessDate === options.date);
    if (problem !== undefined) return result({ table: 'signoffs', id: String(s.id), problem: `sign-off #${s.id} of ${s.businessDate}: ${problem}` });
    previous = s.stored.seal;
    checked.signoffs++;
    if (options.date === undefined || s.businessDate === options.date) checked.reports++;
  }

  for (const table of ['case_events', 'console_audit'] as const) {
    let prev: string | null = null;
    let after: string | null = null;
    for (;;) {
      const page = await listChainPage(db, table, after, PAGE);
      for (const row of page) {
        if (row.prevHash !== prev) return result({ table, id: row.id, problem: `${table} row ${row.id} does not link to the row before it (a row was removed, inserted or changed before it)` });
        if (row.rowHash !== row.recomputed) return result({ table, id: row.id, problem: `${table} row ${row.id} was changed after it was written (its hash does not match its content)` });
        prev = row.rowHash;
        if (table === 'case_events') checked.caseEvents++;
        else checked.auditRows++;
      }
      if (page.length < PAGE) break;
      after = page.at(-1)!.chainSeq;
    }
    const unchained = await listUnchainedRows(db, table, 1);
    if (unchained.length > 0) return result({ table, id: unchained[0]!, problem: `${table} row ${unchained[0]} was written past the chain (it has no place in it)` });
  }

  // Each sign-off's steps against its row, and an approved date's data against its seal — before
  // the signatures, so a removed step is named by the sign-off it was taken from.
  const ids = signoffs.filter((s) => options.date === undefined || s.businessDate === options.date).map((s) => s.id);
  const [first] = await findSignoffProblems(db, { ids, key, withReports: false, only: 'structure' });
  if (first !== undefined) return result({ table: first.table, id: first.row, problem: first.problem });

  const signatures = await listSignoffSignatures(db);
  const stepHash = (s: SignoffSealRow, step: SignedStep) => (step === 'prepare' ? s.stored.seal : step === 'approve' ? s.stored.approval : s.stored.reopen);
  for (const sig of signatures) {
    const signoff = all.find((s) => s.id === sig.signoffId);
    const id = `${sig.signoffId}/${sig.step}`;
    if (signoff === undefined || stepHash(signoff, sig.step) !== sig.signedHash) return result({ table: 'signoff_signatures', id, problem: `the ${sig.step} signature of sign-off #${sig.signoffId} signs another hash than the one stored` });
    // With a pinned key the steps' own signatures decide (below); a signature of a sign-off's hash by an earlier key may stand.
    if (key !== undefined && !key.pinned && sig.publicKey !== key.publicKey) return result({ table: 'signoff_signatures', id, problem: `the ${sig.step} signature of sign-off #${sig.signoffId} was made with another key than RECON_SIGNING_KEY_FILE's` });
    if (!signatureHolds(sig.publicKey, sig.signedHash, sig.signature)) return result({ table: 'signoff_signatures', id, problem: `the ${sig.step} signature of sign-off #${sig.signoffId} does not verify` });
    checked.signatures++;
  }
  if (key !== undefined && !key.pinned) {
    // Steps taken since the key was introduced (the first signed sign-off) must all be signed.
    const first = Math.min(...signatures.filter((s) => s.publicKey === key.publicKey).map((s) => s.signoffId));
    for (const s of signoffs.filter((row) => row.id >= first)) {
      for (const step of ['prepare', 'approve', 'reopen'] as const) {
        if (stepHash(s, step) !== null && !signatures.some((sig) => sig.signoffId === s.id && sig.step === step)) {
          return result({ table: 'signoffs', id: String(s.id), problem: `sign-off #${s.id} of ${s.businessDate}: its ${step} step carries no signature` });
        }
      }
    }
  }

  // The steps' own signatures, as the console checks them before showing a sign-off.
  const [unsigned] = await findSignoffProblems(db, { ids, key, withReports: false, only: 'signatures' });
  if (unsigned !== undefined) return result({ table: unsigned.table, id: unsigned.row, problem: unsigned.problem });

  // The step log: one chain, every step in it, each step belonging to a sign-off.
  const steps = await listSteps(db);
  let before: string | null = null;
  for (const step of steps) {
    const at = `signoff_steps row ${step.id} (the ${step.kind} step of sign-off #${step.signoffId})`;
    if (step.chainSeq === null || step.hash === null) return result({ table: 'signoff_steps', id: step.id, problem: `${at} was written past the chain (it has no place in it)` });
    if (step.prevHash !== before) return result({ table: 'signoff_steps', id: step.id, problem: `${at} does not link to the step before it (a step was removed, inserted or changed before it)` });
    if (step.hash !== step.recomputed) return result({ table: 'signoff_steps', id: step.id, problem: `${at} was changed after it was written (its hash does not match its content)` });
    if (!all.some((s) => s.id === step.signoffId)) return result({ table: 'signoff_steps', id: step.id, problem: `${at} belongs to no sign-off (sign-off #${step.signoffId} was removed)` });
    before = step.hash;
    checked.steps++;
    if (step.signature !== null) checked.signedSteps++;
  }

  return result();
}

/** What is wrong with one sign-off row, given the previous row's seal; undefined when it holds. */
function checkSignoff(s: SignoffSealRow, previous: string | null, withReport: boolean): string | undefined {
  if (s.chainSeq === null || s.stored.seal === null) return 'it was written past the chain (it has no seal)';
  if (s.prevHash !== previous) return 'it does not link to the sign-off before it (a sign-off was removed, inserted or changed before it)';
  if (s.stored.seal !== s.recomputed.seal) return 'its content was changed after it was sealed (preparer, time, inputs or report hash)';
  if (s.stored.approval !== s.recomputed.approval) return 'its approval was changed or added past the database rules';
  if (s.stored.invalidation !== s.recomputed.invalidation) return 'its invalidation was changed or added past the database rules';
  if (s.stored.reopen !== s.recomputed.reopen) return 'its reopening was changed or added past the database rules';
  if (withReport && sealOf(s.reportHtml) !== s.reportSha256) return 'its sealed report does not match its seal (the report was altered after sealing)';
  return undefined;
}
