import path from 'node:path';
import type { AppContext } from '../src/app-context.js';
import { datesBetween } from '../src/clock.js';
import { bankAccountNamed, businessCalendarOf } from '../src/config/index.js';
import type { Kysely, Transaction } from 'kysely';
import { insertSnapshotRowsFromStage } from '../src/db/balance-snapshot.repository.js';
import type { Database } from '../src/db/database.types.js';
import { countStagedRowsByDay, createBooksStage, findStagedDuplicates, indexBooksStage, stageBooksRows } from '../src/db/expected-balance.repository.js';
import { ConfigError } from '../src/errors.js';
import { gatewayScaleFor } from '../src/money/amount-scale.js';
import { findLocks, lockedDateError } from '../src/signoff/date-lock.js';
import { lockAccountDates } from '../src/db/date-lock.repository.js';
import { findFirstTrackedDates } from '../src/db/capture-day.repository.js';
import { findDailyRuns } from '../src/db/reconciliation-result.repository.js';
import { insertRunningRuns, markRunsSucceeded } from '../src/db/snapshot-run.repository.js';
import { duplicateProblem, noRows, openBalanceFile, type BalanceFileRow } from '../src/books/index.js';
import { countUnmatched, type StatusCounts } from '../src/reconciliation/reconciliation-result.js';
import { parseDateRange, todayOf } from '../src/reconciliation/business-dates.js';
import { resolveAccountNames } from '../src/reconciliation/reconciliation-service.js';
import { runReconcileJob, settleOwedReconciliations } from './reconcile-job.js';
import { withFoldedAnnouncements } from '../src/notifications/fold-work.js';
import { runSnapshotJob, type SnapshotJobOptions } from './snapshot-job.js';

export interface BackfillJobOptions {
  from: string;
  to: string;
  /** One configured account; all when absent. */
  account?: string;
  /** The gateway's statements for past dates: a books-shaped file whose balances are the gateway's own integers. */
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
 * account's first run or books: not reconciled (no case), but a gap of the range asked for;
 * statement: a bank account, whose balances come from its bank statements (never captured, never
 * a gap of the gateway's statements file).
 */
export type BackfillAction = 'existing' | 'capture' | 'import' | 'pending' | 'gap' | 'untracked' | 'statement';

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

  const source = options.importFile === undefined ? undefined : path.basename(options.importFile);

  /** Where each account's date gets its snapshot, given the (account, date) keys the statements hold. */
  const plan = async (db: Kysely<Database> | Transaction<Database>, statementDays: ReadonlyMap<string, number>) => {
    const firstTracked = await findFirstTrackedDates(db, accounts);
    // Every account-date's run in one query, not one per account-date.
    const runs = await findDailyRuns(db, accounts, from, to);
    const dates: BackfillDate[] = [];
    const used = new Set<string>();
    for (const businessDate of datesBetween(from, to)) {
      const window = calendar.windowOf(businessDate);
      // Only while its window is open can the gateway still tell a date's end-of-day balance.
      const state = now > window.closesAt ? 'closed' : now >= window.opensAt ? 'open' : 'ahead';
      const days: BackfillAccountDay[] = [];
      for (const account of accounts) {
        const key = `${account}|${businessDate}`;
        const run = runs.get(key);
        if (bankAccountNamed(ctx.config, account) !== undefined) days.push({ account, action: 'statement' });
        else if (run?.endOfDay) days.push({ account, action: 'existing', runId: run.runId });
        else if (state === 'open') days.push({ account, action: 'capture' });
        else if (state === 'ahead') days.push({ account, action: 'pending', runId: run?.runId });
        else if (statementDays.has(key)) {
          used.add(key);
          days.push({ account, action: 'import' });
        } else if (run !== undefined) days.push({ account, action: 'existing', runId: run.runId });
        else if (firstTracked.has(account) && businessDate < firstTracked.get(account)!) days.push({ account, action: 'untracked', firstTrackedDate: firstTracked.get(account)! });
        else days.push({ account, action: 'gap' });
      }
      // A date asked for explicitly is a gap when nothing holds its balance, before the account's
      // first capture too (it is not reconciled, so it opens no case, but it is not clean either).
      dates.push({ businessDate, accounts: days, gaps: days.filter((d) => d.action === 'gap' || d.action === 'untracked').length, pending: state === 'ahead', windowClosesAt: window.closesAt, unmatched: 0 });
    }
    const unusedStatementRows = [...statementDays].filter(([key]) => !used.has(key)).reduce((n, [, rows]) => n + rows, 0);
    return { dates, unusedStatementRows };
  };

  let planned: Awaited<ReturnType<typeof plan>>;
  if (options.importFile === undefined) {
    planned = await plan(ctx.database.db, new Map());
    if (options.dryRun) return { dryRun: true, source, dates: planned.dates, exitCode: planned.dates.some((d) => d.gaps > 0) ? 3 : 0, unusedStatementRows: 0 };
    await refuseLockedDays(ctx.database.db, planned.dates, ctx.config.timezone);
  } else {
    // The statements are streamed into the transaction's staging table, checked whole, and every
    // past date they fill is written in this one transaction: all of them or none. A dry run
    // plans from the staged keys and rolls back.
    const file = options.importFile;
    try {
      planned = await ctx.database.db.transaction().execute(async (trx) => {
        await stageStatements(ctx, trx, file, options.account);
        const statementDays = await countStagedRowsByDay(trx);
        const result = await plan(trx, statementDays);
        if (options.dryRun) throw new PlanOnly(result);
        await refuseLockedDays(trx, result.dates, ctx.config.timezone);
        await importStatementDays(ctx, trx, result.dates, statementDays, source!);
        return result;
      });
    } catch (error) {
      if (!(error instanceof PlanOnly)) throw error;
      const { dates, unusedStatementRows } = error.plan;
      return { dryRun: true, source, dates, exitCode: dates.some((d) => d.gaps > 0) ? 3 : 0, unusedStatementRows };
    }
  }
  const { dates, unusedStatementRows } = planned;

  const imported = dates.reduce((n, d) => n + d.accounts.filter((a) => a.action === 'import').length, 0);
  const work = dates.flatMap((d) => d.accounts.filter((a) => a.action === 'capture').map((a) => ({ date: d.businessDate, day: a })));
  // Each date is reconciled for the accounts tracked on it; a date before every account's first
  // run is not reconciled at all, so it opens no no_snapshot case. A date whose cut-off is still
  // ahead has no closing balance to reconcile yet.
  const reconciledAccounts = (d: BackfillDate) => d.accounts.filter((a) => a.action !== 'untracked').map((a) => a.account);
  const closedDates = dates.filter((d) => !d.pending && reconciledAccounts(d).length > 0 && calendar.cutoffOf(d.businessDate) <= ctx.clock.now());
  const total = imported + work.length + closedDates.length;
  let done = imported;
  const step = () => options.onProgress?.(++done, total);
  let captureFailed = false;

  for (const { date, day } of work) {
    {
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

  // Past dates a backfill brings in are recorded, but announced in one summary of the backfill.
  await withFoldedAnnouncements(ctx, { label: 'backfill', from, to }, async () => {
    for (const date of closedDates) {
      const reconciled = await runReconcileJob(ctx, { date: date.businessDate, accounts: reconciledAccounts(date) });
      date.summary = reconciled.summary;
      date.gaps = reconciled.summary.no_snapshot + date.accounts.filter((a) => a.action === 'untracked').length;
      date.unmatched = countUnmatched(reconciled.summary) - reconciled.summary.no_snapshot;
      step();
    }
    // A filled day changes the movement of the next captured date, which may lie past the range.
    await settleOwedReconciliations(ctx, { accounts });
  });

  const exitCode = captureFailed ? 1 : dates.some((d) => d.gaps > 0 || d.unmatched > 0) ? 3 : 0;
  const gapDates = dates.filter((d) => d.gaps > 0).map((d) => d.businessDate);
  ctx.logger.info({ from, to, accounts, gapDates, exitCode }, `backfill of ${from} to ${to} finished`);
  return { dryRun: false, source, dates, exitCode, unusedStatementRows };
}

/**
 * No capture or statement is ever recorded for a signed-off date: the whole backfill is refused
 * (DateLockedError) before anything is written.
 */
async function refuseLockedDays(db: Kysely<Database> | Transaction<Database>, dates: readonly BackfillDate[], timezone: string): Promise<void> {
  const work = dates.flatMap((d) => d.accounts.filter((a) => a.action === 'import' || a.action === 'capture').map((a) => ({ businessDate: d.businessDate, account: a.account, action: a.action })));
  // Inside the writing transaction the dates' inputs lock is held until commit (see lockAccountDates).
  if (db.isTransaction) await lockAccountDates(db, work);
  const [lock] = await findLocks(db, work);
  if (lock === undefined) return;
  const action = work.find((w) => w.businessDate === lock.businessDate && w.account === lock.account)!.action;
  throw lockedDateError(lock, `the backfill would record a ${action === 'import' ? 'statement' : 'capture'} as its snapshot`, timezone);
}

/** Ends a dry run's transaction (rolling back what it staged) with its plan. */
class PlanOnly {
  constructor(readonly plan: { dates: BackfillDate[]; unusedStatementRows: number }) {}
}

/**
 * Streams the statements file into the transaction's staging table in batches, each row with the
 * scale the gateway's integers have for its account and currency; refuses, before anything is
 * written, bad rows (InputFileError) and codes whose decimals nobody configured (ConfigError,
 * naming a line per code and the setting to add: such an integer could mean anything).
 */
async function stageStatements(ctx: AppContext, trx: Transaction<Database>, file: string, account: string | undefined): Promise<void> {
  const opened = await openBalanceFile(file, { amounts: 'minor', account, knownAccounts: ctx.config.accounts.map((a) => a.name) });
  await createBooksStage(trx);
  const unscaled = new Map<string, string>();
  for await (const batch of opened.batches) {
    const scaled: Array<BalanceFileRow & { scale: number }> = [];
    for (const row of batch) {
      const accountConfig = ctx.config.accounts.find((a) => a.name === row.account)!;
      const scale = gatewayScaleFor(ctx.config, accountConfig, row.currency);
      if (scale !== null) scaled.push({ ...row, scale });
      else {
        const key = `${row.account}|${row.currency}`;
        if (!unscaled.has(key)) {
          unscaled.set(key, `${opened.name} line ${row.line}: currency ${row.currency} is not an ISO 4217 currency and GATEWAY_AMOUNT_DECIMALS_${row.currency} (or amountDecimals.${row.currency} of account "${row.account}") is not set, so its integer cannot be read`);
        }
      }
    }
    // Once something is refused nothing will be written: the rest is read only for its problems.
    if (opened.problems.count === 0 && unscaled.size === 0) await stageBooksRows(trx, scaled);
  }
  if (opened.problems.count === 0) {
    await indexBooksStage(trx);
    const duplicates = await findStagedDuplicates(trx, 1_000);
    for (const d of duplicates.listed) opened.problems.add(duplicateProblem(opened.name, opened.unit, d.line, d.firstLine, d));
  }
  opened.problems.throwIfAny(opened.name);
  if (unscaled.size > 0) {
    const problems = [...unscaled.values()];
    throw new ConfigError(
      `${problems.length === 1 ? problems[0] : `${opened.name} has rows in ${problems.length} currencies without known decimals:\n${problems.map((p) => `  - ${p}`).join('\n')}`}; nothing was written. Set the gateway's decimals for the code (0 for whole units).`,
      problems,
    );
  }
  if ((await countStagedRowsByDay(trx)).size === 0) throw noRows(opened.name);
}

// Account-dates recorded per statement: 500 runs and their 10,000 rows (10 accounts × 20
// currencies × 50 days) keep each statement, its trigger work and PGlite's heap small.
const IMPORT_DAYS_PER_STATEMENT = 500;

/**
 * Records every past date the plan fills from the staged statements as a succeeded `backfill` run,
 * in the backfill's transaction, a slice of account-dates per statement (not three statements per
 * account-date): the runs are inserted running, their rows copied from the stage, then marked
 * succeeded, as a capture writes its run. Sets each imported day's runId.
 */
async function importStatementDays(ctx: AppContext, trx: Transaction<Database>, dates: readonly BackfillDate[], statementDays: ReadonlyMap<string, number>, source: string): Promise<void> {
  const calendar = businessCalendarOf(ctx.config);
  const environments = new Map(ctx.config.accounts.map((a) => [a.name, a.environment]));
  // In date order, then the accounts' order: the order the runs' ids follow.
  const work = dates.flatMap((d) => d.accounts.filter((a) => a.action === 'import').map((day) => ({ day, businessDate: d.businessDate })));
  for (let start = 0; start < work.length; start += IMPORT_DAYS_PER_STATEMENT) {
    const slice = work.slice(start, start + IMPORT_DAYS_PER_STATEMENT);
    const now = ctx.clock.now();
    // Statements state the balance at the day's close: end of day by definition, drift 0.
    const runs = slice.map(({ day, businessDate }) => {
      const cutoffAt = calendar.cutoffOf(businessDate);
      return { day, timing: { businessDate, cutoffAt, driftSeconds: 0, endOfDay: true, timezone: calendar.rulesFor(businessDate).timezone } };
    });
    const ids = await insertRunningRuns(
      trx,
      runs.map(({ day, timing }) => ({ account: day.account, environment: environments.get(day.account)!, trigger: 'backfill' as const, businessDate: timing.businessDate, startedAt: now, source, timing })),
    );
    runs.forEach((r, i) => (r.day.runId = ids[i]));
    // The statements carry one balance per wallet: there is no single-wallet reading to compare.
    // Their balances are as of the cut-off, whenever they were imported: that is their capture time.
    await insertSnapshotRowsFromStage(
      trx,
      runs.map(({ day, timing }) => ({ runId: day.runId!, account: day.account, businessDate: timing.businessDate, capturedAt: timing.cutoffAt })),
    );
    await markRunsSucceeded(
      trx,
      runs.map(({ day, timing }) => ({
        id: day.runId!,
        counts: { walletsReported: null, walletsFetched: statementDays.get(`${day.account}|${timing.businessDate}`) ?? 0, pagesFetched: 0, requests: 0 },
        timing,
        readsFinishedAt: timing.cutoffAt,
      })),
      now,
    );
  }
}
