import { caseAmountText, type ReconciliationCase } from './case-model.js';

/**
 * The decisions the case tracker takes about one case and one reconciled date, without the
 * database: whether the date speaks for the case's current state, and whether an acceptance
 * still covers what the date shows (the acceptance scope).
 */

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/**
 * Whether a date speaks for a case's current state rather than only its history: not earlier
 * than its latest occurrence and, once resolved, not earlier than the date the resolution holds
 * from (the clean date, or the business day a fix was recorded) nor the last date seen.
 */
export function isCurrentFor(c: Pick<ReconciliationCase, 'state' | 'lastSeenOn' | 'resolvedOn'>, date: string): boolean {
  if (c.state === 'resolved') return date > c.lastSeenOn && (c.resolvedOn === null || date >= c.resolvedOn);
  return date >= c.lastSeenOn;
}

/** The latest date a case knows: its resolution date once resolved after its last occurrence, else its last occurrence. */
export function latestDateOf(c: Pick<ReconciliationCase, 'state' | 'lastSeenOn' | 'resolvedOn'>): string {
  return c.state === 'resolved' && c.resolvedOn !== null && c.resolvedOn > c.lastSeenOn ? c.resolvedOn : c.lastSeenOn;
}

/**
 * Why an accepted case no longer covers what `date` shows, or undefined while it does. An
 * acceptance covers only the difference it accepted, moved by at most `tolerance` (at the
 * amounts' scale), and only until its end date: a date past `acceptedUntil`, or whose difference
 * moved further (or appeared, or went away), lapses it — whichever date it is, an earlier one included.
 */
export function acceptanceLapse(
  c: Pick<ReconciliationCase, 'currency' | 'acceptedUntil' | 'acceptedDifference'>,
  date: string,
  amount: bigint | null,
  tolerance: bigint,
): string | undefined {
  if (c.acceptedUntil !== null && date > c.acceptedUntil) return `it was accepted until ${c.acceptedUntil} and ${date} is after that`;
  const accepted = c.acceptedDifference;
  const moved = accepted === null || amount === null ? accepted !== amount : abs(amount - accepted) > tolerance;
  const shown = (v: bigint | null) => (v === null ? 'none' : caseAmountText(v, c.currency));
  if (moved) return `the difference moved from ${shown(accepted)} to ${shown(amount)}, beyond the tolerance of ${shown(tolerance)}`;
  return undefined;
}
