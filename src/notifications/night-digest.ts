import type { Kysely, Transaction } from 'kysely';
import { driftFromCutoff } from '../business-date/capture-drift.js';
import { countConsecutiveMissedDates, listNightErrors } from '../db/capture-day.repository.js';
import type { Database } from '../db/database.types.js';
import { countCasesOfDate, listCasesByIds } from '../db/reconciliation-case.repository.js';
import { stateOnClock } from '../db/state-on-clock.js';
import { listResults } from '../db/reconciliation-result.repository.js';
import { countByStatus, WAITING_STATUSES, type StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import { formatMoney } from '../money/format-amount.js';
import type { Discrepancy, NightAccountDigest, NightCompletedData } from './events.js';
import { buildChangeList } from './change-list.js';

type Db = Kysely<Database> | Transaction<Database>;

export const TOP_DISCREPANCIES = 20;

/** A settled night as the nightly job reports it. */
export interface SettledNight {
  businessDate: string;
  slot: Date;
  cutoffAt: Date;
  accounts: ReadonlyArray<{ account: string; status: 'captured' | 'missed' }>;
  /** Bank accounts: nothing captures them, but their results, cases and awaited statements are the night's too. */
  bankAccounts?: readonly string[];
  /** When the digest is written (the context's clock): whether books are still awaited is decided on it. */
  at?: Date;
}

/**
 * The digest of a settled night, read from the database (so every replica writes the same one):
 * each account's capture or miss, the date's reconciliation, its largest discrepancies.
 */
export async function buildNightDigest(db: Db, night: SettledNight): Promise<NightCompletedData> {
  const names = night.accounts.map((a) => a.account);
  // A configuration of bank accounts alone captures nothing: no capture to read.
  const days = names.length === 0 ? [] : await db.selectFrom('capture_days').selectAll().where('business_date', '=', night.businessDate).where('account', 'in', names).execute();
  const runIds = days.map((d) => d.run_id).filter((id): id is number => id !== null);
  const runs = runIds.length === 0 ? [] : await db.selectFrom('snapshot_runs').select(['id', 'wallets_fetched', 'reads_finished_at', 'started_at', 'source', 'cutoff_at']).where('id', 'in', runIds).execute();
  // Only this night's errors: its scheduled end-of-day attempts, and for a miss the miss's own.
  const nightErrors = await listNightErrors(db, night.businessDate, names);
  const missed = names.length === 0 ? [] : await db.selectFrom('missed_dates').select(['account', 'last_error']).where('business_date', '=', night.businessDate).where('account', 'in', names).execute();
  const results = await listResults(db, { from: night.businessDate, to: night.businessDate });
  // A discrepancy its case accepted is known and explained: shown as accepted, not as a break.
  const caseIds = [...new Set(results.map((r) => r.caseId).filter((id): id is number => id !== null))];
  const accepted = new Set((await listCasesByIds(db, caseIds)).filter((c) => c.state === 'accepted').map((c) => c.id));
  const bank = night.bankAccounts ?? [];
  const reconciled = [...names, ...bank];
  const mine = results.filter((r) => reconciled.includes(r.account));
  const own = mine.filter((r) => r.caseId === null || !accepted.has(r.caseId));

  const accounts: NightAccountDigest[] = night.accounts.map(({ account, status }) => {
    const day = days.find((d) => d.account === account);
    const runId = status === 'captured' ? (day?.run_id ?? null) : null;
    const run = runs.find((r) => r.id === runId);
    // Drift from the cut-off the run was captured against (the night's for a run that kept none).
    return {
      account,
      status,
      runId,
      cutoffDriftSeconds: run === undefined ? null : driftFromCutoff(night.cutoffAt, { readsFinishedAt: run.reads_finished_at, startedAt: run.started_at, source: run.source, cutoffAt: run.cutoff_at }),
      wallets: run?.wallets_fetched ?? null,
      attempts: day?.attempts ?? 0,
      lastError: status === 'missed' ? (missed.find((m) => m.account === account)?.last_error ?? nightErrors.get(account) ?? null) : (nightErrors.get(account) ?? null),
      reconciliation: countByStatus(own.filter((r) => r.account === account)),
    };
  });

  const discrepancies = own
    .map(toDiscrepancy)
    .filter((d): d is RankedDiscrepancy => d !== undefined)
    .sort((a, b) => compareRelativeSize(b, a) || a.entry.account.localeCompare(b.entry.account));

  // Results that cannot be final yet say so instead of passing for a verdict.
  const states = (reconciled.length === 0 ? [] : await db.selectFrom('reconciliation_status').select(['account', 'state', 'books_deadline_at']).where('business_date', '=', night.businessDate).where('account', 'in', reconciled).execute()).map((s) => ({
    account: s.account,
    state: night.at === undefined ? s.state : stateOnClock(s, night.at),
  }));
  const pending: NightCompletedData['pending'] = [];
  for (const account of reconciled) {
    const state = states.find((s) => s.account === account)?.state;
    if (state === 'awaiting_books') pending.push({ account, state, message: `books for ${night.businessDate} not imported yet` });
    else if (state === 'awaiting_statement') pending.push({ account, state, message: `bank statement for ${night.businessDate} not imported yet` });
    else if (state === 'owed') pending.push({ account, state, message: `results for ${night.businessDate} owed: an input changed and they are being computed again` });
  }

  const consecutiveFailures: NightCompletedData['consecutiveFailures'] = [];
  for (const account of names) {
    const missedDates = await countConsecutiveMissedDates(db, account);
    if (missedDates > 0) consecutiveFailures.push({ account, missedDates });
  }

  return {
    businessDate: night.businessDate,
    slot: night.slot.toISOString(),
    cutoffAt: night.cutoffAt.toISOString(),
    accounts,
    reconciliation: countByStatus(own),
    topDiscrepancies: discrepancies.slice(0, TOP_DISCREPANCIES).map((d) => d.entry),
    moreDiscrepancies: Math.max(0, discrepancies.length - TOP_DISCREPANCIES),
    consecutiveFailures,
    acceptedDiscrepancies: mine.length - own.length,
    caseCounts: await countCasesOfDate(db, reconciled, night.businessDate),
    pending,
    // The night as a change list: new, changed, still open, snoozed, cleared (issue 45).
    changes: await buildChangeList(db, night.businessDate, reconciled, results, accepted),
  };
}

interface RankedDiscrepancy {
  entry: Discrepancy;
  /** |difference| and the balance it is measured against, both in the currency's minor units. */
  size: bigint;
  balance: bigint;
}

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/**
 * Orders discrepancies by size relative to their balance (|difference| / |balance|), exactly by
 * cross-multiplying, so a JPY -5,000 on a 100-million-yen wallet ranks below EUR 1.00 on EUR 5.00
 * without any exchange rate. A difference against a zero balance is the largest; then the larger
 * absolute difference first.
 */
export function compareRelativeSize(a: Pick<RankedDiscrepancy, 'size' | 'balance'>, b: Pick<RankedDiscrepancy, 'size' | 'balance'>): number {
  if (a.balance === 0n || b.balance === 0n) {
    if (a.balance !== b.balance) return a.balance === 0n ? 1 : -1;
    return a.size === b.size ? 0 : a.size > b.size ? 1 : -1;
  }
  const left = a.size * b.balance;
  const right = b.size * a.balance;
  if (left !== right) return left > right ? 1 : -1;
  return a.size === b.size ? 0 : a.size > b.size ? 1 : -1;
}

/** A result that is not matched and has a currency, with its amount: gateway minus books (a missing side as zero), or list minus single-wallet balance for an endpoint mismatch without books. */
function toDiscrepancy(r: StoredReconciliationResult): RankedDiscrepancy | undefined {
  // A result still waiting (books or a bank statement) has no verdict: not a discrepancy yet.
  if (r.status === 'matched' || r.status === 'explained' || WAITING_STATUSES.includes(r.status) || r.currency === null) return undefined;
  const difference =
    r.difference ??
    (r.status === 'endpoint_mismatch' && r.gatewayBalance !== null && r.singleBalance !== null
      ? r.gatewayBalance - r.singleBalance
      : (r.gatewayBalance ?? 0n) - (r.expectedBalance ?? 0n));
  // Relative to the larger side: a wallet that fell to zero is measured against what it held.
  const balance = [r.gatewayBalance, r.expectedBalance, r.singleBalance].reduce<bigint>((max, v) => (v !== null && abs(v) > max ? abs(v) : max), 0n);
  const size = abs(difference);
  return {
    entry: {
      account: r.account,
      status: r.status,
      difference: { amount: difference.toString(), currency: r.currency },
      gatewayBalance: r.gatewayBalance?.toString() ?? null,
      expectedBalance: r.expectedBalance?.toString() ?? null,
      differenceFormatted: formatMoney(difference, r.currency, r.scale),
      relativeBps: balance === 0n ? null : ((size * 10_000n) / balance).toString(),
    },
    size,
    balance,
  };
}
