import { sql, type Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import { insertAudit } from '../db/console.repository.js';
import type { Database } from '../db/database.types.js';
import { findBooksEntries, findStatementEntries, insertMatches, listMatches, undoMatches, type MatchListing } from '../db/entry-match.repository.js';
import { UsageError } from '../errors.js';
import { formatAmount } from '../money/format-amount.js';
import { reconcileOwedDates } from '../reconciliation/reconciliation-service.js';
import { findLocks, lockedDateError } from '../signoff/date-lock.js';
import { matchingRulesFor } from './matching-service.js';

export interface ManualMatchRequest {
  books: readonly string[];
  statement: readonly string[];
  note: string | undefined;
  actor: string;
  /** Where the person acted from (the console's client address); null from the command line. */
  address?: string | null;
}

function requireNote(note: string | undefined, command: string): string {
  if (note === undefined || note.trim() === '') throw new UsageError(`${command} needs --note TEXT: say why, for the record.`);
  return note.trim();
}

function checkIds(ids: readonly string[], option: string): void {
  for (const id of ids) if (!/^[1-9]\d{0,17}$/.test(id)) throw new UsageError(`${option} ${JSON.stringify(id)} is not an entry id (the ids "match list" and "items list" give).`);
}

async function owe(trx: Transaction<Database>, account: string, date: string, reason: string): Promise<void> {
  await sql`select owe_reconciliation(${account}, ${date}::date, ${reason})`.execute(trx);
}

/**
 * Matches entries by hand (`match add`): the entries must exist, be of one account and currency,
 * be unmatched, and their amounts must agree (within the account's tolerance). The match, the
 * audit record and the date owed again are written in one transaction; the date is reconciled after.
 */
export async function addManualMatch(ctx: AppContext, request: ManualMatchRequest): Promise<MatchListing> {
  const note = requireNote(request.note, 'match add');
  checkIds(request.books, '--books');
  checkIds(request.statement, '--statement');
  if (request.books.length === 0 || request.statement.length === 0) throw new UsageError('match add needs at least one --books ID and one --statement ID.');
  const now = ctx.clock.now();
  const match = await ctx.database.db.transaction().execute(async (trx) => {
    const books = await findBooksEntries(trx, request.books);
    const statement = await findStatementEntries(trx, request.statement);
    const missing = [...request.books.filter((id) => !books.some((b) => b.id === id)).map((id) => `books entry ${id}`), ...request.statement.filter((id) => !statement.some((s) => s.id === id)).map((id) => `statement entry ${id}`)];
    if (missing.length > 0) throw new UsageError(`There is no ${missing.join(', no ')}.`);
    const all = [...books, ...statement];
    const accounts = [...new Set(all.map((e) => e.account))];
    const currencies = [...new Set(all.map((e) => e.currency))];
    if (accounts.length > 1 || currencies.length > 1) throw new UsageError(`The entries belong to ${accounts.join(', ')} in ${currencies.join(', ')}: a match is of one account and currency.`);
    const taken = [...books.filter((b) => b.matched).map((b) => `books entry ${b.id}`), ...statement.filter((s) => s.matched).map((s) => `statement entry ${s.id}`)];
    if (taken.length > 0) throw new UsageError(`${taken.join(', ')} ${taken.length === 1 ? 'is' : 'are'} already matched: undo that match first (match undo ID --note TEXT).`);
    const account = accounts[0]!;
    const currency = currencies[0]!;
    const sumBooks = books.reduce((t, b) => t + b.amount, 0n);
    const sumStatement = statement.reduce((t, s) => t + s.amount, 0n);
    const gap = sumBooks - sumStatement;
    const tolerance = matchingRulesFor(ctx.config, account).amountTolerance;
    if ((gap < 0n ? -gap : gap) > tolerance) {
      throw new UsageError(`The books entries sum to ${formatAmount(sumBooks, currency)}, the statement entries to ${formatAmount(sumStatement, currency)}: a match explains no difference. Match entries whose amounts agree, or record the difference as an item.`);
    }
    const businessDate = all.map((e) => e.date).reduce((x, y) => (y > x ? y : x));
    for (const lock of await findLocks(trx, [{ account, businessDate }])) throw lockedDateError(lock, 'a match would change it', ctx.config.timezone);
    const [id] = await insertMatches(trx, [{ account, currency, businessDate, rule: 'manual', matchedBy: request.actor, note, books: request.books, statement: request.statement }], now);
    await owe(trx, account, businessDate, 'entries matched by hand');
    await insertAudit(trx, { at: now, userName: request.actor, address: request.address ?? null, action: 'match.add', target: `${account} ${businessDate}`, outcome: 'ok', detail: { match: id, books: request.books, statement: request.statement, note } });
    return (await listMatches(trx, { ids: [id!], all: true }))[0]!;
  });
  await reconcileOwedDates(ctx, [match.account], { only: [{ account: match.account, businessDate: match.businessDate }] });
  return match;
}

/** Undoes a match (`match undo`): it stays on record with state `undone`, who undid it, when and why. */
export async function undoMatch(ctx: AppContext, request: { id: string; note: string | undefined; actor: string; address?: string | null }): Promise<MatchListing> {
  const note = requireNote(request.note, 'match undo');
  checkIds([request.id], 'match undo');
  const now = ctx.clock.now();
  const match = await ctx.database.db.transaction().execute(async (trx) => {
    const [found] = await listMatches(trx, { ids: [request.id], all: true });
    if (found === undefined) throw new UsageError(`There is no match ${request.id}. "wallet-recon match list --date D --all" lists them.`);
    if (found.state === 'undone') throw new UsageError(`Match ${request.id} was already undone by ${found.undoneBy} (${found.undoNote}).`);
    for (const lock of await findLocks(trx, [{ account: found.account, businessDate: found.businessDate }])) throw lockedDateError(lock, 'undoing the match would change it', ctx.config.timezone);
    await undoMatches(trx, [request.id], request.actor, now, note);
    await owe(trx, found.account, found.businessDate, 'match undone');
    await insertAudit(trx, { at: now, userName: request.actor, address: request.address ?? null, action: 'match.undo', target: `${found.account} ${found.businessDate}`, outcome: 'ok', detail: { match: request.id, note } });
    return (await listMatches(trx, { ids: [request.id], all: true }))[0]!;
  });
  await reconcileOwedDates(ctx, [match.account], { only: [{ account: match.account, businessDate: match.businessDate }] });
  return match;
}
