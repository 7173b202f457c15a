import type { AppContext } from '../app-context.js';
import { listStatements } from '../db/bank-statement.repository.js';
import { toMajorUnits } from '../money/format-amount.js';

/** One statement as `statements list` shows it: these fields, in this order, and no others. */
export interface StatementListing {
  account: string;
  statement_id: string;
  /** camt `ElctrncSeqNb`, MT940 `:28C:` statement number; null when the statement has none. */
  sequence: number | string | null;
  /** The date of the closing booked balance (an intraday report: of its latest balance). */
  business_date: string;
  currency: string;
  /** Major units without separators, a debit negative: `-250.00`. */
  opening: string | null;
  /** Closing booked; null for an intraday (camt.052) report, which has none. */
  closing: string | null;
  entries: number;
  proof: 'ok' | 'roll_forward_break' | 'sequence_gap';
  /** The residual (major units) of a roll-forward break, or the missing sequence numbers of a gap. */
  proof_detail: string | null;
  /** The statement's number in this database: `statements show ID`. */
  id: number;
  /** The SHA-256 of the file it was imported from (`statements show ID --original` gives its bytes back); null before files were kept. */
  file_sha256: string | null;
}

/** Stored statements, oldest closing date first, of some accounts and a date range. */
export async function listStatementListings(ctx: AppContext, filter: { accounts?: readonly string[]; from?: string; to?: string; id?: number }): Promise<StatementListing[]> {
  const rows = await listStatements(ctx.database.db, filter);
  return rows.map((r) => {
    const major = (v: string | null) => (v === null ? null : toMajorUnits(BigInt(v), r.scale));
    const sequence = r.sequence === null ? null : BigInt(r.sequence) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(r.sequence) : r.sequence;
    return {
      account: r.account,
      statement_id: r.statement_id,
      sequence,
      business_date: r.business_date,
      currency: r.currency,
      opening: major(r.opening),
      closing: major(r.closing),
      entries: r.entries,
      proof: r.proof,
      proof_detail: r.proof === 'roll_forward_break' ? major(r.proof_residual) : r.proof === 'sequence_gap' ? r.proof_missing : null,
      id: r.id,
      file_sha256: r.file_sha256,
    };
  });
}
