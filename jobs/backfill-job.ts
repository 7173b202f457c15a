import path from 'node:path';
import type { AppContext } from '../src/app-context.js';
import { datesBetween } from '../src/clock.js';
import { businessCalendarOf } from '../src/config/index.js';
import { insertSnapshotRows } from '../src/db/balance-snapshot.repository.js';
import { findLocks, lockedDateError } from '../src/signoff/date-lock.js';
import { findFirstTrackedDates } from '../src/db/capture-day.repository.js';
import { findDailyRun } from '../src/db/reconciliation-result.repository.js';
import { insertRunningRun, markRunSucceeded } from '../src/db/snapshot-run.repository.js';
import { readBalanceFile, type BalanceFileRow } from '../src/books/index.js';
import { countUnmatched, type StatusCounts } from '../src/reconciliation/reconciliation-result.js';
import { parseDateRange, todayOf } from '../src/reconciliation/business-dates.js';
import { resolveAccountNames } from '../src/reconciliation/reconciliation-service.js';
import { runReconcileJob, settleOwedReconciliations } from './reconcile-job.js';
import { runSnapshotJob, type SnapshotJobOptions } from './snapshot-job.js';

export interface BackfillJobOptions {
  from: string;
  to: string;
  /** One configured account; all when absent. */
  account?: string;
  /** Balances exported from the gateway's statements (books format) for past dates. */
  importFile?: string;
  /** Print the plan, write nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Called after each step (an import, a capture, a date reconciled). */
  onProgress?: (done: number, total: number) => void;
  createGateway?: SnapshotJobOptions['createGateway'];
}

/**
 * How an account's date gets (or got) its snapshot:
 * existing: an end-of-day run was already there (or, for a closed day without statements, an
 * intraday one); capture: the date's capture window is open now, so the gateway is asked now;
 * import: a closed date filled from the statements file; pending: the date's cut-off (and
 * window) is still ahead; gap: a closed date nobody can fill; untracked: a closed date before the
 * account's first run or books, which is history, not a gap (neither reconciled nor a case).
 */
export type BackfillAction = 'existing' | 'capture' | 'import' | 'pending' | 'gap' | 'untracked';

export interface BackfillAccountDay {
  account: string;
  action: BackfillAction;
  /** The run holding the day's snapshot, once there is one. */
  runId?: number;
  /** Why a capture did not produce a snapshot. */
  error?: string;
  /** For `untracked`: the account's first tracked date. */
  firstTrackedDate?: string;
}

export interface BackfillDate {
  businessDate: string;
  accounts: BackfillAccountDay[];
  /** Results per status after reconciling; absent in a dry run. */
  summary?: StatusCounts;
  /** Accounts without a snapshot for the date (planned gaps in a dry run). */
  gaps: number;
  /** The date's cut-off is still ahead: nothing to fill yet, not reconciled, not a gap. */
  pending: boolean;
  /** When the date's capture window closes: until then a failed capture can be repeated. */
  windowClosesAt: Date;
  /** Results other than matched, not counting missing snapshots (gaps): breaks, missing sides, mismatches, disappeared wallets. */
  unmatched: number;
}

export interface BackfillJobResult {
  dryRun: boolean;
  /** File name recorded as `source` of imported runs. */
  source?: string;
  dates: BackfillDate[];
  /** 0 every closed date has a snapshot and reconciles clean, 3 gaps or unmatched results remain, 1 a capture failed. */
  exitCode: 0 | 1 | 3;
  /** Statement rows not used: outside the range's past dates, or for dates already captured. */
  unusedStatementRows: number;
}

/**
 * Fills what can honestly be filled over a range: a date whose capture window is open is
 * captured now (its end of day), closed dates come from the statements file, what is left is
 * reported as a gap, and dates whose cut-off is ahead are pending; then every date that is not
 * pending is reconciled. The gateway only reports current balances, so nothing here ever
 * invents a past balance.
 */
export async function runBackfillJob(ctx: AppContext, options: BackfillJobOptions): Promise<BackfillJobResult> {
  const today = todayOf(ctx);
  const calendar = businessCalendarOf(ctx.config);
  const now = ctx.clock.now();
  const { from, to } = parseDateRange(options.from, options.to, today);
  const accounts = resolveAccountNames(ctx.config, options.account);
  const { db } = ctx.database;

  // The gateway's statements carry its own integers (minor units), not an accountant's decimals.
  const statements =
    options.importFile === undefined
      ? []
      : (await readBalanceFile(options.importFile, { amounts: 'minor', account: options.account, knownAccounts: ctx.config.accounts.map((a) => a.name) })).rows;
  const source = options.importFile === undefined ? undefined : path.basename(options.importFile);
  const byAccountDay = new Map<string, BalanceFileRow[]>();
  for (const row of statements) {
    const key = `${row.account}|${row.businessDate}`;
    byAccountDay.set(key, [...(byAccountDay.get(key) ?? []), row]);
  }

  const firstTracked = await findFirstTrackedDates(db, accounts);
  const dates: BackfillDate[] = [];
  const used = new Set<string>();
  for (const businessDate of datesBetween(from, to)) {
    const window = calendar.windowOf(businessDate);
    // Only while its window is open can the gateway still tell a date's end-of-day balance.
    const state = now > window.closesAt ? 'closed' : now >= window.opensAt ? 'open' : 'ahead';
    const days: BackfillAccountDay[] = [];
    for (const account of accounts) {
      const run = await findDailyRun(db, account, businessDate);
      const key = `${account}|${businessDate}`;
      if (run?.endOfDay) days.push({ account, action: 'existing', runId: run.runId });
      else if (state === 'open') days.push({ account, action: 'capture' });
      else if (state === 'ahead') days.push({ account, action: 'pending', runId: run?.runId });
      else if (byAccountDay.has(key)) {
        used.add(key);
        days.push({ account, action: 'import' });
      } else if (run !== undefined) days.push({ account, action: 'existing', runId: run.runId });
      else if (firstTracked.has(account) && businessDate < firstTracked.get(account)!) days.push({ account, action: 'untracked', firstTrackedDate: firstTracked.get(account)! });
      else days.push({ account, action: 'gap' });
    }
    dates.push({ businessDate, accounts: days, gaps: days.filter((d) => d.action === 'gap').length, pending: state === 'ahead', windowClosesAt: window.closesAt, unmatched: 0 });
  }
  const unusedStatementRows = [...byAccountDay].filter(([key]) => !used.has(key)).reduce((n, [, rows]) => n + rows.length, 0);

  if (options.dryRun) {
    return { dryRun: true, source, dates, exitCode: dates.some((d) => d.gaps > 0) ? 3 : 0, unusedStatementRows };
  }

  const work = dates.flatMap((d) => d.accounts.filter((a) => a.action === 'import' || a.action === 'capture').map((a) => ({ date: d.businessDate, day: a })));
  // No capture is ever recorded for a signed-off date: refused before anything is written.
  const [lock] = await findLocks(db, work.map((w) => ({ account: w.day.account, businessDate: w.date })));
  if (lock !== undefined) throw lockedDateError(lock, `the backfill would record a ${work.find((w) => w.date === lock.businessDate && w.day.account === lock.account)!.day.action === 'import' ? 'statement' : 'capture'} as its snapshot`);
  // Each date is reconciled for the accounts tracked on it; a date before every account's first
  // run is not reconciled at all, so it opens no no_snapshot case. A date whose cut-off is still
  // ahead has no closing balance to reconcile yet.
  const reconciledAccounts = (d: BackfillDate) => d.accounts.filter((a) => a.action !== 'untracked').map((a) => a.account);
  const closedDates = dates.filter((d) => !d.pending && reconciledAccounts(d).length > 0 && calendar.cutoffOf(d.businessDate) <= ctx.clock.now());
  const total = work.length + closedDates.length;
  let done = 0;
  const step = () => options.onProgress?.(++done, total);
  let captureFailed = false;

  for (const { date, day } of work) {
    if (day.action === 'import') {
      day.runId = await importStatementDay(ctx, day.account, date, byAccountDay.get(`${day.account}|${date}`)!, source!);
    } else {
      const captured = await runSnapshotJob(ctx, {
        trigger: 'backfill',
        account: day.account,
        serve: { window: calendar.windowOf(date) },
        signal: options.signal,
        createGateway: options.createGateway,
      });
      const outcome = captured.accounts[0];
      if (outcome?.status === 'succeeded' && outcome.runId !== undefined) day.runId = outcome.runId;
      else {
        captureFailed = true;
        day.error = outcome?.error ?? `the snapshot was ${outcome?.status ?? 'not run'}`;
      }
    }
    step();
  }

  for (const date of closedDates) {
    const reconciled = await runReconcileJob(ctx, { date: date.businessDate, accounts: reconciledAccounts(date) });
    date.summary = reconciled.summary;
    date.gaps = reconciled.summary.no_snapshot;
    date.unmatched = countUnmatched(reconciled.summary) - reconciled.summary.no_snapshot;
    step();
  }
  // A filled day changes the movement of the next captured date, which may lie past the range.
  await settleOwedReconciliations(ctx, { accounts });

  const exitCode = captureFailed ? 1 : dates.some((d) => d.gaps > 0 || d.unmatched > 0) ? 3 : 0;
  const gapDates = dates.filter((d) => d.gaps > 0).map((d) => d.businessDate);
  ctx.logger.info({ from, to, accounts, gapDates, exitCode }, `backfill of ${from} to ${to} finished`);
  return { dryRun: false, source, dates, exitCode, unusedStatementRows };
}

/** Records one past date from the statements as a succeeded `backfill` run, all or nothing. */
async function importStatementDay(ctx: AppContext, account: string, businessDate: string, rows: readonly BalanceFileRow[], source: string): Promise<number> {
  const environment = ctx.config.accounts.find((a) => a.name === account)!.environment;
  const now = ctx.clock.now();
  // Statements state the balance at the day's close: end of day by definition, drift 0.
  const cutoffAt = businessCalendarOf(ctx.config).cutoffOf(businessDate);
  const timing = { businessDate, cutoffAt, driftSeconds: 0, endOfDay: true };
  return ctx.database.db.transaction().execute(async (trx) => {
    const runId = await insertRunningRun(trx, { account, environment, trigger: 'backfill', businessDate, startedAt: now, source, timing });
    // The statements carry one balance per wallet: there is no single-wallet reading to compare.
    // Their balances are as of the cut-off, whenever they were imported: that is their capture time.
    await insertSnapshotRows(trx, runId, account, cutoffAt, rows.map((r) => ({ currency: r.currency, balance: r.balance, singleBalance: null })));
    await markRunSucceeded(trx, runId, now, { walletsReported: null, walletsFetched: rows.length, pagesFetched: 0, requests: 0 }, { timing, readsFinishedAt: cutoffAt });
    return runId;
  });
}
