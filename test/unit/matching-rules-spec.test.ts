import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MATCHING_RULES, matchEntries, type BooksLine, type MatchingRules, type StatementLine } from '../../src/matching/index.js';
import { isBankCharge, normalizeReference, statementKeys } from '../../src/matching/match-rules.js';

// The matching rules (docs/matching.md, "The rules, in order") as specifications: each rule on
// entries chosen to show it, then properties every result of random entries and rules must have.

const b = (id: string, date: string, amount: bigint, reference: string | null = null): BooksLine => ({ id, date, amount, reference });
const s = (id: string, date: string, amount: bigint, extra: Partial<StatementLine> = {}): StatementLine => ({ id, date, amount, reference: null, bankReference: null, details: null, ...extra });
const rules = (extra: Partial<MatchingRules> = {}): MatchingRules => ({ ...DEFAULT_MATCHING_RULES, ...extra });

describe('rule 1, reference: a shared reference and an equal amount', () => {
  it('matches whatever the dates, the nearest statement entry first', () => {
    const books = [b('1', '2026-11-10', 100n, 'R-1')];
    const statement = [s('1', '2026-11-04', 100n, { reference: 'R-1' }), s('2', '2026-11-12', 100n, { reference: 'R-1' }), s('3', '2026-11-20', 100n, { reference: 'R-1' })];
    expect(matchEntries(books, statement)).toEqual([{ rule: 'reference', books: ['1'], statement: ['2'] }]);
    expect(matchEntries([b('1', '2026-11-10', 100n, 'R-1')], [s('7', '2026-11-18', 100n, { reference: 'R-1' }), s('8', '2026-11-01', 100n, { reference: 'R-1' })])).toEqual([
      { rule: 'reference', books: ['1'], statement: ['7'] },
    ]);
  });

  it('of entries as near, takes the earlier date, then the lower id (as numbers)', () => {
    const books = [b('1', '2026-11-10', 100n, 'R-1')];
    expect(matchEntries(books, [s('4', '2026-11-12', 100n, { reference: 'R-1' }), s('5', '2026-11-08', 100n, { reference: 'R-1' })])).toEqual([{ rule: 'reference', books: ['1'], statement: ['5'] }]);
    expect(matchEntries(books, [s('12', '2026-11-12', 100n, { reference: 'R-1' }), s('7', '2026-11-12', 100n, { reference: 'R-1' })])).toEqual([{ rule: 'reference', books: ['1'], statement: ['7'] }]);
  });

  it('gives a statement entry to one books line only, the lower id of the same date first', () => {
    const books = [b('10', '2026-11-03', 100n, 'R-1'), b('2', '2026-11-03', 100n, 'R-1')];
    expect(matchEntries(books, [s('9', '2026-11-03', 100n, { reference: 'R-1' })], rules({ groupSize: 1 }))).toEqual([{ rule: 'reference', books: ['2'], statement: ['9'] }]);
    // Two of each: each books line has its own.
    const statement = [s('9', '2026-11-03', 100n, { reference: 'R-1' }), s('8', '2026-11-04', 100n, { reference: 'R-1' })];
    expect(matchEntries(books, statement, rules({ groupSize: 1 }))).toEqual([
      { rule: 'reference', books: ['2'], statement: ['9'] },
      { rule: 'reference', books: ['10'], statement: ['8'] },
    ]);
  });

  it('needs the amounts equal within the tolerance', () => {
    const far = (amount: bigint) => [s('9', '2026-11-20', amount, { reference: 'R-1' })];
    const books = [b('1', '2026-11-02', 1_000n, 'R-1')];
    expect(matchEntries(books, far(1_002n), rules({ amountTolerance: 2n }))).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
    expect(matchEntries(books, far(998n), rules({ amountTolerance: 2n }))).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
    expect(matchEntries(books, far(1_003n), rules({ amountTolerance: 2n }))).toEqual([]);
    expect(matchEntries(books, far(1_001n))).toEqual([]);
    expect(matchEntries(books, far(-1_000n))).toEqual([]);
  });

  it('compares only the references the rules name', () => {
    const books = [b('1', '2026-11-02', 500n, 'B-77')];
    const byBankReference = [s('9', '2026-11-20', 500n, { bankReference: 'B-77' })];
    const byText = [s('9', '2026-11-20', 500n, { details: 'Invoice B-77 paid' })];
    const byEndToEnd = [s('9', '2026-11-20', 500n, { reference: 'b 77' })];
    expect(matchEntries(books, byBankReference, rules({ references: ['end_to_end', 'remittance'] }))).toEqual([]);
    expect(matchEntries(books, byBankReference, rules({ references: ['bank_reference'] }))).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
    expect(matchEntries(books, byText, rules({ references: ['end_to_end', 'bank_reference'] }))).toEqual([]);
    expect(matchEntries(books, byText, rules({ references: ['remittance'] }))).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
    expect(matchEntries(books, byEndToEnd, rules({ references: ['bank_reference', 'remittance'] }))).toEqual([]);
  });

  it('ignores a blank books reference (the amount rule may still match it)', () => {
    const statement = [s('9', '2026-11-20', 500n, { reference: '  ' })];
    expect(matchEntries([b('1', '2026-11-02', 500n, '  ')], statement)).toEqual([]);
    expect(matchEntries([b('1', '2026-11-19', 500n, ' ')], statement)).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
  });

  it('matches a bank charge when the books carry its reference', () => {
    const fee = s('9', '2026-11-02', -250n, { details: 'Bank charges', bankReference: 'FEE-11' });
    expect(matchEntries([b('1', '2026-11-30', -250n, 'fee-11')], [fee])).toEqual([{ rule: 'reference', books: ['1'], statement: ['9'] }]);
  });
});

describe('rule 2, amount_date: an equal amount within the window, one candidate each side', () => {
  it('looks as many days either side as the window', () => {
    const statement = [s('9', '2026-11-10', -7_000n)];
    for (const [date, window, matched] of [
      ['2026-11-10', 0, true],
      ['2026-11-09', 0, false],
      ['2026-11-12', 2, true],
      ['2026-11-08', 2, true],
      ['2026-11-13', 2, false],
      ['2026-11-07', 2, false],
    ] as const) {
      expect(matchEntries([b('1', date, -7_000n)], statement, rules({ dateWindowDays: window, groupSize: 1 }))).toEqual(matched ? [{ rule: 'amount_date', books: ['1'], statement: ['9'] }] : []);
    }
  });

  it('leaves a statement entry with two books candidates to a person', () => {
    const statement = [s('9', '2026-11-04', 700n)];
    expect(matchEntries([b('1', '2026-11-01', 700n), b('2', '2026-11-07', 700n)], statement, rules({ groupSize: 1 }))).toEqual([]);
    expect(matchEntries([b('1', '2026-11-01', 700n), b('2', '2026-11-08', 700n)], statement, rules({ groupSize: 1 }))).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
  });

  it('matches each of several amounts that have one candidate each', () => {
    const books = [b('1', '2026-11-02', 100n), b('2', '2026-11-02', 200n), b('3', '2026-11-02', 300n), b('4', '2026-11-02', 300n)];
    const statement = [s('7', '2026-11-03', 300n), s('8', '2026-11-03', 200n), s('9', '2026-11-03', 100n)];
    expect(matchEntries(books, statement, rules({ groupSize: 1 }))).toEqual([
      { rule: 'amount_date', books: ['1'], statement: ['9'] },
      { rule: 'amount_date', books: ['2'], statement: ['8'] },
    ]);
  });

  it('with a tolerance, counts amounts that close as equal, and two of them as two candidates', () => {
    const books = [b('1', '2026-11-02', 1_000n)];
    expect(matchEntries(books, [s('9', '2026-11-03', 1_002n)], rules({ amountTolerance: 2n, groupSize: 1 }))).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
    expect(matchEntries(books, [s('9', '2026-11-03', 1_003n)], rules({ amountTolerance: 2n, groupSize: 1 }))).toEqual([]);
    expect(matchEntries(books, [s('8', '2026-11-03', 999n), s('9', '2026-11-03', 1_001n)], rules({ amountTolerance: 1n, groupSize: 1 }))).toEqual([]);
    expect(matchEntries([b('1', '2026-11-02', 999n), b('2', '2026-11-02', 1_001n)], [s('9', '2026-11-03', 1_000n)], rules({ amountTolerance: 1n, groupSize: 1 }))).toEqual([]);
    // Still within the window only, and a candidate outside it does not count.
    expect(matchEntries(books, [s('9', '2026-11-09', 1_001n)], rules({ amountTolerance: 1n, groupSize: 1 }))).toEqual([]);
    expect(matchEntries(books, [s('8', '2026-11-09', 1_001n), s('9', '2026-11-03', 1_001n)], rules({ amountTolerance: 1n, groupSize: 1 }))).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
    expect(matchEntries([b('1', '2026-11-02', 1_000n), b('2', '2026-11-20', 1_000n)], [s('9', '2026-11-03', 1_001n)], rules({ amountTolerance: 1n, groupSize: 1 }))).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
  });

  it('without a tolerance, a candidate outside the window does not count either', () => {
    expect(matchEntries([b('1', '2026-11-02', 1_000n)], [s('8', '2026-11-09', 1_000n), s('9', '2026-11-03', 1_000n)], rules({ groupSize: 1 }))).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
    expect(matchEntries([b('1', '2026-11-02', 1_000n), b('2', '2026-11-20', 1_000n)], [s('9', '2026-11-03', 1_000n)], rules({ groupSize: 1 }))).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
  });

  it('works on what the reference rule left: an entry matched by reference is no candidate', () => {
    const books = [b('1', '2026-11-02', 100n, 'R-1'), b('2', '2026-11-02', 100n)];
    const statement = [s('9', '2026-11-02', 100n, { reference: 'R-1' }), s('8', '2026-11-03', 100n)];
    expect(matchEntries(books, statement)).toEqual([
      { rule: 'reference', books: ['1'], statement: ['9'] },
      { rule: 'amount_date', books: ['2'], statement: ['8'] },
    ]);
  });

  it('keeps a charge apart, but not a credit that mentions a fee', () => {
    expect(matchEntries([b('1', '2026-11-02', -250n)], [s('9', '2026-11-02', -250n, { details: 'Bank fee' })])).toEqual([]);
    expect(matchEntries([b('1', '2026-11-02', 250n)], [s('9', '2026-11-02', 250n, { details: 'fee refund' })])).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
    // The charge is no second candidate either.
    expect(matchEntries([b('1', '2026-11-02', -250n)], [s('8', '2026-11-02', -250n, { details: 'Bank fee' }), s('9', '2026-11-02', -250n)])).toEqual([{ rule: 'amount_date', books: ['1'], statement: ['9'] }]);
  });
});

describe('rule 3, group_reference: lines sharing a reference that sum to one line', () => {
  it('matches one books line with several statement entries, whatever their dates', () => {
    const statement = [s('8', '2026-11-20', -400n, { reference: 'PO-9' }), s('9', '2026-11-25', -500n, { reference: 'PO-9' })];
    expect(matchEntries([b('1', '2026-11-02', -900n, 'PO-9')], statement)).toEqual([{ rule: 'group_reference', books: ['1'], statement: ['8', '9'] }]);
  });

  it('sums at most the group size, and no group with a group size of 1', () => {
    const books = [b('1', '2026-11-02', 100n, 'PO-5'), b('2', '2026-11-02', 150n, 'PO-5'), b('3', '2026-11-02', 250n, 'PO-5')];
    const statement = [s('9', '2026-11-20', 500n, { details: 'Payout PO-5' })];
    expect(matchEntries(books, statement, rules({ groupSize: 4 }))).toEqual([{ rule: 'group_reference', books: ['1', '2', '3'], statement: ['9'] }]);
    expect(matchEntries(books, statement, rules({ groupSize: 3 }))).toEqual([{ rule: 'group_reference', books: ['1', '2', '3'], statement: ['9'] }]);
    expect(matchEntries(books, statement, rules({ groupSize: 2 }))).toEqual([]);
    expect(matchEntries(books.slice(1), [s('9', '2026-11-20', 400n, { details: 'Payout PO-5' })], rules({ groupSize: 2 }))).toEqual([{ rule: 'group_reference', books: ['2', '3'], statement: ['9'] }]);
    expect(matchEntries(books.slice(1), [s('9', '2026-11-20', 400n, { details: 'Payout PO-5' })], rules({ groupSize: 1 }))).toEqual([]);
  });

  it('puts each line in one group: two payouts of one reference take two pairs', () => {
    const books = [b('1', '2026-11-02', 100n, 'R-1'), b('2', '2026-11-02', 100n, 'R-1'), b('3', '2026-11-02', 100n, 'R-1'), b('4', '2026-11-02', 100n, 'R-1')];
    const statement = [s('8', '2026-11-20', 200n, { reference: 'R-1' }), s('9', '2026-11-25', 200n, { reference: 'R-1' })];
    expect(matchEntries(books, statement)).toEqual([
      { rule: 'group_reference', books: ['1', '2'], statement: ['8'] },
      { rule: 'group_reference', books: ['3', '4'], statement: ['9'] },
    ]);
    const reverse = [s('5', '2026-11-20', 100n, { reference: 'R-1' }), s('6', '2026-11-20', 100n, { reference: 'R-1' }), s('7', '2026-11-21', 100n, { reference: 'R-1' }), s('8', '2026-11-21', 100n, { reference: 'R-1' })];
    expect(matchEntries([b('1', '2026-11-02', 200n, 'R-1'), b('2', '2026-11-02', 200n, 'R-1')], reverse)).toEqual([
      { rule: 'group_reference', books: ['1'], statement: ['5', '6'] },
      { rule: 'group_reference', books: ['2'], statement: ['7', '8'] },
    ]);
  });

  it('does not group again a books line grouped with a statement entry', () => {
    // 1 and 2 make 7; 8 and 9 would make 1 too, but 1 is taken.
    const books = [b('1', '2026-11-02', 100n, 'R-1'), b('2', '2026-11-02', 150n, 'R-1'), b('3', '2026-11-02', 300n, 'R-1')];
    const statement = [s('7', '2026-11-20', 250n, { reference: 'R-1' }), s('8', '2026-11-20', 60n, { reference: 'R-1' }), s('9', '2026-11-20', 40n, { reference: 'R-1' })];
    expect(matchEntries(books, statement)).toEqual([{ rule: 'group_reference', books: ['1', '2'], statement: ['7'] }]);
  });

  it('leaves out lines the earlier rules matched', () => {
    const books = [b('1', '2026-11-02', 300n, 'PO-5'), b('2', '2026-11-02', 200n, 'PO-5'), b('3', '2026-11-02', 500n, 'PO-5')];
    expect(matchEntries(books, [s('9', '2026-11-20', 500n, { details: 'PO-5' })])).toEqual([{ rule: 'reference', books: ['3'], statement: ['9'] }]);
  });

  it('never sums a bank charge, even one with the reference', () => {
    const fee = s('9', '2026-11-20', -250n, { details: 'bank charges', reference: 'FEE-1' });
    expect(matchEntries([b('1', '2026-11-02', -100n, 'FEE-1'), b('2', '2026-11-02', -150n, 'FEE-1')], [fee])).toEqual([]);
    expect(matchEntries([b('1', '2026-11-02', -350n, 'FEE-1')], [fee, s('8', '2026-11-20', -100n, { reference: 'FEE-1' })])).toEqual([]);
  });

  it('takes the references in text order when a statement entry could serve two', () => {
    // The statement entry carries ZZZ-2 as its end-to-end id and AAA-1 in its text; AAA-1's books
    // lines, though booked later, come first.
    const statement = [s('9', '2026-11-20', 500n, { reference: 'ZZZ-2', details: 'AAA-1' })];
    const books = [b('1', '2026-11-01', 300n, 'ZZZ-2'), b('2', '2026-11-01', 200n, 'ZZZ-2'), b('3', '2026-11-02', 250n, 'AAA-1'), b('4', '2026-11-02', 250n, 'AAA-1')];
    expect(matchEntries(books, statement)).toEqual([{ rule: 'group_reference', books: ['3', '4'], statement: ['9'] }]);
    const renamed = books.map((x) => ({ ...x, reference: x.reference === 'ZZZ-2' ? 'AAA-0' : x.reference }));
    expect(matchEntries(renamed, [{ ...statement[0]!, reference: 'AAA-0' }])).toEqual([{ rule: 'group_reference', books: ['1', '2'], statement: ['9'] }]);
  });
});

describe('rule 4, group_window: lines within the window that sum to one line', () => {
  it('sums the nearest lines first and gives ids in ascending order', () => {
    const books = [b('1', '2026-11-07', -400n), b('2', '2026-11-07', -500n), b('12', '2026-11-10', -400n), b('3', '2026-11-11', -500n)];
    expect(matchEntries(books, [s('9', '2026-11-10', -900n)])).toEqual([{ rule: 'group_window', books: ['3', '12'], statement: ['9'] }]);
    const statement = [s('1', '2026-11-07', -400n), s('2', '2026-11-07', -500n), s('12', '2026-11-10', -400n), s('3', '2026-11-11', -500n)];
    expect(matchEntries([b('9', '2026-11-10', -900n)], statement)).toEqual([{ rule: 'group_window', books: ['9'], statement: ['3', '12'] }]);
  });

  it('of lines as near, takes the earlier date, then the lower id', () => {
    const books = [b('1', '2026-11-12', -400n), b('2', '2026-11-12', -500n), b('3', '2026-11-08', -500n), b('4', '2026-11-08', -400n)];
    expect(matchEntries(books, [s('9', '2026-11-10', -900n)])).toEqual([{ rule: 'group_window', books: ['3', '4'], statement: ['9'] }]);
  });

  it('sums lines of the same sign only, within the window only', () => {
    expect(matchEntries([b('1', '2026-11-10', -300n), b('2', '2026-11-10', 200n)], [s('9', '2026-11-10', -100n)])).toEqual([]);
    expect(matchEntries([b('1', '2026-11-10', 300n), b('2', '2026-11-10', -200n)], [s('9', '2026-11-10', 100n)])).toEqual([]);
    expect(matchEntries([b('9', '2026-11-10', -100n)], [s('1', '2026-11-10', -300n), s('2', '2026-11-10', 200n)])).toEqual([]);
    expect(matchEntries([b('1', '2026-11-02', -400n), b('2', '2026-11-10', -500n)], [s('9', '2026-11-10', -900n)])).toEqual([]);
    expect(matchEntries([b('9', '2026-11-10', -900n)], [s('1', '2026-11-02', -400n), s('2', '2026-11-10', -500n)])).toEqual([]);
    expect(matchEntries([b('1', '2026-11-07', -400n), b('2', '2026-11-10', -500n)], [s('9', '2026-11-10', -900n)])).toEqual([{ rule: 'group_window', books: ['1', '2'], statement: ['9'] }]);
  });

  it('puts each line in one group', () => {
    const books = [b('1', '2026-11-10', -400n), b('2', '2026-11-10', -500n), b('3', '2026-11-10', -400n), b('4', '2026-11-10', -500n)];
    expect(matchEntries(books, [s('8', '2026-11-10', -900n), s('9', '2026-11-10', -900n)])).toEqual([
      { rule: 'group_window', books: ['1', '2'], statement: ['8'] },
      { rule: 'group_window', books: ['3', '4'], statement: ['9'] },
    ]);
    const statement = [s('1', '2026-11-10', -400n), s('2', '2026-11-10', -500n), s('3', '2026-11-10', -400n), s('4', '2026-11-10', -500n)];
    expect(matchEntries([b('8', '2026-11-10', -900n), b('9', '2026-11-10', -900n)], statement)).toEqual([
      { rule: 'group_window', books: ['8'], statement: ['1', '2'] },
      { rule: 'group_window', books: ['9'], statement: ['3', '4'] },
    ]);
  });

  it('leaves out lines a reference group took, and charges', () => {
    const books = [b('1', '2026-11-10', -400n, 'PO-1'), b('2', '2026-11-10', -500n, 'PO-1'), b('3', '2026-11-10', -100n)];
    const statement = [s('8', '2026-11-25', -900n, { reference: 'PO-1' }), s('9', '2026-11-10', -600n), s('7', '2026-11-10', -500n, { details: 'Spesen' })];
    expect(matchEntries(books, statement)).toEqual([{ rule: 'group_reference', books: ['1', '2'], statement: ['8'] }]);
  });
});

describe('the rules on random entries and rules', () => {
  const day = fc.integer({ min: 1, max: 20 }).map((d) => `2026-11-${String(d).padStart(2, '0')}`);
  const amount = fc.constantFrom(-900n, -500n, -400n, -250n, -100n, 100n, 200n, 300n, 500n, 101n, 99n);
  const ref = fc.option(fc.constantFrom('INV-1', 'inv 1', 'PO-7', 'B-2', ' '), { nil: null });
  const booksArb = fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 60 }).map(String), date: day, amount, reference: ref }), { selector: (x) => x.id, maxLength: 14 });
  const statementArb = fc.uniqueArray(
    fc.record({
      id: fc.integer({ min: 1, max: 60 }).map(String),
      date: day,
      amount,
      reference: ref,
      bankReference: fc.option(fc.constantFrom('B-2', 'PO-7'), { nil: null }),
      details: fc.option(fc.constantFrom('paid INV-1', 'Bank fee', 'PO-7 payout', 'misc'), { nil: null }),
    }),
    { selector: (x) => x.id, maxLength: 14 },
  );
  const rulesArb: fc.Arbitrary<MatchingRules> = fc.record({
    dateWindowDays: fc.integer({ min: 0, max: 4 }),
    amountTolerance: fc.constantFrom(0n, 0n, 1n),
    references: fc.subarray(['end_to_end', 'bank_reference', 'remittance'] as const),
    groupSize: fc.integer({ min: 1, max: 4 }),
  });
  const runs = { numRuns: 300 };
  const close = (x: bigint, y: bigint, tolerance: bigint) => (x > y ? x - y : y - x) <= tolerance;
  const gap = (x: string, y: string) => Math.abs(Date.parse(x) - Date.parse(y)) / 86_400_000;

  it('a reference match shares a reference the rules compare; a group by reference shares one key', () => {
    fc.assert(
      fc.property(booksArb, statementArb, rulesArb, (books, statement, r) => {
        for (const m of matchEntries(books, statement, r)) {
          if (m.rule !== 'reference' && m.rule !== 'group_reference') continue;
          const keys = new Set(m.books.map((id) => normalizeReference(books.find((x) => x.id === id)!.reference!)));
          expect(keys.size).toBe(1);
          const [key] = keys;
          for (const id of m.statement) expect(statementKeys(statement.find((x) => x.id === id)!, r.references)).toContain(key);
        }
      }),
      runs,
    );
  });

  it('a match by amount or window keeps to the window and one sign, and never takes a charge', () => {
    fc.assert(
      fc.property(booksArb, statementArb, rulesArb, (books, statement, r) => {
        for (const m of matchEntries(books, statement, r)) {
          const ss = m.statement.map((id) => statement.find((x) => x.id === id)!);
          if (m.rule !== 'reference') for (const x of ss) expect(isBankCharge(x)).toBe(false);
          if (m.rule === 'amount_date' || m.rule === 'group_window') {
            const bs = m.books.map((id) => books.find((x) => x.id === id)!);
            for (const x of bs) for (const y of ss) {
              expect(gap(x.date, y.date)).toBeLessThanOrEqual(r.dateWindowDays);
              if (m.rule === 'group_window') expect(x.amount < 0n).toBe(y.amount < 0n);
            }
          }
        }
      }),
      runs,
    );
  });

  it('leaves no unmatched pair that shares a reference and an amount', () => {
    fc.assert(
      fc.property(booksArb, statementArb, rulesArb, (books, statement, r) => {
        const matches = matchEntries(books, statement, r);
        const matchedB = new Set(matches.flatMap((m) => m.books));
        const matchedS = new Set(matches.flatMap((m) => m.statement));
        for (const x of books) {
          if (matchedB.has(x.id) || x.reference === null || x.reference.trim() === '') continue;
          for (const y of statement) {
            if (matchedS.has(y.id)) continue;
            const shared = statementKeys(y, r.references).includes(normalizeReference(x.reference));
            expect(shared && close(x.amount, y.amount, r.amountTolerance)).toBe(false);
          }
        }
      }),
      runs,
    );
  });

  it('matches by amount only where each side had that one candidate among the entries left', () => {
    fc.assert(
      fc.property(booksArb, statementArb, rulesArb, (books, statement, r) => {
        const matches = matchEntries(books, statement, r);
        // What the amount rule saw: everything but the reference matches, and no charges.
        const byReference = matches.filter((m) => m.rule === 'reference');
        const leftB = books.filter((x) => !byReference.some((m) => m.books.includes(x.id)));
        const leftS = statement.filter((y) => !isBankCharge(y) && !byReference.some((m) => m.statement.includes(y.id)));
        const fits = (x: BooksLine, y: StatementLine) => close(x.amount, y.amount, r.amountTolerance) && gap(x.date, y.date) <= r.dateWindowDays;
        for (const m of matches.filter((m) => m.rule === 'amount_date')) {
          const x = books.find((e) => e.id === m.books[0])!;
          const y = statement.find((e) => e.id === m.statement[0])!;
          expect(leftS.filter((o) => fits(x, o)).map((o) => o.id)).toEqual([y.id]);
          expect(leftB.filter((o) => fits(o, y)).map((o) => o.id)).toEqual([x.id]);
        }
      }),
      runs,
    );
  });

  it('give the same matches, in the same order, whatever order the entries arrive in', () => {
    fc.assert(
      fc.property(booksArb, statementArb, rulesArb, (books, statement, r) => {
        const once = matchEntries(books, statement, r);
        expect(matchEntries([...books].reverse(), [...statement].reverse(), r)).toEqual(once);
        expect(matchEntries([...books].sort((x, y) => (x.id < y.id ? 1 : -1)), [...statement].sort((x, y) => (x.amount < y.amount ? -1 : 1)), r)).toEqual(once);
        for (const m of once) {
          expect(m.books).toEqual([...m.books].sort((x, y) => Number(x) - Number(y)));
          expect(m.statement).toEqual([...m.statement].sort((x, y) => Number(x) - Number(y)));
        }
      }),
      runs,
    );
  });
});
