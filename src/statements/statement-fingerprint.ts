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
