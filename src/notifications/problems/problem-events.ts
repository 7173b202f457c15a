import type { ProblemFoldedData } from './problem-outbox.js';

export type ProblemEventType = 'problem.new' | 'problem.changed' | 'problem.aging' | 'problem.cleared' | 'problem.folded';

/** A problem's event: what it is (its fingerprint) and its amount on the date, in major units. */
export interface ProblemData {
  account: string;
  /** `gateway` or `bank`. */
  source: string;
  /** '' for an account-level problem (no snapshot, no books). */
  currency: string;
  /** The result status it comes from: break, missing_in_ledger, no_books, no_statement … */
  kind: string;
  fingerprint: string;
  businessDate: string;
  /** The difference in major units ("100.00", "-5"); null when it has no amount. On problem.cleared: the last amount seen. */
  amount: string | null;
  /** The amount last announced (problem.changed, problem.aging), or last seen (problem.cleared); null for problem.new. */
  previousAmount: string | null;
  /** Business days since the problem first appeared (0 on its first date). */
  ageDays: number;
}

export type { ProblemFoldedData } from './problem-outbox.js';

/** The headline of a problem event, for subjects, Slack and logs. */
export function problemHeadline(type: ProblemEventType, data: ProblemData | ProblemFoldedData): string {
  if (type === 'problem.folded') {
    const d = data as ProblemFoldedData;
    return `${d.count} more problem message${d.count === 1 ? '' : 's'}${d.businessDate === null ? '' : ` for ${d.businessDate}`}, folded into one (${d.reason}): see the console's overview`;
  }
  const d = data as ProblemData;
  const what = `${d.kind.replaceAll('_', ' ')} on account "${d.account}"${d.currency === '' ? '' : ` ${d.currency}`}`;
  const amount = d.amount === null ? '' : ` (${d.currency} ${d.amount})`.replace('( ', '(');
  if (type === 'problem.new') return `New ${what} on ${d.businessDate}${amount}`;
  if (type === 'problem.changed') return `Changed ${what} on ${d.businessDate}: ${d.previousAmount ?? '?'} → ${d.amount ?? '?'} ${d.currency}`.trimEnd();
  if (type === 'problem.aging') return `Still open: ${what}, ${d.ageDays} business days old on ${d.businessDate}${amount}`;
  return `Cleared: ${what} on ${d.businessDate} (open since ${d.ageDays} business day${d.ageDays === 1 ? '' : 's'} before)`;
}
