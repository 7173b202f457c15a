import { describeCaptureTiming } from '../business-date/business-calendar.js';
import type { AppContext } from '../app-context.js';
import { formatOptionalAmount, formatAmount } from '../money/format-amount.js';
import type { AccountRunResult } from '../snapshot/capture-account.js';
import { formatTable } from '../text-table.js';

// What `snapshot`, `runs` and `demo` print of a capture, apart from the capture itself: `runs`
// reads stored runs and never loads the gateway client.

/** How long a run took, to the tenth of a second: `850 ms`, `2.3 s`. */
export function formatRunDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The failure sentences of a snapshot, one per account that did not succeed for a reason worth reading. */
export function formatSnapshotProblems(results: readonly AccountRunResult[]): string {
  return results
    .filter((r) => r.error)
    .map((r) => `${r.account}: ${r.error}`)
    .join('\n');
}

/** The per-account summary printed after a snapshot; without `withProblems: false`, the failure sentences under it. */
export function formatSnapshotSummary(results: readonly AccountRunResult[], options: { withProblems?: boolean } = {}): string {
  const skipped = { locked: 'locked by another process', 'already-captured': 'already captured', 'window-closed': 'capture window closed' } as const;
  const rows = results.map((r) => [
    r.account,
    r.status + (r.skipReason ? ` (${skipped[r.skipReason]})` : ''),
    r.timing ? describeCaptureTiming(r.timing.businessDate, r.timing.endOfDay, r.timing.driftSeconds) : (r.businessDate ?? ''),
    r.runId === undefined ? '' : String(r.runId),
    String(r.walletsFetched ?? ''),
    String(r.pagesFetched ?? ''),
    String(r.requests ?? ''),
    formatRunDuration(r.durationMs),
  ]);
  const table = formatTable(['account', 'status', 'business date', 'run', 'wallets', 'pages', 'requests', 'duration'], rows);
  const problems = options.withProblems === false ? '' : formatSnapshotProblems(results);
  return problems !== '' ? `${table}\n\n${problems}` : table;
}

/** The balances a run captured, per currency in its own units, as `snapshot` and `demo` print them. */
export async function formatCapturedBalances(ctx: Pick<AppContext, 'database'>, run: AccountRunResult): Promise<string | undefined> {
  if (run.status !== 'succeeded' || run.runId === undefined) return undefined;
  const { listSnapshotRows } = await import('../db/balance-snapshot.repository.js');
  const rows = await listSnapshotRows(ctx.database.db, run.runId);
  const table = formatTable(
    ['currency', 'balance', 'single-wallet read'],
    // Each row in the scale it was captured in: whole rupiah stay whole rupiah after a settings change.
    rows.map((r) => [r.currency, formatAmount(r.balance, r.currency, r.scale), r.singleBalance === r.balance ? 'same' : formatOptionalAmount(r.singleBalance, r.currency, r.scale)]),
  );
  return `Balances of ${run.account} captured in run ${run.runId} (business date ${run.businessDate ?? '?'}):\n${rows.length === 0 ? '(no wallets)' : table}`;
}
