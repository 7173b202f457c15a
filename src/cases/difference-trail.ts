import type { Kysely, Transaction } from 'kysely';
import { bankAccountNamed, type Config } from '../config/index.js';
import type { Database } from '../db/database.types.js';
import { listResultTrail, sumBooksEntriesByDate } from '../db/difference-origin.repository.js';
import { rescaleAmount } from '../money/format-amount.js';
import { differenceOrigin, type DifferenceChange, type DifferenceOrigin } from './difference-origin.js';
import type { ReconciliationCase } from './case-model.js';

/** The most dates a trail shows: a quarter of business dates and more; older ones are said to be left out. */
export const TRAIL_DATES = 120;

export interface DifferenceTrail extends DifferenceOrigin {
  /** Older dates were left out (more than TRAIL_DATES since the last match). */
  cut: boolean;
  /** The scale the trail's amounts are in (that of the latest result). */
  scale: number | null;
}

/**
 * The trail of a gateway case's difference (see difference-origin.ts): undefined for a bank
 * account's case (its statement entries are matched one by one instead) and for a case about the
 * whole account. The books' movement of a date is the sum of its books entries where imported.
 */
export async function loadDifferenceTrail(db: Kysely<Database> | Transaction<Database>, config: Pick<Config, 'bankAccounts'>, c: Pick<ReconciliationCase, 'account' | 'currency' | 'openedOn' | 'lastSeenOn'>): Promise<DifferenceTrail | undefined> {
  if (c.currency === null || bankAccountNamed(config, c.account) !== undefined) return undefined;
  const { rows, cut } = await listResultTrail(db, c.account, c.currency, c.openedOn, c.lastSeenOn, TRAIL_DATES);
  if (rows.length === 0) return undefined;
  const scale = rows.at(-1)!.scale;
  const entries = await sumBooksEntriesByDate(db, c.account, c.currency, rows[0]!.date, rows.at(-1)!.date);
  const booksEntriesOf = (date: string, rowScale: number | null): bigint | null => {
    const own = entries.filter((e) => e.date === date);
    // Entries at more decimals than the comparison cannot be brought there exactly: the balances tell the movement then.
    if (own.length === 0 || rowScale === null || own.some((e) => e.scale > rowScale)) return null;
    return own.reduce((sum, e) => sum + rescaleAmount(e.total, e.scale, rowScale), 0n);
  };
  // Dates compared at another scale than the latest cannot stand beside it: the trail starts after them.
  const sameScale = rows.slice(rows.findLastIndex((r) => r.scale !== scale) + 1);
  const origin = differenceOrigin(
    sameScale.map((r) => ({ date: r.date, status: r.status, gateway: r.gateway, books: r.books, difference: r.difference, booksEntries: booksEntriesOf(r.date, r.scale) })),
    c.openedOn,
  );
  return { ...origin, cut: cut || sameScale.length < rows.length, scale };
}

/**
 * The trail in sentences, for `cases show` and the case page: where it starts, the date the
 * difference appeared and each date it changed, with what each side moved that date.
 */
export function describeTrail(trail: DifferenceTrail, money: (amount: bigint) => string): string[] {
  const first = trail.rows[0]?.date;
  const start =
    trail.lastMatchedOn !== null
      ? `The gateway and the books last matched on ${trail.lastMatchedOn}.`
      : trail.cut
        ? `Only the latest ${trail.rows.length} dates are shown, from ${first}; older ones are left out.`
        : `No matched date is on record before the case: the trail starts at the first date reconciled, ${first}.`;
  const moved = (c: DifferenceChange) =>
    `gateway moved ${c.gatewayMovement === null ? 'unknown' : money(c.gatewayMovement)}, books moved ${c.booksMovement === null ? 'unknown' : money(c.booksMovement)}`;
  const lines = [start];
  if (trail.appeared === null) lines.push('No date since differs from that agreement.');
  else lines.push(`The difference appeared on ${trail.appeared.date}: ${money(trail.appeared.from)} to ${money(trail.appeared.to)} (${moved(trail.appeared)}).`);
  for (const c of trail.changes) lines.push(`It changed on ${c.date}: ${money(c.from)} to ${money(c.to)} (${moved(c)}).`);
  return lines;
}
