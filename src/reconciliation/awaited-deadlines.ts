import type { AppContext } from '../app-context.js';
import { businessCalendarOf, deadlinesOf } from '../config/index.js';

// A date's books and a bank date's statement are awaited until a deadline after its cut-off, on
// the context's clock; after it they are missed. Apart from the reconcile that uses them, so that
// the sign-off checks and the mutation tests reach them without the reconcile's database modules.

/**
 * Whether a date without books still waits for them: until RECON_BOOKS_DEADLINE after its cut-off
 * (on the context's clock), then its books are missed.
 */
export function booksAwaitedOn(ctx: Pick<AppContext, 'clock' | 'config'>, businessDate: string): boolean {
  return ctx.clock.now().getTime() < businessCalendarOf(ctx.config).cutoffOf(businessDate).getTime() + deadlinesOf(ctx.config, businessDate).booksDeadlineMs;
}

/**
 * Whether a closed date without statement still waits for it: until RECON_STATEMENT_DEADLINE
 * after its cut-off (on the context's clock); after that, it has none.
 */
export function statementAwaitedOn(ctx: Pick<AppContext, 'clock' | 'config'>, businessDate: string): boolean {
  return ctx.clock.now().getTime() < statementDueAt(ctx, businessDate).getTime();
}

/** When a bank date's statement is due: RECON_STATEMENT_DEADLINE after its cut-off. */
export function statementDueAt(ctx: Pick<AppContext, 'config'>, businessDate: string): Date {
  return new Date(businessCalendarOf(ctx.config).cutoffOf(businessDate).getTime() + deadlinesOf(ctx.config, businessDate).statementDeadlineMs);
}
