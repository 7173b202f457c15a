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
    if (d.range !== undefined) return `${capitalized(d.reason)} of ${d.range.from === d.range.to ? d.range.from : `${d.range.from} to ${d.range.to}`}: ${d.count} message${d.count === 1 ? '' : 's'} in one (${countsText(d.counts ?? {})})`;
    if (d.reason === 'RECON_QUIET_HOURS') return `${d.count} messages held during quiet hours, in one: see the console's overview`;
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

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

const TYPE_WORDS: Readonly<Record<string, [string, string]>> = {
  'problem.new': ['new problem', 'new problems'],
  'problem.changed': ['changed', 'changed'],
  'problem.aging': ['aging notice', 'aging notices'],
  'problem.cleared': ['cleared', 'cleared'],
  'books.missing': ['date without books', 'dates without books'],
  'item.overdue': ['overdue item', 'overdue items'],
};

/** "3 new problems, 30 dates without books": a summary's counts per event type, in words. */
export function countsText(counts: Readonly<Record<string, number>>): string {
  const order = Object.keys(TYPE_WORDS);
  return Object.entries(counts)
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([type, n]) => `${n} ${(TYPE_WORDS[type] ?? [type, type])[n === 1 ? 0 : 1]}`)
    .join(', ');
}

/** The body lines of a problem event for e-mail and Slack: what it is, or what a summary folded. */
export function problemLines(type: ProblemEventType, data: ProblemData | ProblemFoldedData): string[] {
  if (type === 'problem.folded') {
    const d = data as ProblemFoldedData;
    const lines = d.problems.map((p) => p.headline ?? `${p.type} ${p.account} ${p.currency} ${p.kind} ${p.amount ?? ''}`.trim());
    if ((d.more ?? 0) > 0) lines.push(`… and ${d.more} more (see the console's overview and "wallet-recon notify log").`);
    return lines;
  }
  const d = data as ProblemData;
  const lines = [`Account ${d.account} (${d.source}), ${d.currency === '' ? 'no currency' : d.currency}, ${d.kind.replaceAll('_', ' ')}, business date ${d.businessDate}.`];
  if (d.amount !== null) lines.push(`Difference: ${d.currency} ${d.amount}${d.previousAmount === null ? '' : ` (before: ${d.currency} ${d.previousAmount})`}.`);
  else if (d.previousAmount !== null) lines.push(`Last difference: ${d.currency} ${d.previousAmount}.`);
  lines.push(`Open ${d.ageDays} business day${d.ageDays === 1 ? '' : 's'}; fingerprint ${d.fingerprint}.`);
  return lines;
}
