import type { AppContext } from '../src/app-context.js';
import { booksSqlSourceOf, pullBooksIfDue } from '../src/books/index.js';
import { listDatesAwaitingBooks } from '../src/db/reconciliation-owed.repository.js';
import { latestClosedDateOf } from '../src/reconciliation/business-dates.js';

/**
 * The worker's books puller: for every account with a books query, asks the merchant's ledger
 * database for the books of the latest closed date and of every date still awaiting its books,
 * once after the cut-off and again every RECON_BOOKS_PULL_EVERY, until they arrive (the date is
 * then no longer awaited) or their deadline passes (the date becomes no_books, and is no longer
 * awaited either). What a pull imports marks its date owed; the caller then reconciles it.
 */
export class BooksPuller {
  // When each account-date was last asked (real time of the injected clock), so polling waits.
  readonly #lastAsked = new Map<string, number>();

  async pullDue(ctx: AppContext, signal?: AbortSignal): Promise<number> {
    const now = ctx.clock.now().getTime();
    const accounts = ctx.config.accounts.filter((a) => booksSqlSourceOf(ctx.config, a.name) !== undefined).map((a) => a.name);
    if (accounts.length === 0) return 0;
    const latest = latestClosedDateOf(ctx);
    const awaited = await listDatesAwaitingBooks(ctx.database.db, accounts);
    const due = new Map<string, { account: string; businessDate: string }>();
    for (const account of accounts) due.set(`${account}|${latest}`, { account, businessDate: latest });
    for (const row of awaited) due.set(`${row.account}|${row.businessDate}`, row);
    let imported = 0;
    for (const [key, request] of due) {
      if (signal?.aborted) break;
      const last = this.#lastAsked.get(key);
      if (last !== undefined && now - last < ctx.config.books.pullEveryMs) continue;
      this.#lastAsked.set(key, now);
      if ((await pullBooksIfDue(ctx, request)) === 'imported') imported++;
    }
    return imported;
  }
}
