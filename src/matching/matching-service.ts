import { sql, type Kysely, type Transaction } from 'kysely';
import { bankAccountNamed, type Config } from '../config/index.js';
import type { Database } from '../db/database.types.js';
import { insertMatches, listUnmatchedBooksEntries, listUnmatchedStatementEntries, undoMatches } from '../db/entry-match.repository.js';
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
    const found: RuleMatch[] = [];
    for (const currency of currencies) {
      // One currency (the usual bank account) needs no copies of its lists.
      const b = currencies.length === 1 ? books : books.filter((x) => x.currency === currency);
      const s = statement.filter((x) => x.currency === currency);
      if (s.length === 0) continue;
      const bById = new Map(b.map((x) => [x.id, x]));
      const sById = new Map(s.map((x) => [x.id, x]));
      for (const m of matchEntries(b, s, rules)) {
        // The entries as read, not copies: a month's first run holds a hundred thousand of them.
        const bs = m.books.map((id) => bById.get(id)!);
        const ss = m.statement.map((id) => sById.get(id)!);
        let businessDate = bs[0]?.date ?? ss[0]!.date;
        for (const x of bs) if (x.date > businessDate) businessDate = x.date;
        for (const x of ss) if (x.date > businessDate) businessDate = x.date;
        if (how.date !== undefined && businessDate !== how.date) continue;
        found.push({ id: null, account, currency, businessDate, rule: m.rule, books: bs, statement: ss });
      }
    }
    if (how.dryRun !== true && found.length > 0) await storeMatches(db, found, how.now);
    for (const f of found) made.push(f);
  }
  return made;
}

// Matches are recorded a batch at a time, so that their rows for the database are made for one batch, not for the month.
const STORE_BATCH = 2_000;

/** Records the rules' matches and sets their ids. */
async function storeMatches(db: Kysely<Database> | Transaction<Database>, found: RuleMatch[], now: Date): Promise<void> {
  for (let start = 0; start < found.length; start += STORE_BATCH) {
    const batch = found.slice(start, start + STORE_BATCH);
    const ids = await insertMatches(
      db,
      batch.map((f) => ({ account: f.account, currency: f.currency, businessDate: f.businessDate, rule: f.rule, matchedBy: MATCHED_BY_RULES, note: null, books: f.books.map((e) => e.id), statement: f.statement.map((e) => e.id) })),
      now,
    );
    batch.forEach((f, i) => (f.id = ids[i]!));
  }
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
