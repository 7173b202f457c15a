import type { AppContext } from '../app-context.js';
import { listChainPage, listSignoffSeals, listUnchainedRows, type SignoffSealRow } from '../db/seal-chain.repository.js';
import { listLiveSignoffs, listSignoffSignatures, loadSealedDigests } from '../db/signoff.repository.js';
import { sealOf } from './seal.js';
import { loadSigningKey, signatureHolds, type SignedStep } from './signing.js';

/** The first row that does not hold: which table, which row, and what is wrong with it. */
export interface SealProblem {
  table: 'signoffs' | 'case_events' | 'console_audit' | 'signoff_signatures';
  id: string;
  problem: string;
}

export interface SealVerification {
  /** Rows checked per table. */
  checked: { signoffs: number; reports: number; caseEvents: number; auditRows: number; signatures: number };
  /** Whether the signatures were checked against RECON_SIGNING_KEY_FILE's public key. */
  keyChecked: boolean;
  problem: SealProblem | undefined;
}

const PAGE = 5_000;

/**
 * Recomputes what the seals promise and stops at the first row that breaks it: each sealed
 * report's SHA-256 (all, or with `date` that date's), the sign-off chain (up to that date's last
 * sign-off with `date`), the case_events and console_audit chains, and every signature (with
 * RECON_SIGNING_KEY_FILE: every step since the first signed one must be signed by that key).
 */
export async function verifySeals(ctx: AppContext, options: { date?: string } = {}): Promise<SealVerification> {
  const db = ctx.database.db;
  const checked = { signoffs: 0, reports: 0, caseEvents: 0, auditRows: 0, signatures: 0 };
  const key = loadSigningKey(ctx.config);
  const result = (problem?: SealProblem): SealVerification => ({ checked, keyChecked: key !== undefined, problem });

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

  // Each approved date re-read: its results, books and statement balances must still be the sealed ones.
  for (const live of await listLiveSignoffs(db, options.date === undefined ? undefined : [options.date])) {
    if (live.approvedBy === null) continue;
    const now = await loadSealedDigests(db, live.accountSet, live.businessDate);
    for (const sealed of live.inputs.accounts) {
      const current = now.get(sealed.account) ?? { results: '', books: '', statementBalances: '' };
      const changed = [
        sealed.resultsDigest !== undefined && sealed.resultsDigest !== current.results ? 'results' : '',
        sealed.booksDigest !== undefined && sealed.booksDigest !== current.books ? 'books' : '',
        sealed.statementBalancesDigest !== undefined && sealed.statementBalancesDigest !== current.statementBalances ? 'statement balances' : '',
      ].filter(Boolean);
      if (changed.length > 0) {
        return result({
          table: 'signoffs',
          id: String(live.id),
          problem: `${live.businessDate} of account "${sealed.account}" (sign-off #${live.id}): its ${changed.join(', ')} differ from the sealed ones (changed past the lock)`,
        });
      }
    }
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

  const signatures = await listSignoffSignatures(db);
  const stepHash = (s: SignoffSealRow, step: SignedStep) => (step === 'prepare' ? s.stored.seal : step === 'approve' ? s.stored.approval : s.stored.reopen);
  for (const sig of signatures) {
    const signoff = all.find((s) => s.id === sig.signoffId);
    const id = `${sig.signoffId}/${sig.step}`;
    if (signoff === undefined || stepHash(signoff, sig.step) !== sig.signedHash) return result({ table: 'signoff_signatures', id, problem: `the ${sig.step} signature of sign-off #${sig.signoffId} signs another hash than the one stored` });
    if (key !== undefined && sig.publicKey !== key.publicKey) return result({ table: 'signoff_signatures', id, problem: `the ${sig.step} signature of sign-off #${sig.signoffId} was made with another key than RECON_SIGNING_KEY_FILE's` });
    if (!signatureHolds(sig.publicKey, sig.signedHash, sig.signature)) return result({ table: 'signoff_signatures', id, problem: `the ${sig.step} signature of sign-off #${sig.signoffId} does not verify` });
    checked.signatures++;
  }
  if (key !== undefined) {
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
