/**
 * Matching books entries with bank statement entries, as pure functions: the same entries and
 * rules always give the same matches, whatever order they arrive in. The rules, in order:
 *   1. `reference`: a books reference equal to the statement entry's end-to-end id or bank
 *      reference, or found as a word in its remittance text, with an equal amount (within the
 *      tolerance);
 *   2. `amount_date`: an equal amount within the date window, where each side has one candidate only;
 *   3. `group_reference`: one statement entry and several books entries (or the reverse) that share
 *      a reference and sum to its amount (at most `groupSize` lines);
 *   4. `group_window`: the same within the date window, without a reference.
 * A bank charge (a statement entry that reads as a fee or charge and carries no reference the books
 * know) is kept apart: never matched by amount or summed into a group.
 */

export type ReferenceKind = 'end_to_end' | 'bank_reference' | 'remittance';
export const REFERENCE_KINDS: readonly ReferenceKind[] = ['end_to_end', 'bank_reference', 'remittance'];

export interface MatchingRules {
  /** Days either side of an entry's date within which an amount rule looks for its other side. */
  dateWindowDays: number;
  /** The largest difference, in minor units, still counted an equal amount. */
  amountTolerance: bigint;
  /** Which of the statement's references a books reference is compared with. */
  references: readonly ReferenceKind[];
  /** The most lines a one-to-many or many-to-one match sums (1: no groups). */
  groupSize: number;
}

export const DEFAULT_MATCHING_RULES: MatchingRules = { dateWindowDays: 3, amountTolerance: 0n, references: REFERENCE_KINDS, groupSize: 5 };

export interface BooksLine {
  id: string;
  /** YYYY-MM-DD: the booking date. */
  date: string;
  /** Signed minor units. */
  amount: bigint;
  reference: string | null;
}

export interface StatementLine {
  id: string;
  /** YYYY-MM-DD: the booking date (else the value date). */
  date: string;
  /** Signed minor units: a credit positive, a debit negative. */
  amount: bigint;
  /** The end-to-end id (or the entry's own reference). */
  reference: string | null;
  bankReference: string | null;
  /** The remittance text. */
  details: string | null;
}

export type RuleName = 'reference' | 'amount_date' | 'group_reference' | 'group_window';

export interface ProposedMatch {
  rule: RuleName;
  /** Books entry ids, in ascending order. */
  books: string[];
  /** Statement entry ids, in ascending order. */
  statement: string[];
}

// Words that mark a bank's own charge in the remittance text of the banks' exports.
const CHARGE_WORDS = /\b(charges?|fees?|gebühr(en)?|entgelt|spesen|frais|commissions?|kontoführung|account maintenance)\b/iu;

/** Whether a statement entry is a bank charge: a debit whose text reads as a fee or charge. */
export function isBankCharge(line: StatementLine): boolean {
  // join() reads a missing text or reference as empty.
  return line.amount < 0n && CHARGE_WORDS.test([line.details, line.reference].join(' '));
}

/** A reference as compared: case and spaces do not count. */
export function normalizeReference(text: string): string {
  return text.replace(/\s/g, '').toUpperCase();
}

/** The words of a remittance text a books reference may be found as (letters and digits, at least 4). */
export function remittanceWords(details: string): string[] {
  return [...new Set((details.toUpperCase().match(/[\p{L}\p{N}][\p{L}\p{N}\-/._]{2,}[\p{L}\p{N}]/gu) ?? []).map(normalizeReference))];
}

/** The keys a statement entry can be found by, for the reference kinds the rules use. */
export function statementKeys(line: StatementLine, kinds: readonly ReferenceKind[]): string[] {
  const keys = new Set<string>();
  if (kinds.includes('end_to_end') && line.reference !== null && line.reference.trim() !== '') keys.add(normalizeReference(line.reference));
  if (kinds.includes('bank_reference') && line.bankReference !== null && line.bankReference.trim() !== '') keys.add(normalizeReference(line.bankReference));
  if (kinds.includes('remittance') && line.details !== null) for (const w of remittanceWords(line.details)) keys.add(w);
  return [...keys];
}

/** Whole days from one YYYY-MM-DD to another. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

function abs(x: bigint): bigint {
  return x < 0n ? -x : x;
}

function byDateThenId<T extends { date: string; id: string }>(a: T, b: T): number {
  return a.date < b.date ? -1 : a.date > b.date ? 1 : compareIds(a.id, b.id);
}

/** Ids compare as numbers when both are digits (database ids), else as text. */
export function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b) && a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedIds(ids: string[]): string[] {
  return [...ids].sort(compareIds);
}

/**
 * The matches the rules make between unmatched books and statement entries of one account and
 * currency. Each entry is in at most one match. Deterministic: the result depends only on the
 * entries (as a set) and the rules.
 */
export function matchEntries(booksIn: readonly BooksLine[], statementIn: readonly StatementLine[], rules: MatchingRules = DEFAULT_MATCHING_RULES): ProposedMatch[] {
  const books = [...booksIn].sort(byDateThenId);
  const statement = [...statementIn].sort(byDateThenId);
  const usedBooks = new Set<string>();
  const usedStatement = new Set<string>();
  const matches: ProposedMatch[] = [];
  const tolerance = rules.amountTolerance;
  const within = (a: string, b: string) => Math.abs(daysBetween(a, b)) <= rules.dateWindowDays;
  const take = (rule: RuleName, b: BooksLine[], s: StatementLine[]) => {
    for (const x of b) usedBooks.add(x.id);
    for (const x of s) usedStatement.add(x.id);
    matches.push({ rule, books: sortedIds(b.map((x) => x.id)), statement: sortedIds(s.map((x) => x.id)) });
  };

  // 1. Reference and equal amount: the nearest date wins, then the earlier, then the lower id.
  // Only the keys a books reference can look up are kept: every word of every remittance text
  // would be an index of millions of keys for a month of statements, held for nothing.
  const booksKeys = new Set(books.flatMap((b) => (b.reference === null ? [] : [normalizeReference(b.reference)])));
  const byKey = new Map<string, StatementLine[]>();
  for (const s of statement) {
    for (const key of statementKeys(s, rules.references)) {
      if (!booksKeys.has(key)) continue;
      const list = byKey.get(key);
      if (list === undefined) byKey.set(key, [s]);
      else list.push(s);
    }
  }
  // A blank books reference normalizes to '', which is no statement entry's key.
  for (const b of books) {
    if (b.reference === null) continue;
    const candidates = (byKey.get(normalizeReference(b.reference)) ?? []).filter((s) => !usedStatement.has(s.id) && abs(s.amount - b.amount) <= tolerance);
    if (candidates.length === 0) continue;
    // The candidates come in date-then-id order: of two as near, the one kept is the earlier.
    const best = candidates.reduce((x, y) => (Math.abs(daysBetween(b.date, y.date)) < Math.abs(daysBetween(b.date, x.date)) ? y : x));
    take('reference', [b], [best]);
  }

  // Charges stay apart from the amount rules: a fee of 2.50 is not a payment of 2.50.
  const charge = new Set(statement.filter(isBankCharge).map((s) => s.id));
  const openBooks = () => books.filter((b) => !usedBooks.has(b.id));
  const openStatement = () => statement.filter((s) => !usedStatement.has(s.id) && !charge.has(s.id));

  // 2. Equal amount within the window, one candidate on each side.
  {
    const b = openBooks();
    const s = openStatement();
    const candidatesOf = <T extends { date: string; amount: bigint }>(x: { date: string; amount: bigint }, others: readonly T[]): T[] => others.filter((o) => abs(o.amount - x.amount) <= tolerance && within(x.date, o.date));
    // Indexed by amount when the tolerance is zero (the common case): linear, not quadratic.
    const exact = tolerance === 0n;
    const index = <T extends { amount: bigint }>(list: T[]) => {
      const map = new Map<bigint, T[]>();
      for (const x of list) {
        const l = map.get(x.amount);
        if (l === undefined) map.set(x.amount, [x]);
        else l.push(x);
      }
      return map;
    };
    const sByAmount = index(s);
    const bByAmount = index(b);
    for (const x of b) {
      const cs = exact ? (sByAmount.get(x.amount) ?? []).filter((o) => within(x.date, o.date)) : candidatesOf(x, s);
      if (cs.length !== 1) continue;
      const other = cs[0]!;
      const back = exact ? (bByAmount.get(other.amount) ?? []).filter((o) => within(other.date, o.date)) : candidatesOf(other, b);
      if (back.length !== 1) continue;
      take('amount_date', [x], [other]);
    }
  }

  if (rules.groupSize >= 2) {
    // 3. Groups by a shared reference.
    const bByRef = new Map<string, BooksLine[]>();
    for (const b of openBooks()) {
      if (b.reference === null) continue;
      const key = normalizeReference(b.reference);
      const l = bByRef.get(key);
      if (l === undefined) bByRef.set(key, [b]);
      else l.push(b);
    }
    // The references in text order (code units, as sort() compares strings).
    for (const key of [...bByRef.keys()].sort()) {
      const group = bByRef.get(key)!;
      // A books line is in one reference's group only: none of these is matched yet.
      const ss = (byKey.get(key) ?? []).filter((s) => !usedStatement.has(s.id) && !charge.has(s.id));
      // One statement entry for several books lines.
      for (const s of ss) {
        const subset = findSubset(group.filter((b) => !usedBooks.has(b.id)), s.amount, rules.groupSize, tolerance);
        if (subset !== undefined) take('group_reference', subset, [s]);
      }
      // One books line for several statement entries.
      for (const b of group.filter((x) => !usedBooks.has(x.id))) {
        const subset = findSubset(ss.filter((s) => !usedStatement.has(s.id)), b.amount, rules.groupSize, tolerance);
        if (subset !== undefined) take('group_reference', [b], subset);
      }
    }

    // 4. Groups within the window: one statement entry for several books lines, then the reverse.
    const nearestFirst = (date: string) => (x: { date: string; id: string }, y: { date: string; id: string }) => Math.abs(daysBetween(date, x.date)) - Math.abs(daysBetween(date, y.date)) || byDateThenId(x, y);
    const booksLeft = openBooks();
    for (const s of openStatement()) {
      const near = booksLeft.filter((b) => !usedBooks.has(b.id) && within(s.date, b.date) && sameSign(b.amount, s.amount)).sort(nearestFirst(s.date));
      const subset = findSubset(near, s.amount, rules.groupSize, tolerance);
      if (subset !== undefined) take('group_window', subset, [s]);
    }
    const statementLeft = openStatement();
    for (const b of openBooks()) {
      const near = statementLeft.filter((s) => !usedStatement.has(s.id) && within(b.date, s.date) && sameSign(b.amount, s.amount)).sort(nearestFirst(b.date));
      const subset = findSubset(near, b.amount, rules.groupSize, tolerance);
      if (subset !== undefined) take('group_window', [b], subset);
    }
  }
  return matches;
}

function sameSign(a: bigint, b: bigint): boolean {
  return (a < 0n) === (b < 0n);
}

// A subset search looks at most at this many candidates: the window's lines, nearest first.
const SUBSET_CANDIDATES = 16;
// And gives up after this many steps: a group rule never costs more than a bounded search.
const SUBSET_STEPS = 20_000;

/**
 * The first subset (in the candidates' order) of 2..maxSize lines (never a single line) whose amounts sum to `target`
 * within `tolerance`; undefined when there is none (or the bounded search finds none).
 */
export function findSubset<T extends { amount: bigint }>(candidates: readonly T[], target: bigint, maxSize: number, tolerance: bigint): T[] | undefined {
  const list = candidates.slice(0, SUBSET_CANDIDATES);
  let steps = 0;
  const chosen: T[] = [];
  const search = (start: number, sum: bigint): T[] | undefined => {
    if (chosen.length >= 2 && abs(sum - target) <= tolerance) return [...chosen];
    if (chosen.length >= maxSize) return undefined;
    for (let i = start; i < list.length; i++) {
      if (++steps > SUBSET_STEPS) return undefined;
      chosen.push(list[i]!);
      const found = search(i + 1, sum + list[i]!.amount);
      chosen.pop();
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return search(0, 0n);
}
