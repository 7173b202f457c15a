import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeMissing, provableOf, proveStatement, type PreviousStatement, type ProvableStatement, type StatementEntry } from '../../src/statements/index.js';

const OK = { proof: 'ok', residual: null, missing: null, reason: null };

const entry = (amount: bigint, status = 'BOOK'): StatementEntry => ({
  amount,
  creditDebit: amount < 0n ? 'debit' : 'credit',
  status,
  bookingDate: '2026-11-03',
  valueDate: null,
  reference: null,
  bankReference: null,
  details: null,
  reversal: false,
});
const balance = (code: string, amount: bigint) => ({ code, amount, date: '2026-11-03' });

/** A statement of 3 November 2026 with these figures, numbered 8 unless said otherwise. */
const provable = (figures: Partial<ProvableStatement>): ProvableStatement => ({ opbd: null, prcd: null, closing: null, booked: 0n, sequence: 8n, intraday: false, businessDate: '2026-11-03', ...figures });
const previous = (closing: bigint, sequence: bigint | null = 7n, businessDate = '2026-11-02'): PreviousStatement => ({ closing, sequence, businessDate });

describe('the figures a proof needs (provableOf)', () => {
  it('takes OPBD, PRCD and CLBD, sums only the booked entries, and keeps the number and the date', () => {
    const statement = {
      balances: [balance('OPAV', 1n), balance('PRCD', 90n), balance('OPBD', 100n), balance('ITBD', 120n), balance('CLBD', 130n), balance('CLAV', 2n)],
      entries: [entry(50n), entry(-20n), entry(999n, 'PDNG'), entry(-7n, 'INFO'), entry(0n)],
      sequence: 12n,
      intraday: false,
      businessDate: '2026-11-03',
    };
    expect(provableOf(statement)).toEqual({ opbd: 100n, prcd: 90n, closing: 130n, booked: 30n, sequence: 12n, intraday: false, businessDate: '2026-11-03' });
  });

  it('takes an intraday report\'s interim booked balance (ITBD) as its closing, never a CLBD', () => {
    const statement = { balances: [balance('OPBD', 100n), balance('CLBD', 130n), balance('ITBD', 120n)], entries: [entry(20n)], sequence: null, intraday: true };
    expect(provableOf(statement)).toEqual({ opbd: 100n, prcd: null, closing: 120n, booked: 20n, sequence: null, intraday: true, businessDate: undefined });
    expect(provableOf({ ...statement, balances: [balance('CLBD', 130n)] }).closing).toBeNull();
  });

  it('a statement without balances or entries has none: no balance is made up, the booked sum is 0', () => {
    expect(provableOf({ balances: [], entries: [], sequence: null, intraday: false })).toEqual({ opbd: null, prcd: null, closing: null, booked: 0n, sequence: null, intraday: false, businessDate: undefined });
  });
});

describe('the roll-forward proof and its residual', () => {
  it('opening booked + booked entries = closing booked is ok; otherwise the residual is closing − opening − entries', () => {
    expect(proveStatement(provable({ opbd: 100n, closing: 130n, booked: 30n }), null)).toEqual(OK);
    expect(proveStatement(provable({ opbd: 100n, closing: 130n, booked: 20n }), null)).toEqual({ proof: 'roll_forward_break', residual: 10n, missing: null, reason: 'opening booked + booked entries ≠ closing booked' });
    expect(proveStatement(provable({ opbd: 100n, closing: 130n, booked: 45n }), null).residual).toBe(-15n);
    expect(proveStatement(provable({ opbd: -100n, closing: -130n, booked: -30n }), null)).toEqual(OK);
  });

  it('opens with PRCD when there is no OPBD', () => {
    expect(proveStatement(provable({ prcd: 100n, closing: 130n, booked: 30n }), null)).toEqual(OK);
    expect(proveStatement(provable({ prcd: 100n, closing: 130n, booked: 0n }), null).residual).toBe(30n);
  });

  it('needs both an opening and a closing to roll forward', () => {
    expect(proveStatement(provable({ opbd: 100n, booked: 30n }), null)).toEqual(OK);
    expect(proveStatement(provable({ closing: 100n, booked: 30n }), null)).toEqual(OK);
  });

  it('OPBD and PRCD, both given, must be the same balance: the residual is OPBD − PRCD', () => {
    expect(proveStatement(provable({ opbd: 100n, prcd: 90n, closing: 130n, booked: 30n }), null)).toEqual({ proof: 'roll_forward_break', residual: 10n, missing: null, reason: 'opening booked (OPBD) ≠ previously closed booked (PRCD)' });
    expect(proveStatement(provable({ opbd: 100n, prcd: 100n, closing: 130n, booked: 30n }), null)).toEqual(OK);
    expect(proveStatement(provable({ opbd: 90n, prcd: 100n }), null).residual).toBe(-10n);
  });

  it('the opening must be the previous statement\'s closing: the residual is opening − previous closing, naming its date', () => {
    expect(proveStatement(provable({ opbd: 100n, closing: 130n, booked: 30n }), previous(100n))).toEqual(OK);
    expect(proveStatement(provable({ opbd: 100n, closing: 130n, booked: 30n }), previous(95n))).toEqual({ proof: 'roll_forward_break', residual: 5n, missing: null, reason: 'opening booked ≠ the closing booked of 2026-11-02' });
    expect(proveStatement(provable({ prcd: 100n, closing: 130n, booked: 30n }), previous(110n)).residual).toBe(-10n);
    // Without an opening there is nothing to compare.
    expect(proveStatement(provable({ closing: 130n }), previous(95n))).toEqual(OK);
  });

  it('an intraday report is held to its own figures only, never to the previous statement', () => {
    expect(proveStatement(provable({ opbd: 100n, closing: 120n, booked: 20n, intraday: true, sequence: 99n }), previous(50n, 7n))).toEqual(OK);
    expect(proveStatement(provable({ opbd: 100n, closing: 120n, booked: 0n, intraday: true }), null).residual).toBe(20n);
  });

  it('reports the first failure: its own roll-forward, then OPBD against PRCD, then the number, then the previous closing', () => {
    const broken = provable({ opbd: 100n, prcd: 90n, closing: 130n, booked: 0n, sequence: 20n });
    expect(proveStatement(broken, previous(1n, 7n)).reason).toBe('opening booked + booked entries ≠ closing booked');
    expect(proveStatement({ ...broken, booked: 30n }, previous(1n, 7n)).reason).toBe('opening booked (OPBD) ≠ previously closed booked (PRCD)');
    expect(proveStatement({ ...broken, booked: 30n, prcd: null }, previous(1n, 7n)).proof).toBe('sequence_gap');
    expect(proveStatement({ ...broken, booked: 30n, prcd: null, sequence: 8n }, previous(1n, 7n)).proof).toBe('roll_forward_break');
  });

  it('the residual of any statement is exactly closing − opening − the sum of its booked entries', () => {
    const minor = fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n });
    fc.assert(
      fc.property(minor, fc.array(fc.tuple(minor, fc.constantFrom('BOOK', 'PDNG', 'INFO'))), minor, fc.boolean(), (opening, entries, closing, asPrcd) => {
        const statement = { balances: [balance(asPrcd ? 'PRCD' : 'OPBD', opening), balance('CLBD', closing)], entries: entries.map(([a, s]) => entry(a, s)), sequence: null, intraday: false };
        const booked = entries.filter(([, s]) => s === 'BOOK').reduce((sum, [a]) => sum + a, 0n);
        const proof = proveStatement(provableOf(statement), null);
        const residual = closing - opening - booked;
        expect(proof).toEqual(residual === 0n ? OK : { proof: 'roll_forward_break', residual, missing: null, reason: 'opening booked + booked entries ≠ closing booked' });
      }),
    );
  });

  it('a statement that rolls forward from the previous closing proves ok; any other opening breaks by the difference', () => {
    const minor = fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n });
    fc.assert(
      fc.property(minor, minor, fc.array(minor, { maxLength: 5 }), fc.bigInt({ min: 1n, max: 10n ** 12n }), (previousClosing, shift, entries, sequence) => {
        const opening = previousClosing + shift;
        const booked = entries.reduce((a, b) => a + b, 0n);
        const proof = proveStatement(provable({ opbd: opening, closing: opening + booked, booked, sequence: sequence + 1n }), previous(previousClosing, sequence));
        expect(proof.proof).toBe(shift === 0n ? 'ok' : 'roll_forward_break');
        expect(proof.residual).toBe(shift === 0n ? null : shift);
      }),
    );
  });
});

describe('sequence numbers against the previous statement', () => {
  const numbered = (sequence: bigint, businessDate: string) => provable({ opbd: 100n, closing: 100n, sequence, businessDate });

  it('a skipped number is a gap naming the numbers missing and the previous statement', () => {
    expect(proveStatement(numbered(9n, '2026-11-03'), previous(100n, 7n))).toEqual({ proof: 'sequence_gap', residual: null, missing: { from: 8n, to: 8n }, reason: 'the previous statement, of 2026-11-02, is number 7' });
    expect(proveStatement(numbered(8n, '2026-11-03'), previous(100n, 7n))).toEqual(OK);
  });

  it('a new year is a later year than the previous statement\'s, not a later day', () => {
    // 1 on 2 January after 31 December: a restart.
    expect(proveStatement(numbered(1n, '2027-01-02'), previous(100n, 250n, '2026-12-31'))).toEqual(OK);
    // The same year: 1 is a backward jump.
    expect(proveStatement(numbered(1n, '2026-12-31'), previous(100n, 250n, '2026-01-02')).reason).toBe('number 1 comes after number 250, of 2026-01-02: a backward jump');
    // A statement dated before the previous one's year is no new year either.
    expect(proveStatement(numbered(1n, '2025-12-31'), previous(100n, 250n, '2026-01-02')).proof).toBe('sequence_gap');
    // A statement whose date is unknown starts no year.
    expect(proveStatement({ ...numbered(1n, '2027-01-02'), businessDate: undefined }, previous(100n, 250n, '2026-12-31')).proof).toBe('sequence_gap');
  });

  it('sequenceRestarts: yearly — the first statement of a year numbered 1 follows, 2 leaves 1 missing, the next number of last year leaves 1 onwards missing', () => {
    const yearly = { sequenceRestarts: 'yearly' } as const;
    expect(proveStatement(numbered(1n, '2027-01-04'), previous(100n, 251n, '2026-12-31'), yearly)).toEqual(OK);
    expect(proveStatement(numbered(2n, '2027-01-04'), previous(100n, 251n, '2026-12-31'), yearly)).toEqual({
      proof: 'sequence_gap',
      residual: null,
      missing: { from: 1n, to: 1n },
      reason: 'the numbers restart at 1 each year (sequenceRestarts: yearly) and this is the first statement of 2027',
    });
    // Within the year it runs on as any sequence.
    expect(proveStatement(numbered(2n, '2027-01-05'), previous(100n, 1n, '2027-01-04'), yearly)).toEqual(OK);
    expect(proveStatement(numbered(4n, '2027-01-05'), previous(100n, 1n, '2027-01-04'), yearly).missing).toEqual({ from: 2n, to: 3n });
  });

  it('sequenceRestarts: never — a new year continues the sequence; 1 there is a backward jump, a repeated number too', () => {
    const never = { sequenceRestarts: 'never' } as const;
    expect(proveStatement(numbered(252n, '2027-01-04'), previous(100n, 251n, '2026-12-31'), never)).toEqual(OK);
    expect(proveStatement(numbered(255n, '2027-01-04'), previous(100n, 251n, '2026-12-31'), never).missing).toEqual({ from: 252n, to: 254n });
    expect(proveStatement(numbered(251n, '2027-01-04'), previous(100n, 251n, '2026-12-31'), never).reason).toBe('number 251 repeats the number of the previous statement, of 2026-12-31');
    expect(proveStatement(numbered(1n, '2027-01-04'), previous(100n, 1n, '2026-12-31'), never).reason).toBe('number 1 repeats the number of the previous statement, of 2026-12-31 (sequenceRestarts: never)');
    expect(proveStatement(numbered(2n, '2027-01-04'), previous(100n, 251n, '2026-12-31'), never).reason).toBe('number 2 comes after number 251, of 2026-12-31: a backward jump');
  });

  it('without the setting, a number other than 1 in a new year continues the sequence: a skip is a gap, a step back a jump', () => {
    expect(proveStatement(numbered(260n, '2027-01-04'), previous(100n, 251n, '2026-12-31')).missing).toEqual({ from: 252n, to: 259n });
    expect(proveStatement(numbered(5n, '2027-01-04'), previous(100n, 251n, '2026-12-31')).reason).toBe('number 5 comes after number 251, of 2026-12-31: a backward jump');
  });

  it('within a year, only the next number proves ok: every skip names what is missing, every other number is a jump or a repeat', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 15n }), fc.bigInt({ min: 1n, max: 10n ** 15n }), fc.constantFrom(undefined, 'yearly', 'never'), (before, after, sequenceRestarts) => {
        const proof = proveStatement(numbered(after, '2026-11-03'), previous(100n, before), { sequenceRestarts });
        if (after === before + 1n) expect(proof).toEqual(OK);
        else if (after > before) expect(proof).toMatchObject({ proof: 'sequence_gap', missing: { from: before + 1n, to: after - 1n } });
        else expect(proof).toMatchObject({ proof: 'sequence_gap', missing: null, reason: after === before ? `number ${after} repeats the number of the previous statement, of 2026-11-02` : `number ${after} comes after number ${before}, of 2026-11-02: a backward jump` });
      }),
    );
  });
});

describe('the missing numbers for people (describeMissing)', () => {
  it('one number, two numbers, or a range', () => {
    expect(describeMissing({ from: 3n, to: 3n })).toBe('3');
    expect(describeMissing({ from: 3n, to: 4n })).toBe('3, 4');
    expect(describeMissing({ from: 3n, to: 5n })).toBe('3 to 5');
    expect(describeMissing({ from: 1n, to: 999_999_999_999n })).toBe('1 to 999999999999');
  });
});
