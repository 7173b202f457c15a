import { describe, expect, it } from 'vitest';
import { acceptanceLapse, isCurrentFor, latestDateOf } from '../../src/cases/case-rules.js';

const open = { state: 'open' as const, lastSeenOn: '2026-11-10', resolvedOn: null };
const resolved = (resolvedOn: string | null) => ({ state: 'resolved' as const, lastSeenOn: '2026-11-10', resolvedOn });

describe('whether a reconciled date speaks for a case’s current state (isCurrentFor)', () => {
  it('takes the last date seen and later ones for an active or accepted case, not earlier ones', () => {
    expect(isCurrentFor(open, '2026-11-10')).toBe(true);
    expect(isCurrentFor(open, '2026-11-11')).toBe(true);
    expect(isCurrentFor(open, '2026-11-09')).toBe(false);
    expect(isCurrentFor({ ...open, state: 'accepted' }, '2026-11-09')).toBe(false);
  });

  it('takes only dates after the last one seen, and from the resolution on, for a resolved case', () => {
    expect(isCurrentFor(resolved(null), '2026-11-10')).toBe(false);
    expect(isCurrentFor(resolved(null), '2026-11-11')).toBe(true);
    // Resolved (a fix recorded) on the 13th: the 11th and 12th are history, the 13th is current.
    expect(isCurrentFor(resolved('2026-11-13'), '2026-11-12')).toBe(false);
    expect(isCurrentFor(resolved('2026-11-13'), '2026-11-13')).toBe(true);
    expect(isCurrentFor(resolved('2026-11-13'), '2026-11-14')).toBe(true);
    expect(isCurrentFor(resolved('2026-11-10'), '2026-11-10')).toBe(false);
  });
});

describe('the latest date a case knows (latestDateOf)', () => {
  it('is the resolution date when resolved after the last date seen, else the last date seen', () => {
    expect(latestDateOf(resolved('2026-11-13'))).toBe('2026-11-13');
    expect(latestDateOf(resolved('2026-11-10'))).toBe('2026-11-10');
    expect(latestDateOf(resolved('2026-11-08'))).toBe('2026-11-10');
    expect(latestDateOf(resolved(null))).toBe('2026-11-10');
    expect(latestDateOf({ ...open, resolvedOn: '2026-11-13' })).toBe('2026-11-10');
  });
});

describe('the scope of an acceptance (acceptanceLapse)', () => {
  const accepted = { currency: 'EUR', acceptedUntil: '2026-11-30', acceptedDifference: -1_000n };

  it('covers the accepted difference moved by at most the tolerance, up to its end date', () => {
    expect(acceptanceLapse(accepted, '2026-11-30', -1_000n, 0n)).toBeUndefined();
    expect(acceptanceLapse(accepted, '2026-11-20', -1_005n, 5n)).toBeUndefined();
    expect(acceptanceLapse(accepted, '2026-11-20', -995n, 5n)).toBeUndefined();
    expect(acceptanceLapse({ ...accepted, acceptedUntil: null }, '2027-06-01', -1_000n, 0n)).toBeUndefined();
  });

  it('lapses past its end date, naming both dates', () => {
    expect(acceptanceLapse(accepted, '2026-12-01', -1_000n, 0n)).toBe('it was accepted until 2026-11-30 and 2026-12-01 is after that');
  });

  it('lapses when the difference moves beyond the tolerance either way, naming the amounts', () => {
    expect(acceptanceLapse(accepted, '2026-11-20', -1_006n, 5n)).toBe('the difference moved from EUR -10.00 to EUR -10.06, beyond the tolerance of EUR 0.05');
    expect(acceptanceLapse(accepted, '2026-11-20', -994n, 5n)).toBe('the difference moved from EUR -10.00 to EUR -9.94, beyond the tolerance of EUR 0.05');
    expect(acceptanceLapse(accepted, '2026-11-20', 1_000n, 5n)).toBe('the difference moved from EUR -10.00 to EUR 10.00, beyond the tolerance of EUR 0.05');
    // Past 2^53, one minor unit still counts.
    const big = { ...accepted, acceptedDifference: 9007199254740993n };
    expect(acceptanceLapse(big, '2026-11-20', 9007199254740994n, 0n)).toBe('the difference moved from EUR 90,071,992,547,409.93 to EUR 90,071,992,547,409.94, beyond the tolerance of EUR 0.00');
  });

  it('lapses when an amount appears or goes away, and holds while both are none', () => {
    expect(acceptanceLapse(accepted, '2026-11-20', null, 5n)).toBe('the difference moved from EUR -10.00 to none, beyond the tolerance of EUR 0.05');
    expect(acceptanceLapse({ ...accepted, acceptedDifference: null }, '2026-11-20', 0n, 5n)).toBe('the difference moved from none to EUR 0.00, beyond the tolerance of EUR 0.05');
    expect(acceptanceLapse({ ...accepted, acceptedDifference: null }, '2026-11-20', null, 0n)).toBeUndefined();
  });

  it('writes an account-level case’s amounts as plain digits and a 0-decimal currency without decimals', () => {
    expect(acceptanceLapse({ currency: null, acceptedUntil: null, acceptedDifference: 3n }, '2026-11-20', 4n, 0n)).toBe('the difference moved from 3 to 4, beyond the tolerance of 0');
    expect(acceptanceLapse({ currency: 'JPY', acceptedUntil: null, acceptedDifference: 1_500n }, '2026-11-20', 1_502n, 1n)).toBe('the difference moved from JPY 1,500 to JPY 1,502, beyond the tolerance of JPY 1');
  });
});
