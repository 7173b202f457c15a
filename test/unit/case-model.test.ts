import { describe, expect, it } from 'vitest';
import { actionsAllowedFrom, ALLOWED_FROM } from '../../src/cases/case-actions.js';
import { ageBucketOf, caseAgeDays, caseKindOf, discrepancyAmount } from '../../src/cases/case-model.js';
import type { ReconciliationResult } from '../../src/reconciliation/reconciliation-result.js';

const amounts = (r: Partial<ReconciliationResult>) => ({ status: 'break' as const, gatewayBalance: null, singleBalance: null, expectedBalance: null, difference: null, ...r });

describe('case model', () => {
  it('opens a case for every status but matched', () => {
    expect(caseKindOf('matched')).toBeUndefined();
    expect(caseKindOf('break')).toBe('break');
    expect(caseKindOf('no_snapshot')).toBe('no_snapshot');
  });

  it('follows gateway minus books with a missing side as zero, list minus single wallet for an endpoint mismatch, exactly beyond 2^53', () => {
    const big = 2n ** 53n + 1n;
    expect(discrepancyAmount(amounts({ gatewayBalance: big, expectedBalance: 1n, difference: big - 1n }))).toBe(big - 1n);
    expect(discrepancyAmount(amounts({ status: 'missing_in_ledger', gatewayBalance: 70n }))).toBe(70n);
    expect(discrepancyAmount(amounts({ status: 'missing_in_gateway', expectedBalance: 9n }))).toBe(-9n);
    expect(discrepancyAmount(amounts({ status: 'endpoint_mismatch', gatewayBalance: 100n, singleBalance: 99n, expectedBalance: 100n, difference: 0n }))).toBe(1n);
    expect(discrepancyAmount(amounts({ status: 'disappeared' }))).toBeNull();
    expect(discrepancyAmount(amounts({ status: 'no_snapshot' }))).toBeNull();
  });

  it('ages a case to today while active or accepted and to its resolution once resolved, in buckets under 2, 2-7, 8-30, over 30 days', () => {
    expect(caseAgeDays({ state: 'open', openedOn: '2026-11-01', resolvedOn: null }, '2026-11-30')).toBe(29);
    expect(caseAgeDays({ state: 'resolved', openedOn: '2026-11-01', resolvedOn: '2026-11-04' }, '2026-11-30')).toBe(3);
    expect([0, 1, 2, 7, 8, 30, 31].map(ageBucketOf)).toEqual(['under 2 days', 'under 2 days', '2-7 days', '2-7 days', '8-30 days', '8-30 days', 'over 30 days']);
  });

  it('allows from each state only what makes sense', () => {
    expect(actionsAllowedFrom('open')).toEqual(['ack', 'assign', 'note', 'resolve', 'accept']);
    expect(actionsAllowedFrom('acknowledged')).toEqual(['assign', 'note', 'resolve', 'accept']);
    expect(actionsAllowedFrom('accepted')).toEqual(['assign', 'note', 'resolve', 'reopen']);
    expect(actionsAllowedFrom('resolved')).toEqual(['note', 'reopen']);
    expect(ALLOWED_FROM.accept).not.toContain('resolved');
  });
});
