import { describe, expect, it } from 'vitest';
import { describeInputChanges, type SignoffInputs } from '../../src/signoff/sealed-inputs.js';

const signed: SignoffInputs = {
  accountSet: ['eu-main'],
  tolerance: { default: '0', bps: 0, byCurrency: {} },
  accounts: [{ account: 'eu-main', runId: 7, booksImportId: 3, booksImportIds: [3], previousRunId: 5, resultsDigest: 'a'.repeat(64), cases: { '12': 'accepted' } }],
};
const withAccount = (change: Partial<SignoffInputs['accounts'][number]>): SignoffInputs => ({ ...signed, accounts: [{ ...signed.accounts[0]!, ...change }] });

describe('what changed after sign-off (describeInputChanges)', () => {
  it('finds nothing when the inputs are the same, whatever order the JSON came back in', () => {
    expect(describeInputChanges(signed, JSON.parse(JSON.stringify(signed)))).toEqual([]);
  });

  it('does not count a tolerance change by itself: only the result it changes counts', () => {
    expect(describeInputChanges(signed, { ...signed, tolerance: { default: '1', bps: 0, byCurrency: {} } })).toEqual([]);
    expect(describeInputChanges(signed, withAccount({ resultsDigest: 'b'.repeat(64) }))).toEqual(['eu-main: the results changed (reconciled again with other inputs or settings)']);
  });

  it("names the previous date's snapshot, the books imports, the day's run and the account set", () => {
    expect(describeInputChanges(signed, withAccount({ previousRunId: 6 }))).toEqual(["eu-main: the previous date's snapshot changed (run 5 → run 6), so the movement did"]);
    expect(describeInputChanges(signed, withAccount({ booksImportId: 4, booksImportIds: [3, 4] }))).toEqual(['eu-main: the books were re-imported (import 3 → import 3, 4)']);
    expect(describeInputChanges(signed, withAccount({ runId: 8 }))).toEqual(["eu-main: a better snapshot became the day's snapshot (run 7 → run 8)"]);
    expect(describeInputChanges(signed, { ...signed, accountSet: ['eu-main', 'us-main'] })).toEqual(['the accounts changed (eu-main → eu-main, us-main)']);
  });

  it('reads sign-offs recorded before the new inputs (one books import, no digest) without inventing changes', () => {
    const old: SignoffInputs = { accounts: [{ account: 'eu-main', runId: 7, booksImportId: 3, cases: {} }] };
    expect(describeInputChanges(old, withAccount({ cases: {} }))).toEqual([]);
  });
});
