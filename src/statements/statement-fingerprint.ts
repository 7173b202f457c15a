import { createHash } from 'node:crypto';
import { closingBooked, openingBooked, type ParsedStatement } from './statement.js';

/**
 * What a statement says, whatever format it came in: currency, closing date, booked opening
 * and closing balances, and its booked entries (amount and value date, in a fixed order). The
 * same statement as camt.053 and as MT940 has the same fingerprint; one that tells other money
 * does not. References and texts, which the formats carry differently, are not part of it.
 */
export function statementFingerprint(statement: ParsedStatement): string {
  const entries = statement.entries
    .filter((e) => e.status === 'BOOK')
    .map((e) => `${e.amount}@${e.valueDate ?? e.bookingDate ?? ''}`)
    .sort();
  const canonical = JSON.stringify([statement.currency, statement.businessDate, statement.intraday, String(openingBooked(statement)), String(closingBooked(statement)), entries]);
  return createHash('sha256').update(canonical).digest('hex');
}
