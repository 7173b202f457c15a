import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareIds, daysBetween, findSubset, isBankCharge, normalizeReference, remittanceWords, statementKeys, type StatementLine } from '../../src/matching/match-rules.js';

// The building blocks of the matching rules: how references are compared and found, what reads as
// a bank charge, how ids and dates order, and the bounded search for a group's lines.

const statementLine = (extra: Partial<StatementLine>): StatementLine => ({ id: '1', date: '2026-11-02', amount: -100n, reference: null, bankReference: null, details: null, ...extra });

describe('references as compared', () => {
  it('ignore case and every kind of space', () => {
    expect(normalizeReference('inv 1001')).toBe('INV1001');
    expect(normalizeReference(' a\tb\nc  d ')).toBe('ABCD');
    expect(normalizeReference('PO/2026-17')).toBe('PO/2026-17');
  });

  it('are the same text however it is cased or spaced (property)', () => {
    const word = fc.stringMatching(/^[A-Za-z0-9\-/]{1,12}$/);
    fc.assert(
      fc.property(word, word, (a, b) => {
        const key = normalizeReference(`${a}${b}`);
        expect(normalizeReference(`${a.toLowerCase()} ${b.toUpperCase()}`)).toBe(key);
        expect(normalizeReference(` ${a}\t${b} `)).toBe(key);
        expect(normalizeReference(key)).toBe(key);
        expect(key).toHaveLength(a.length + b.length);
      }),
      { numRuns: 50 },
    );
  });
});

describe('the words of a remittance text a books reference can be found as', () => {
  it('are runs of at least four letters and digits, upper-cased, each once, in the order written', () => {
    expect(remittanceWords('Payment INV-1001 thank you')).toEqual(['PAYMENT', 'INV-1001', 'THANK']);
    expect(remittanceWords('ab1 abcd Abcd ABCD x')).toEqual(['ABCD']);
    expect(remittanceWords('Nr. 2026 ok')).toEqual(['2026']);
    expect(remittanceWords('')).toEqual([]);
    expect(remittanceWords('a bc def')).toEqual([]);
  });

  it('keep the joiners - / . _ inside a word, never at its ends', () => {
    expect(remittanceWords('(PO/2026/17), A.B_C-D/E; --WXYZ--.')).toEqual(['PO/2026/17', 'A.B_C-D/E', 'WXYZ']);
    expect(remittanceWords('see INV-1001.')).toEqual(['INV-1001']);
    expect(remittanceWords('ab-- cd')).toEqual([]);
  });

  it('take letters and digits of any script', () => {
    expect(remittanceWords('Gebühr Überweisung 2026')).toEqual(['GEBÜHR', 'ÜBERWEISUNG', '2026']);
    // A dotted capital I stays one letter: the reference is found whole.
    expect(remittanceWords('Fatura İSTANBUL-42')).toEqual(['FATURA', 'İSTANBUL-42']);
    expect(remittanceWords('رقم ١٢٣٤')).toEqual(['١٢٣٤']);
  });
});

describe('the keys a statement entry is found by', () => {
  const line = statementLine({ reference: 'e2e 1', bankReference: 'b-9', details: 'Payment INV-1001' });

  it('are its end-to-end id, bank reference and remittance words, for the kinds the rules use', () => {
    expect(statementKeys(line, ['end_to_end', 'bank_reference', 'remittance'])).toEqual(['E2E1', 'B-9', 'PAYMENT', 'INV-1001']);
    expect(statementKeys(line, ['end_to_end'])).toEqual(['E2E1']);
    expect(statementKeys(line, ['bank_reference'])).toEqual(['B-9']);
    expect(statementKeys(line, ['remittance'])).toEqual(['PAYMENT', 'INV-1001']);
    expect(statementKeys(line, [])).toEqual([]);
  });

  it('leave out references that are missing or blank, and give each key once', () => {
    const all = ['end_to_end', 'bank_reference', 'remittance'] as const;
    expect(statementKeys(statementLine({}), all)).toEqual([]);
    expect(statementKeys(statementLine({ reference: '  ', bankReference: ' \t', details: '  ' }), all)).toEqual([]);
    expect(statementKeys(statementLine({ reference: 'INV-1001', bankReference: 'inv-1001', details: 'INV-1001 paid' }), all)).toEqual(['INV-1001', 'PAID']);
  });
});

describe('a bank charge', () => {
  it('is a debit whose text or reference reads as a fee or charge', () => {
    expect(isBankCharge(statementLine({ amount: -250n, details: 'Account maintenance fee' }))).toBe(true);
    expect(isBankCharge(statementLine({ amount: -250n, details: 'Kontoführung' }))).toBe(true);
    expect(isBankCharge(statementLine({ amount: -250n, details: 'Spesen', reference: null }))).toBe(true);
    expect(isBankCharge(statementLine({ amount: -250n, details: null, reference: 'CHARGES-11' }))).toBe(true);
    // The text and the reference are separate words.
    expect(isBankCharge(statementLine({ amount: -250n, details: 'Monthly', reference: 'Fees' }))).toBe(true);
  });

  it('is never a credit, a zero amount, or a debit that reads as something else', () => {
    expect(isBankCharge(statementLine({ amount: 250n, details: 'fee refund' }))).toBe(false);
    expect(isBankCharge(statementLine({ amount: 0n, details: 'fee' }))).toBe(false);
    expect(isBankCharge(statementLine({ amount: -250n, details: 'Payment to supplier', reference: 'INV-7' }))).toBe(false);
    expect(isBankCharge(statementLine({ amount: -250n, details: 'feedback survey' }))).toBe(false);
    expect(isBankCharge(statementLine({ amount: -250n }))).toBe(false);
  });
});

describe('dates and ids', () => {
  it('count whole days between dates, negative backwards, across months and years', () => {
    expect(daysBetween('2026-11-02', '2026-11-05')).toBe(3);
    expect(daysBetween('2026-11-05', '2026-11-02')).toBe(-3);
    expect(daysBetween('2026-11-05', '2026-11-05')).toBe(0);
    expect(daysBetween('2028-02-27', '2028-03-01')).toBe(3);
    expect(daysBetween('2026-12-30', '2027-01-02')).toBe(3);
  });

  it('order ids as numbers when both are digits, else as text; an id equals only itself', () => {
    expect(compareIds('2', '10')).toBeLessThan(0);
    expect(compareIds('10', '9')).toBeGreaterThan(0);
    expect(compareIds('12', '13')).toBeLessThan(0);
    expect(compareIds('5', '5')).toBe(0);
    expect(compareIds('abc', 'abc')).toBe(0);
    expect(compareIds('b', '10')).toBeGreaterThan(0); // text: "b" after "1"
    expect(compareIds('a9', 'a10')).toBeGreaterThan(0); // text
    expect(compareIds('1a00', '9')).toBeLessThan(0); // text: not all digits
    expect(compareIds('9a', '100')).toBeGreaterThan(0); // text: not all digits
  });

  it('order digit ids by their value, any ids as a total order (property)', () => {
    const digits = fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String);
    fc.assert(
      fc.property(digits, digits, (a, b) => {
        expect(Math.sign(compareIds(a, b))).toBe(BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);
      }),
    );
    const id = fc.oneof(digits, fc.stringMatching(/^[a-z0-9]{1,6}$/));
    fc.assert(
      fc.property(id, id, (a, b) => {
        // Antisymmetric: opposite signs, or both zero (a sum, so 0 and -0 are one answer).
        expect(Math.sign(compareIds(a, b)) + Math.sign(compareIds(b, a))).toBe(0);
        expect(compareIds(a, b) === 0).toBe(a === b);
      }),
    );
  });
});

describe('the search for a group of lines that sum to an amount', () => {
  const lines = (...amounts: bigint[]) => amounts.map((amount, i) => ({ id: i, amount }));

  it('gives the first lines, in the order given, of two or more that sum to the target', () => {
    expect(findSubset(lines(300n, 200n), 500n, 5, 0n)?.map((x) => x.id)).toEqual([0, 1]);
    expect(findSubset(lines(100n, 400n, 200n, 300n), 500n, 5, 0n)?.map((x) => x.id)).toEqual([0, 1]);
    expect(findSubset(lines(100n, 250n, 200n, 300n), 500n, 5, 0n)?.map((x) => x.id)).toEqual([2, 3]);
    expect(findSubset(lines(-400n, -500n), -900n, 2, 0n)?.map((x) => x.id)).toEqual([0, 1]);
  });

  it('never gives a single line, even one equal to the target', () => {
    expect(findSubset(lines(500n, 1n), 500n, 5, 0n)).toBeUndefined();
    expect(findSubset(lines(500n), 500n, 5, 0n)).toBeUndefined();
    expect(findSubset([], 0n, 5, 0n)).toBeUndefined();
  });

  it('sums at most the group size', () => {
    expect(findSubset(lines(100n, 200n, 300n), 600n, 2, 0n)).toBeUndefined();
    expect(findSubset(lines(100n, 200n, 300n), 600n, 3, 0n)?.map((x) => x.id)).toEqual([0, 1, 2]);
    expect(findSubset(lines(100n, 200n), 300n, 1, 0n)).toBeUndefined();
  });

  it('counts a sum within the tolerance, either side, as equal', () => {
    expect(findSubset(lines(100n, 199n), 300n, 5, 1n)?.map((x) => x.id)).toEqual([0, 1]);
    expect(findSubset(lines(100n, 201n), 300n, 5, 1n)?.map((x) => x.id)).toEqual([0, 1]);
    expect(findSubset(lines(100n, 199n), 300n, 5, 0n)).toBeUndefined();
    expect(findSubset(lines(100n, 198n), 300n, 5, 1n)).toBeUndefined();
  });

  it('looks at the first 16 lines only', () => {
    const far = [...Array.from({ length: 16 }, () => 1_000n), 1n, 2n];
    expect(findSubset(lines(...far), 3n, 5, 0n)).toBeUndefined();
    expect(findSubset(lines(1n, 2n, ...far.slice(2)), 3n, 5, 0n)?.map((x) => x.id)).toEqual([0, 1]);
  });

  it('gives up after a bounded number of steps', () => {
    // The only pair summing to 1,001 is the first line with the last; a depth-first search
    // reaches it after every other subset of the first line's: 2^11 of them it finds, 2^15 not.
    const near = [...Array.from({ length: 12 }, () => 1_000n), 1n];
    expect(findSubset(lines(...near), 1_001n, 16, 0n)?.map((x) => x.id)).toEqual([0, 12]);
    const far = [...Array.from({ length: 15 }, () => 1_000n), 1n];
    expect(findSubset(lines(...far), 1_001n, 16, 0n)).toBeUndefined();
  });

  it('finds a group whenever one exists among a few lines, and only a true one (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.bigInt({ min: -60n, max: 60n }), { maxLength: 9 }),
        fc.bigInt({ min: -150n, max: 150n }),
        fc.integer({ min: 1, max: 5 }),
        fc.bigInt({ min: 0n, max: 2n }),
        (amounts, target, size, tolerance) => {
          const list = lines(...amounts);
          const within = (sum: bigint) => (sum > target ? sum - target : target - sum) <= tolerance;
          let exists = false;
          for (let mask = 0; mask < 1 << list.length; mask++) {
            const picked = list.filter((_, i) => (mask >> i) & 1);
            if (picked.length >= 2 && picked.length <= size && within(picked.reduce((t, x) => t + x.amount, 0n))) exists = true;
          }
          const found = findSubset(list, target, size, tolerance);
          expect(found !== undefined).toBe(exists);
          if (found !== undefined) {
            expect(found.length).toBeGreaterThanOrEqual(2);
            expect(found.length).toBeLessThanOrEqual(size);
            expect(within(found.reduce((t, x) => t + x.amount, 0n))).toBe(true);
            // Distinct lines, in the order given.
            const ids = found.map((x) => x.id);
            expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
