import type { SignoffInputs } from '../db/signoff.repository.js';

export type { SignoffInputs };

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What differs between the inputs a date was signed on and its inputs now, one sentence each.
 * Empty when nothing the sealed results depend on changed: a re-import of identical books, or a
 * reconcile that computes the same results, changes nothing here.
 */
export function describeInputChanges(signed: SignoffInputs, now: SignoffInputs): string[] {
  const changes: string[] = [];
  if (signed.accountSet !== undefined && now.accountSet !== undefined && !same(signed.accountSet, now.accountSet)) {
    changes.push(`the accounts changed (${signed.accountSet.join(', ')} → ${now.accountSet.join(', ')})`);
  }
  // The tolerance settings are recorded, but a change of them alone alters nothing sealed: the
  // results digest below changes when a reconcile computes another result with them.
  for (const before of signed.accounts) {
    const after = now.accounts.find((a) => a.account === before.account) ?? { account: before.account, runId: null, booksImportId: null, cases: {} as Record<string, string> };
    if (after.runId !== before.runId) {
      changes.push(
        after.runId === null
          ? `${before.account}: the snapshot it was signed on (run ${before.runId}) is no longer the day's snapshot`
          : `${before.account}: a better snapshot became the day's snapshot (run ${before.runId ?? 'none'} → run ${after.runId})`,
      );
    }
    const booksBefore = before.booksImportIds ?? (before.booksImportId === null ? [] : [before.booksImportId]);
    const booksAfter = after.booksImportIds ?? (after.booksImportId === null ? [] : [after.booksImportId]);
    if (!same(booksBefore, booksAfter)) {
      changes.push(`${before.account}: the books were re-imported (import ${booksBefore.join(', ') || 'none'} → import ${booksAfter.join(', ') || 'none'})`);
    }
    if (before.previousRunId !== undefined && after.previousRunId !== undefined && before.previousRunId !== after.previousRunId) {
      changes.push(`${before.account}: the previous date's snapshot changed (run ${before.previousRunId ?? 'none'} → run ${after.previousRunId ?? 'none'}), so the movement did`);
    }
    if (before.resultsDigest !== undefined && after.resultsDigest !== undefined && before.resultsDigest !== after.resultsDigest) {
      changes.push(`${before.account}: the results changed (reconciled again with other inputs or settings)`);
    }
    if (before.booksDigest !== undefined && after.booksDigest !== undefined && before.booksDigest !== after.booksDigest) {
      changes.push(`${before.account}: the books changed`);
    }
    // Compared field by field: stored as jsonb, the keys come back in jsonb's order.
    const keyOf = (list: ReadonlyArray<{ statement_id: string; file_sha256: string | null }>) => list.map((st) => `${st.statement_id}|${st.file_sha256 ?? ''}`);
    if (before.statements !== undefined && after.statements !== undefined && !same(keyOf(before.statements), keyOf(after.statements))) {
      const names = (list: ReadonlyArray<{ statement_id: string }>) => list.map((st) => st.statement_id).join(', ') || 'none';
      changes.push(`${before.account}: the bank statements changed (${names(before.statements)} → ${names(after.statements)})`);
    } else if (before.statementBalancesDigest !== undefined && after.statementBalancesDigest !== undefined && before.statementBalancesDigest !== after.statementBalancesDigest) {
      changes.push(`${before.account}: the balances of its bank statements changed`);
    }
    for (const [id, state] of Object.entries(after.cases)) {
      const was = before.cases[id];
      if (was === undefined) changes.push(`${before.account}: case #${id} appeared (${state})`);
      else if ((was === 'resolved' || was === 'accepted') && (state === 'open' || state === 'acknowledged')) changes.push(`${before.account}: case #${id} was reopened (${was} → ${state})`);
    }
  }
  return changes;
}
