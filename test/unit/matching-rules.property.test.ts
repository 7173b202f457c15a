import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MATCHING_RULES, findSubset, isBankCharge, matchEntries, type BooksLine, type MatchingRules, type StatementLine } from '../../src/matching/index.js';

const runs = { numRuns: 200 };
const day = fc.integer({ min: 1, max: 28 }).map((d) => `2026-11-${String(d).padStart(2, '0')}`);
const amount = fc.bigInt({ min: -50_000n, max: 50_000n }).filter((a) => a !== 0n);
const ref = fc.option(fc.constantFrom('INV-1001', 'INV-1002', 'INV-1003', 'PAYOUT-77', 'X9'), { nil: null });
const books = fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 500 }).map(String), date: day, amount, reference: ref }), { selector: (b) => b.id, maxLength: 25 });
const statement = fc.uniqueArray(
  fc.record({
    id: fc.integer({ min: 1, max: 500 }).map(String),
    date: day,
    amount,
    reference: ref,
    bankReference: fc.option(fc.constantFrom('B-1', 'B-2'), { nil: null }),
    details: fc.option(fc.constantFrom('payment INV-1001 thanks', 'Bank fee', 'PAYOUT-77 batch', 'misc'), { nil: null }),
  }),
  { selector: (s) => s.id, maxLength: 25 },
);
const rules: fc.Arbitrary<MatchingRules> = fc.record({
  dateWindowDays: fc.integer({ min: 0, max: 5 }),
  amountTolerance: fc.bigInt({ min: 0n, max: 3n }),
  references: fc.subarray(['end_to_end', 'bank_reference', 'remittance'] as const, { minLength: 1 }),
  groupSize: fc.integer({ min: 1, max: 4 }),
});

function shuffle<T>(list: readonly T[], seed: number): T[] {
  const out = [...list];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1_103_515_245 + 12_345) % 2_147_483_648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('matching rules, for random entries and rules', () => {
  it('put each entry in at most one match, every match with both sides and amounts that agree within the tolerance', () => {
    fc.assert(
      fc.property(books, statement, rules, (b, s, r) => {
        const matches = matchEntries(b, s, r);
        const seenB = new Set<string>();
        const seenS = new Set<string>();
        for (const m of matches) {
          expect(m.books.length).toBeGreaterThan(0);
          expect(m.statement.length).toBeGreaterThan(0);
          expect(m.books.length === 1 || m.statement.length === 1).toBe(true);
          expect(m.books.length + m.statement.length - 1).toBeLessThanOrEqual(Math.max(r.groupSize, 1));
          for (const id of m.books) {
            expect(seenB.has(id)).toBe(false);
            seenB.add(id);
          }
          for (const id of m.statement) {
            expect(seenS.has(id)).toBe(false);
            seenS.add(id);
          }
          const sb = m.books.reduce((t, id) => t + b.find((x) => x.id === id)!.amount, 0n);
          const ss = m.statement.reduce((t, id) => t + s.find((x) => x.id === id)!.amount, 0n);
          const diff = sb > ss ? sb - ss : ss - sb;
          expect(diff).toBeLessThanOrEqual(r.amountTolerance);
          if (m.rule === 'amount_date' || m.rule === 'group_window') {
            for (const bid of m.books) for (const sid of m.statement) {
              const gap = Math.abs(Date.parse(b.find((x) => x.id === bid)!.date) - Date.parse(s.find((x) => x.id === sid)!.date)) / 86_400_000;
              expect(gap).toBeLessThanOrEqual(r.dateWindowDays);
            }
          }
        }
      }),
      runs,
    );
  });

  it('give the same matches whatever order the entries arrive in', () => {
    fc.assert(
      fc.property(books, statement, rules, fc.integer({ min: 1, max: 1_000_000 }), (b, s, r, seed) => {
        expect(matchEntries(shuffle(b, seed), shuffle(s, seed + 1), r)).toEqual(matchEntries(b, s, r));
      }),
      runs,
    );
  });

  it('match every pair sharing a unique reference and amount by reference', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.bigInt({ min: 1n, max: 1_000_000n }), { minLength: 1, maxLength: 30 }), fc.integer({ min: 0, max: 20 }), (amounts, shift) => {
        const b: BooksLine[] = amounts.map((a, i) => ({ id: String(i + 1), date: '2026-11-02', amount: -a, reference: `E2E-${i}` }));
        const s: StatementLine[] = amounts.map((a, i) => ({ id: String(i + 101), date: `2026-11-${String(2 + shift).padStart(2, '0')}`, amount: -a, reference: `E2E-${i}`, bankReference: null, details: null }));
        const matches = matchEntries(b, s, DEFAULT_MATCHING_RULES);
        expect(matches).toHaveLength(amounts.length);
        expect(matches.every((m) => m.rule === 'reference')).toBe(true);
        expect(matches.map((m) => [m.books[0], m.statement[0]])).toEqual(amounts.map((_, i) => [String(i + 1), String(i + 101)]));
      }),
      runs,
    );
  });

  it('never match by amount where either side has two candidates', () => {
    fc.assert(
      fc.property(amount, day, (a, d) => {
        const b: BooksLine[] = [{ id: '1', date: d, amount: a, reference: null }];
        const s: StatementLine[] = [
          { id: '2', date: d, amount: a, reference: null, bankReference: null, details: null },
          { id: '3', date: d, amount: a, reference: null, bankReference: null, details: null },
        ];
        expect(matchEntries(b, s, { ...DEFAULT_MATCHING_RULES, groupSize: 1 })).toEqual([]);
      }),
      runs,
    );
  });

  it('find a subset only when its sum is the target', () => {
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: -100n, max: 100n }), { maxLength: 10 }), fc.bigInt({ min: -300n, max: 300n }), fc.integer({ min: 2, max: 5 }), (xs, target, size) => {
        const found = findSubset(xs.map((amount) => ({ amount })), target, size, 0n);
        if (found !== undefined) {
          expect(found.length).toBeGreaterThanOrEqual(2);
          expect(found.length).toBeLessThanOrEqual(size);
          expect(found.reduce((t, x) => t + x.amount, 0n)).toBe(target);
        }
      }),
      runs,
    );
  });
});

describe('matching rules, worked cases', () => {
  const s = (id: string, date: string, amount: bigint, extra: Partial<StatementLine> = {}): StatementLine => ({ id, date, amount, reference: null, bankReference: null, details: null, ...extra });
  const b = (id: string, date: string, amount: bigint, reference: string | null = null): BooksLine => ({ id, date, amount, reference });

  it('finds a books reference in the remittance text, in any case', () => {
    expect(matchEntries([b('1', '2026-11-02', 12_000n, 'inv-1001')], [s('9', '2026-11-03', 12_000n, { details: 'Payment INV-1001 thank you' })])).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
  });

  it('matches by bank reference and by end-to-end id, only with an equal amount', () => {
    expect(matchEntries([b('1', '2026-11-02', 500n, 'B-77')], [s('9', '2026-11-02', 501n, { bankReference: 'B-77' })], { ...DEFAULT_MATCHING_RULES, groupSize: 1, dateWindowDays: 0 })).toEqual([]);
    expect(matchEntries([b('1', '2026-11-02', 500n, 'B-77')], [s('9', '2026-11-02', 501n, { bankReference: 'B-77' })], { ...DEFAULT_MATCHING_RULES, amountTolerance: 1n })).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
    expect(matchEntries([b('1', '2026-11-02', 500n, 'E-1')], [s('9', '2026-11-20', 500n, { reference: 'E-1' })])).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
  });

  it('matches an equal amount inside the window only', () => {
    expect(matchEntries([b('1', '2026-11-02', -7_000n)], [s('9', '2026-11-05', -7_000n)])).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
    expect(matchEntries([b('1', '2026-11-02', -7_000n)], [s('9', '2026-11-06', -7_000n)])).toEqual([]);
  });

  it('matches one payout to several books lines by reference, and several statement lines to one books line in the window', () => {
    expect(matchEntries([b('1', '2026-11-02', 300n, 'PO-5'), b('2', '2026-11-02', 200n, 'PO-5')], [s('9', '2026-11-03', 500n, { details: 'PO-5' })])).toEqual([
      { rule: 'group_reference', books: ['1', '2'], statement: ['9'] },
    ]);
    expect(matchEntries([b('1', '2026-11-02', -900n)], [s('8', '2026-11-02', -400n), s('9', '2026-11-03', -500n)])).toEqual([{ rule: 'group_window', books: ['1'], statement: ['8', '9'] }]);
  });

  it('keeps a bank charge apart: not matched by amount, not summed into a group', () => {
    const fee = s('9', '2026-11-02', -250n, { details: 'Account maintenance fee' });
    expect(isBankCharge(fee)).toBe(true);
    expect(matchEntries([b('1', '2026-11-02', -250n)], [fee])).toEqual([]);
    expect(matchEntries([b('1', '2026-11-02', -1_250n)], [s('8', '2026-11-02', -1_000n), fee])).toEqual([]);
    // Booked with its reference, it matches like any other entry.
    expect(matchEntries([b('1', '2026-11-02', -250n, 'FEE-11')], [{ ...fee, reference: 'FEE-11' }])).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
  });
});
