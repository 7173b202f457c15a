import { describe, expect, it } from 'vitest';
import { proveStatement, type ProvableStatement } from '../../src/statements/index.js';

const statement = (sequence: bigint | null, businessDate: string): ProvableStatement => ({ opbd: 100n, prcd: null, closing: 100n, booked: 0n, sequence, intraday: false, businessDate });
const previous = (sequence: bigint | null, businessDate: string) => ({ closing: 100n, sequence, businessDate });

describe('statement sequence numbers', () => {
  it('the next number follows; a skipped one is a gap naming the missing numbers', () => {
    expect(proveStatement(statement(8n, '2026-11-03'), previous(7n, '2026-11-02')).proof).toBe('ok');
    expect(proveStatement(statement(10n, '2026-11-03'), previous(7n, '2026-11-02'))).toEqual({ proof: 'sequence_gap', residual: null, missing: { from: 8n, to: 9n }, reason: 'the previous statement, of 2026-11-02, is number 7' });
  });

  it('a backward jump or a repeated number of another statement is sequence_gap with no number missing', () => {
    expect(proveStatement(statement(5n, '2026-11-03'), previous(7n, '2026-11-02'))).toEqual({ proof: 'sequence_gap', residual: null, missing: null, reason: 'number 5 comes after number 7, of 2026-11-02: a backward jump' });
    expect(proveStatement(statement(7n, '2026-11-03'), previous(7n, '2026-11-02'))).toEqual({ proof: 'sequence_gap', residual: null, missing: null, reason: 'number 7 repeats the number of the previous statement, of 2026-11-02' });
    // Within a year, 1 is a backward jump like any other, whatever the setting.
    for (const sequenceRestarts of [undefined, 'yearly', 'never'] as const) {
      expect(proveStatement(statement(1n, '2026-11-03'), previous(7n, '2026-11-02'), { sequenceRestarts }).proof).toBe('sequence_gap');
    }
  });

  it('1 on the first statement of a new year: a restart unless the account says sequenceRestarts: never', () => {
    expect(proveStatement(statement(1n, '2027-01-04'), previous(251n, '2026-12-31')).proof).toBe('ok');
    expect(proveStatement(statement(1n, '2027-01-04'), previous(251n, '2026-12-31'), { sequenceRestarts: 'yearly' }).proof).toBe('ok');
    expect(proveStatement(statement(1n, '2027-01-04'), previous(251n, '2026-12-31'), { sequenceRestarts: 'never' })).toEqual({
      proof: 'sequence_gap',
      residual: null,
      missing: null,
      reason: 'number 1 comes after number 251, of 2026-12-31: a backward jump (sequenceRestarts: never)',
    });
  });

  it('with sequenceRestarts: yearly the first statement of a year numbered on leaves 1 onwards missing; without the setting it continues', () => {
    expect(proveStatement(statement(252n, '2027-01-04'), previous(251n, '2026-12-31'), { sequenceRestarts: 'yearly' })).toEqual({
      proof: 'sequence_gap',
      residual: null,
      missing: { from: 1n, to: 251n },
      reason: 'the numbers restart at 1 each year (sequenceRestarts: yearly) and this is the first statement of 2027',
    });
    expect(proveStatement(statement(3n, '2027-01-04'), previous(251n, '2026-12-31'), { sequenceRestarts: 'yearly' }).missing).toEqual({ from: 1n, to: 2n });
    expect(proveStatement(statement(252n, '2027-01-04'), previous(251n, '2026-12-31')).proof).toBe('ok');
    expect(proveStatement(statement(252n, '2027-01-04'), previous(251n, '2026-12-31'), { sequenceRestarts: 'never' }).proof).toBe('ok');
  });

  it('a statement or a previous one without a number has no sequence to prove; an intraday report none either', () => {
    expect(proveStatement(statement(null, '2026-11-03'), previous(7n, '2026-11-02')).proof).toBe('ok');
    expect(proveStatement(statement(3n, '2026-11-03'), previous(null, '2026-11-02')).proof).toBe('ok');
    expect(proveStatement({ ...statement(3n, '2026-11-03'), intraday: true }, previous(7n, '2026-11-02')).proof).toBe('ok');
  });
});
