import { sql, type Kysely, type Transaction } from 'kysely';
import { bankAccountNamed, type Config } from '../config/index.js';
import type { Database } from '../db/database.types.js';
import { insertMatches, listUnmatchedBooksEntries, listUnmatchedStatementEntries, undoMatches, type NewMatch } from '../db/entry-match.repository.js';
import { DEFAULT_MATCHING_RULES, matchEntries, type MatchingRules, type RuleName } from './match-rules.js';

/** Who a rule's match is recorded as made by. */
export const MATCHED_BY_RULES = 'wallet-recon';

/** The matching rules of a bank account: its `matching:` settings over the defaults. */
export function matchingRulesFor(config: Pick<Config, 'bankAccounts'>, account: string): MatchingRules {
  const m = bankAccountNamed(config, account)?.matching ?? {};
  return {
    dateWindowDays: m.dateWindowDays ?? DEFAULT_MATCHING_RULES.dateWindowDays,
    amountTolerance: m.amountTolerance ?? DEFAULT_MATCHING_RULES.amountTolerance,
    references: m.references ?? DEFAULT_MATCHING_RULES.references,
    groupSize: m.groupSize ?? DEFAULT_MATCHING_RULES.groupSize,
  };
}

/** A match the rules made (or would make), with what it holds. */
export interface RuleMatch {
  id: string | null;
  account: string;
  currency: string;
  businessDate: string;
  rule: RuleName;
  books: Array<{ id: string; date: string; amount: bigint; reference: string | null }>;
  statement: Array<{ id: string; date: string; amount: bigint; reference: string | null }>;
}

/**
 * Runs the rules over the unmatched entries of bank accounts and records what they match, in the
 * caller's transaction (the import or reconcile that changed either side), or with `dryRun` only
 * says what they would match. Only bank accounts have statement entries: other accounts are skipped.
 */
export async function runMatching(
  db: Kysely<Database> | Transaction<Database>,
  config: Pick<Config, 'bankAccounts'>,
  accounts: readonly string[],
  how: { now: Date; dryRun?: boolean; date?: string },
): Promise<RuleMatch[]> {
  const made: RuleMatch[] = [];
  for (const account of [...new Set(accounts)].sort()) {
    if (bankAccountNamed(config, account) === undefined) continue;
    const rules = matchingRulesFor(config, account);
    // With a date, the entries near it: what a match of that date could hold.
    const range = how.date === undefined ? {} : { from: shiftDate(how.date, -rules.dateWindowDays - 31), to: how.date };
    // The books first: an account without books entries has nothing to match, and its statement
    // entries (a million, for a large statement imported) are then not read at all.
    const books = await listUnmatchedBooksEntries(db, account, range);
    if (books.length === 0) continue;
    const statement = await listUnmatchedStatementEntries(db, account, range);
    if (statement.length === 0) continue;
    const currencies = [...new Set(books.map((b) => b.currency))].sort();
    const toStore: NewMatch[] = [];
    const found: RuleMatch[] = [];
    for (const currency of currencies) {
      const b = books.filter((x) => x.currency === currency);
      const s = statement.filter((x) => x.currency === currency);
      if (s.length === 0) continue;
      const bById = new Map(b.map((x) => [x.id, x]));
      const sById = new Map(s.map((x) => [x.id, x]));
      for (const m of matchEntries(b, s, rules)) {
        const bs = m.books.map((id) => bById.get(id)!);
        const ss = m.statement.map((id) => sById.get(id)!);
        const businessDate = [...bs, ...ss].map((x) => x.date).reduce((x, y) => (y > x ? y : x));
        if (how.date !== undefined && businessDate !== how.date) continue;
        found.push({
          id: null,
          account,
          currency,
          businessDate,
          rule: m.rule,
          books: bs.map(({ id, date, amount, reference }) => ({ id, date, amount, reference })),
          statement: ss.map(({ id, date, amount, reference }) => ({ id, date, amount, reference })),
        });
        toStore.push({ account, currency, businessDate, rule: m.rule, matchedBy: MATCHED_BY_RULES, note: null, books: m.books, statement: m.statement });
      }
    }
    if (how.dryRun !== true && toStore.length > 0) {
      const ids = await insertMatches(db, toStore, how.now);
      found.forEach((f, i) => (f.id = ids[i]!));
    }
    made.push(...found);
  }
  return made;
}

function shiftDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** Undoes the active matches holding entries of a statement about to be replaced. */
export async function undoMatchesOfStatement(db: Kysely<Database> | Transaction<Database>, statementPk: number, now: Date): Promise<string[]> {
  const held = await sql<{ id: string }>`
    select distinct m.match_id::text as id from entry_match_members m join bank_statement_entries e on e.id = m.statement_entry_id
    join entry_matches x on x.id = m.match_id where e.statement_pk = ${statementPk} and x.state = 'active'`.execute(db);
  return undoMatches(
    db,
    held.rows.map((r) => r.id),
    MATCHED_BY_RULES,
    now,
    'statement replaced (statements import --replace)',
  );
}
