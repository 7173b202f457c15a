import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A piece of work whose announcements are folded into one summary when it ends: a backfill, or an
 * import that brings in several past business dates. Onboarding a month must not page finance
 * once per date and account; the problems are still recorded and every event kept in the outbox.
 */
export interface FoldScope {
  /** Names the summary its rows belong to (`notifications.fold_group`), unique per piece of work. */
  group: string;
  /** What people read: "backfill", "books import", "bank statements import". */
  label: string;
  /** The business dates it covers, as asked for. */
  from: string;
  to: string;
}

/** The event types a scope folds: what one past date says about itself. The rest (a missed capture, a sign-off voided) go as always. */
export const FOLDED_IN_SCOPE: ReadonlySet<string> = new Set(['problem.new', 'problem.changed', 'problem.aging', 'problem.cleared', 'books.missing', 'item.overdue']);

// The scope travels with the async work instead of as a parameter: every path that reconciles
// under it (a date, the owed dates after it, overdue items) folds alike without each of them
// carrying a flag it only passes on.
const storage = new AsyncLocalStorage<FoldScope>();

/** The scope an event of `type` written now is folded into, if any. */
export function foldScopeFor(type: string): FoldScope | undefined {
  return FOLDED_IN_SCOPE.has(type) ? storage.getStore() : undefined;
}

/** Runs `work` with its announcements folded into `scope`. */
export function runFolded<T>(scope: FoldScope, work: () => Promise<T>): Promise<T> {
  return storage.run(scope, work);
}

/** Why a row was folded, for `notify log`. */
export function foldedReason(scope: FoldScope): string {
  return `folded into the one summary of the ${scope.label} of ${scope.from === scope.to ? scope.from : `${scope.from} to ${scope.to}`}`;
}
