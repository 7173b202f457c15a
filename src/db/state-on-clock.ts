import type { ReconciliationStatusView } from './database.types.js';

/**
 * A view row's state on the application's clock: the view decides `no_books` on the database's
 * clock (now()), which a command running on an injected clock must not contradict.
 */
export function stateOnClock(row: Pick<ReconciliationStatusView, 'state' | 'books_deadline_at'>, now: Date): ReconciliationStatusView['state'] {
  if ((row.state !== 'no_books' && row.state !== 'awaiting_books') || row.books_deadline_at === null) return row.state;
  return row.books_deadline_at.getTime() <= now.getTime() ? 'no_books' : 'awaiting_books';
}
