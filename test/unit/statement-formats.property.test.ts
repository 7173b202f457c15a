import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDays } from '../../src/business-date/zoned-time.js';
import { writeBai2 } from '../../src/statements/bai2-writer.js';
import { readStatementText } from '../../src/statements/read-statement-file.js';
import { writeCamt053, writeMt940, type SampleStatements } from '../../src/statements/sample-statements.js';
import { closingBooked, openingBooked } from '../../src/statements/statement.js';
import { provableOf, proveStatement } from '../../src/statements/statement-proof.js';

// Currencies of every ISO 4217 scale the readers meet: 0 (JPY), 2 (EUR, USD), 3 (KWD, BHD).
const currency = fc.constantFrom('EUR', 'USD', 'JPY', 'KWD', 'BHD', 'CHF');
// Up to 12 digits of minor units: within MT940's 15 characters with the decimal comma.
const amount = fc.bigInt({ min: -999_999_999_999n, max: 999_999_999_999n });
const day = fc.date({ min: new Date('2001-01-01T00:00:00Z'), max: new Date('2098-12-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));

const sample = fc
  .record({
    currency,
    opening: amount,
    first: day,
    sequence: fc.integer({ min: 1, max: 9_000 }),
    days: fc.array(fc.array(amount, { maxLength: 6 }), { minLength: 1, maxLength: 4 }),
  })
  .map(({ currency: c, opening, first, sequence, days }): SampleStatements => ({
    iban: 'DE89370400440532013000',
    currency: c,
    opening,
    days: days.map((entries, i) => ({ sequence: sequence + i, date: addDays(first, i), entries })),
  }));

/** What a statement must read back as, from what was written: per day, its date, currency, balances and entries. */
function expected(s: SampleStatements) {
  let balance = s.opening;
  return s.days.map((d) => {
    const opening = balance;
    balance = opening + d.entries.reduce((a, b) => a + b, 0n);
    return { businessDate: d.date, currency: s.currency, opening, closing: balance, entries: d.entries.map((a) => ({ amount: a, creditDebit: a < 0n ? 'debit' : 'credit', bookingDate: d.date })) };
  });
}

function readBack(text: string, file: string) {
  return readStatementText(text, file).map((s) => {
    expect(proveStatement(provableOf(s), null).proof).toBe('ok');
    return {
      businessDate: s.businessDate,
      currency: s.currency,
      opening: openingBooked(s),
      closing: closingBooked(s),
      entries: s.entries.map((e) => ({ amount: e.amount, creditDebit: e.creditDebit, bookingDate: e.bookingDate })),
    };
  });
}

describe('every format reads back exactly the amounts, dates and currencies written', () => {
  it('camt.053', () => {
    fc.assert(fc.property(sample, fc.integer({ min: 2, max: 13 }), (s, version) => {
      expect(readBack(writeCamt053({ ...s, camtVersion: version }), 'p.xml')).toEqual(expected(s));
    }));
  });

  it('MT940', () => {
    fc.assert(fc.property(sample, (s) => {
      expect(readBack(writeMt940(s), 'p.sta')).toEqual(expected(s));
    }));
  });

  it('BAI2, with every control total and record count the writer computed accepted', () => {
    fc.assert(fc.property(sample, fc.stringMatching(/^[0-9]{4,17}$/), (s, account) => {
      const read = readStatementText(writeBai2(s, account), 'p.bai');
      expect(read.every((r) => r.accountId === account && r.format === 'bai2')).toBe(true);
      expect(readBack(writeBai2(s, account), 'p.bai')).toEqual(expected(s));
    }));
  });

  it('BAI2: any change of one digit of a control total refuses the file', () => {
    fc.assert(fc.property(sample, fc.constantFrom('49', '98', '99'), fc.integer({ min: 1, max: 9 }), (s, record, delta) => {
      const text = writeBai2(s, '12345').replace(new RegExp(`^${record},(-?\\d+),`, 'm'), (_, total: string) => `${record},${BigInt(total) + BigInt(delta)},`);
      expect(() => readStatementText(text, 'p.bai')).toThrow(/control total/);
    }));
  });
});
