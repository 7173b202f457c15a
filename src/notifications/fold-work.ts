import { randomUUID } from 'node:crypto';
import type { AppContext } from '../app-context.js';
import { runFolded } from './fold-scope.js';
import { summarizeFoldScope } from './problems/problem-outbox.js';

/**
 * Runs a backfill (or an import of several past dates) with its problem messages, `books.missing`
 * and overdue items folded, and then writes its one summary per channel (range and counts):
 * onboarding a month is one message, not one per date and account. The problems are recorded
 * and every event kept in the outbox all the same. The summary covers what was committed even
 * when `work` fails part way.
 */
export async function withFoldedAnnouncements<T>(ctx: AppContext, what: { label: string; from: string; to: string }, work: () => Promise<T>): Promise<T> {
  const scope = { group: `${what.label.replaceAll(' ', '-')}:${what.from}:${what.to}:${randomUUID()}`, ...what };
  try {
    return await runFolded(scope, work);
  } finally {
    await summarizeFoldScope(ctx.database.db, ctx.config, scope, ctx.clock.now());
  }
}

/** withFoldedAnnouncements when `dates` hold more than one business date; else `work` announces as usual. */
export async function foldWhenSeveralDates<T>(ctx: AppContext, label: string, dates: readonly string[], work: () => Promise<T>): Promise<T> {
  const distinct = [...new Set(dates)].sort();
  if (distinct.length < 2) return work();
  return withFoldedAnnouncements(ctx, { label, from: distinct[0]!, to: distinct.at(-1)! }, work);
}
