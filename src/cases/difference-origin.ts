/**
 * Where a gateway difference started. The gateway publishes balances only, never transactions,
 * so the one trail there is to follow is day by day: the gateway's movement beside the books'
 * movement, from the last date the two agreed. The date their difference first departs from
 * that agreement is where it appeared; every later date it moves again is a change, and the two
 * movements of that date say which side moved the other way.
 *
 * Pure: the days come in, the trail goes out. Amounts are minor units at one scale.
 */

/** One reconciled business date of one account and currency. */
export interface OriginDay {
  date: string;
  /** The result's status that date (`matched`, `explained`, `break`, …). */
  status: string;
  /** The gateway's closing balance, null where none was captured. */
  gateway: bigint | null;
  /** The books' closing balance, null where none arrived. */
  books: bigint | null;
  /** Gateway − books as the reconciliation computed it; null where a side is missing. */
  difference: bigint | null;
  /** Σ of the books entries booked that date, where entries were imported for it. */
  booksEntries?: bigint | null;
}

export interface OriginRow {
  date: string;
  status: string;
  gateway: bigint | null;
  /** The gateway's balance minus its previous date's, null without both. */
  gatewayMovement: bigint | null;
  books: bigint | null;
  /** The sum of the date's books entries where imported, else the balance minus the previous date's. */
  booksMovement: bigint | null;
  booksMovementFrom: 'entries' | 'balances' | null;
  difference: bigint | null;
  /** The difference minus the last known one before this date, null on the first row or without a difference. */
  change: bigint | null;
}

export interface DifferenceChange {
  date: string;
  /** The difference before and after the date. */
  from: bigint;
  to: bigint;
  gatewayMovement: bigint | null;
  booksMovement: bigint | null;
}

export interface DifferenceOrigin {
  /** The last date the two agreed (status matched) before the difference's case opened; null when no such date is on record. */
  lastMatchedOn: string | null;
  /** From the last matched date (or the first on record) to the last date of the case, oldest first. */
  rows: OriginRow[];
  /** The first date whose difference departs from the last agreement (from zero when none is on record). */
  appeared: DifferenceChange | null;
  /** Every later date the difference moved again. */
  changes: DifferenceChange[];
}

/**
 * The trail of a difference over `days` (any order; those after the case's last date already
 * left out), for a case first seen on `openedOn`. The last matched date before `openedOn` is
 * the baseline; without one the trail starts at the first date on record and the baseline is
 * no difference at all.
 */
export function differenceOrigin(days: readonly OriginDay[], openedOn: string): DifferenceOrigin {
  const sorted = [...days].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  let anchor = -1;
  for (let i = 0; i < sorted.length; i++) if (sorted[i]!.status === 'matched' && sorted[i]!.date < openedOn) anchor = i;
  const start = anchor === -1 ? 0 : anchor;
  const rows: OriginRow[] = [];
  let lastKnown: bigint | null = null;
  for (let i = start; i < sorted.length; i++) {
    const day = sorted[i]!;
    const previous = i > 0 ? sorted[i - 1] : undefined;
    const gatewayMovement = day.gateway !== null && previous?.gateway !== null && previous?.gateway !== undefined ? day.gateway - previous.gateway : null;
    const fromEntries = day.booksEntries !== undefined && day.booksEntries !== null;
    const booksMovement = fromEntries ? day.booksEntries! : day.books !== null && previous?.books !== null && previous?.books !== undefined ? day.books - previous.books : null;
    const difference = day.difference;
    rows.push({
      date: day.date,
      status: day.status,
      gateway: day.gateway,
      gatewayMovement,
      books: day.books,
      booksMovement,
      booksMovementFrom: booksMovement === null ? null : fromEntries ? 'entries' : 'balances',
      difference,
      change: difference !== null && lastKnown !== null ? difference - lastKnown : null,
    });
    if (difference !== null) lastKnown = difference;
  }

  // The baseline: what the two sides differed by when they last agreed (within tolerance), else nothing.
  const baseline = anchor === -1 ? 0n : (sorted[anchor]!.difference ?? 0n);
  let appeared: DifferenceChange | null = null;
  const changes: DifferenceChange[] = [];
  let before = baseline;
  for (const row of anchor === -1 ? rows : rows.slice(1)) {
    if (row.difference === null || row.difference === before) continue;
    const change = { date: row.date, from: before, to: row.difference, gatewayMovement: row.gatewayMovement, booksMovement: row.booksMovement };
    if (appeared === null) appeared = change;
    else changes.push(change);
    before = row.difference;
  }
  return { lastMatchedOn: anchor === -1 ? null : sorted[anchor]!.date, rows, appeared, changes };
}
