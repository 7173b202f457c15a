import type { AppContext } from '../app-context.js';
import { listStatements } from '../db/bank-statement.repository.js';
import { listWaitingPages } from '../db/bank-statement-page.repository.js';
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
  /** Null for an incomplete statement: it is proved once whole. */
  proof: 'ok' | 'roll_forward_break' | 'sequence_gap' | null;
  /** The residual (major units) of a roll-forward break, or the missing sequence numbers of a gap. */
  proof_detail: string | null;
  /** The statement's number in this database: `statements show ID`; null for an incomplete statement, not stored as one yet. */
  id: number | null;
  /** The SHA-256 of the file it was imported from (`statements show ID --original` gives its bytes back); null before files were kept. */
  file_sha256: string | null;
  /** `complete`, or `incomplete`: a statement sent in pages (camt StmtPgntn) some of which have not arrived. */
  state: 'complete' | 'incomplete';
  /** A statement sent in pages: the page numbers stored (`1, 3`); null for a statement of one page. */
  pages: string | null;
}

/** Stored statements, oldest closing date first, of some accounts and a date range. */
export async function listStatementListings(ctx: AppContext, filter: { accounts?: readonly string[]; from?: string; to?: string; id?: number }): Promise<StatementListing[]> {
  const rows = await listStatements(ctx.database.db, filter);
  const complete: StatementListing[] = rows.map((r) => {
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
      state: 'complete',
      pages: r.pages,
    };
  });
  if (filter.id !== undefined) return complete;
  return [...complete, ...(await incompleteListings(ctx, filter))].sort((a, b) => (a.business_date < b.business_date ? -1 : a.business_date > b.business_date ? 1 : a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
}

/** The statements some of whose pages are stored and others not yet: one listing each, incomplete. */
async function incompleteListings(ctx: AppContext, filter: { accounts?: readonly string[]; from?: string; to?: string }): Promise<StatementListing[]> {
  const pages = await listWaitingPages(ctx.database.db, filter.accounts);
  const groups = new Map<string, typeof pages>();
  for (const page of pages) {
    const key = `${page.account}\u0000${page.pageKey}`;
    groups.set(key, [...(groups.get(key) ?? []), page]);
  }
  const listings: StatementListing[] = [];
  for (const group of groups.values()) {
    const first = group[0]!;
    const businessDate = group.reduce((d, p) => (p.businessDate > d ? p.businessDate : d), first.businessDate);
    if ((filter.from !== undefined && businessDate < filter.from) || (filter.to !== undefined && businessDate > filter.to)) continue;
    const opening = first.pageNumber === 1 ? (first.balances.find((b) => b.code === 'OPBD') ?? first.balances.find((b) => b.code === 'PRCD')) : undefined;
    listings.push({
      account: first.account,
      statement_id: first.statementId,
      sequence: first.sequence === null ? null : first.sequence <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(first.sequence) : first.sequence.toString(),
      business_date: businessDate,
      currency: first.currency,
      opening: opening === undefined ? null : toMajorUnits(opening.amount, first.scale),
      closing: null,
      entries: group.reduce((n, p) => n + p.entries, 0),
      proof: null,
      proof_detail: null,
      id: null,
      file_sha256: first.fileSha256,
      state: 'incomplete',
      pages: group.map((p) => p.pageNumber).join(', '),
    });
  }
  return listings;
}
