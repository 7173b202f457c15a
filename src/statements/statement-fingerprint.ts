import { createHash } from 'node:crypto';
import { closingBooked, openingBooked, type ParsedStatement, type StatementEntry } from './statement.js';

/**
 * What a statement says, whatever format it came in: currency, closing date, booked opening
 * and closing balances, and its booked entries (amount and value date, in a fixed order). The
 * same statement as camt.053 and as MT940 has the same fingerprint; one that tells other money
 * does not. References and texts, which the formats carry differently, are not part of it.
 */
export function statementFingerprint(statement: ParsedStatement): string {
  return fingerprintOfKeys(
    statement,
    statement.entries.filter((e) => e.status === 'BOOK').map(bookedKey),
  );
}

/** What the fingerprint keeps of a booked entry: its amount and value (else booking) date. */
export function bookedKey(entry: Pick<StatementEntry, 'amount' | 'valueDate' | 'bookingDate'>): string {
  return `${entry.amount}@${entry.valueDate ?? entry.bookingDate ?? ''}`;
}

/**
 * statementFingerprint from the booked entries' keys (bookedKey) alone: a statement read as a
 * stream keeps these short keys, not its entries. The keys are sorted in place.
 */
export function fingerprintOfKeys(statement: Pick<ParsedStatement, 'currency' | 'businessDate' | 'intraday' | 'balances'>, keys: string[]): string {
  keys.sort();
  const head = JSON.stringify([statement.currency, statement.businessDate, statement.intraday, String(openingBooked(statement)), String(closingBooked(statement))]);
  // The same text as JSON.stringify([...head, keys]), written a piece at a time.
  const hash = createHash('sha256').update(`${head.slice(0, -1)},[`);
  keys.forEach((key, i) => hash.update(i === 0 ? JSON.stringify(key) : `,${JSON.stringify(key)}`));
  return hash.update(']]').digest('hex');
}

/**
 * The booked entries' keys of a statement read as a stream, held compactly: each amount's digits
 * once (a flat short string) and the index of its date among the few dates of a statement, rather
 * than a million joined strings. `fingerprint` sorts them as statementFingerprint sorts its keys.
 */
export class BookedKeys {
  private readonly amounts: string[] = [];
  private dayIndexes: number[] = [];
  private readonly days: string[] = [];
  private readonly dayIndex = new Map<string, number>();

  add(entry: Pick<StatementEntry, 'amount' | 'valueDate' | 'bookingDate'>): void {
    const day = entry.valueDate ?? entry.bookingDate ?? '';
    let index = this.dayIndex.get(day);
    if (index === undefined) {
      index = this.days.length;
      this.days.push(day);
      this.dayIndex.set(day, index);
    }
    this.amounts.push(entry.amount.toString());
    this.dayIndexes.push(index);
  }

  fingerprint(statement: Pick<ParsedStatement, 'currency' | 'businessDate' | 'intraday' | 'balances'>): string {
    const { amounts, days } = this;
    const dayOf = Uint32Array.from(this.dayIndexes);
    this.dayIndexes = [];
    const order = new Uint32Array(amounts.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    // The order of the strings `${amount}@${day}` (UTF-16 code units), without making them: the
    // amounts first; an amount that is a prefix of the other sorts after it ('@' follows every
    // digit and '-'); the same amount, by day.
    order.sort((x, y) => {
      const a = amounts[x]!;
      const b = amounts[y]!;
      if (a === b) {
        const da = days[dayOf[x]!]!;
        const db = days[dayOf[y]!]!;
        return da < db ? -1 : da > db ? 1 : 0;
      }
      const n = Math.min(a.length, b.length);
      for (let i = 0; i < n; i++) {
        const d = a.charCodeAt(i) - b.charCodeAt(i);
        if (d !== 0) return d;
      }
      const next = (s: string) => (s.length > n ? s.charCodeAt(n) : 0x40);
      return next(a) - next(b);
    });
    const head = JSON.stringify([statement.currency, statement.businessDate, statement.intraday, String(openingBooked(statement)), String(closingBooked(statement))]);
    const hash = createHash('sha256').update(`${head.slice(0, -1)},[`);
    order.forEach((i, k) => hash.update(`${k === 0 ? '' : ','}"${amounts[i]}@${days[dayOf[i]!]}"`));
    return hash.update(']]').digest('hex');
  }
}
