import { hostname } from 'node:os';
import { lockAccountDates } from '../db/date-lock.repository.js';
import type { AppContext } from '../app-context.js';
import { describeCaptureTiming, type CaptureTiming, type CaptureWindow } from '../business-date/business-calendar.js';
import { businessCalendarOf, type AccountConfig } from '../config/index.js';
import type { RunTrigger } from '../db/database.types.js';
import { snapshotRowBatches, snapshotRowsInsert } from '../db/balance-snapshot.repository.js';
import { gatewayScaleFor, unknownDecimalsAdvice } from '../money/amount-scale.js';
import {
  findRunningRun,
  findEndOfDayCaptures,
  markRunFailed,
  markRunSucceeded,
  startRunAbandoningOthers,
} from '../db/snapshot-run.repository.js';
import { describeError, InterruptedError, ProtocolError } from '../errors.js';
import type { GatewayClient } from '../gateway/index.js';
import { AccountLockLostError, tryAcquireAccountLock, type AccountLock } from './account-lock.js';
import { describeDatabaseFailure } from '../db/connection-errors.js';
import { startGatewayCapture, type GatewayCapture, type CaptureProgress } from './gateway-capture.js';
import { formatLocalTime } from '../business-date/local-time.js';

export type { CaptureProgress } from './gateway-capture.js';

export type AccountRunStatus = 'succeeded' | 'failed' | 'skipped';

/** What one account's run came to; stored in the ledger and mapped to an exit code by the shell. */
export interface AccountRunResult {
  account: string;
  status: AccountRunStatus;
  /**
   * Why it was skipped: another process holds the lock, the slot's business date already has its
   * end-of-day snapshot, or the slot's capture window closed before this account's turn came.
   */
  skipReason?: 'locked' | 'already-captured' | 'window-closed';
  /** Skipped as already captured: the run that captured the date. */
  capturedBy?: number;
  runId?: number;
  businessDate?: string;
  /** How the capture stands to its business date's cut-off (absent when no run was recorded). */
  timing?: CaptureTiming;
  walletsReported?: number | null;
  walletsFetched?: number;
  pagesFetched?: number;
  requests?: number;
  durationMs: number;
  error?: string;
  /** A succeeded run that deserves a look: wallets the single read could not confirm. */
  warning?: string;
  /** The failure's error code (E_AUTH: the gateway refused the credentials). */
  errorCode?: string;
}

export interface CaptureOptions {
  trigger: RunTrigger;
  /**
   * The scheduled slot this run serves: its business date is the slot's, whatever the clock says
   * now; an account whose date already has its end-of-day snapshot is skipped. Without it the
   * business date follows from the start time (end of day inside a window, else intraday).
   */
  serve?: { window: CaptureWindow; slot?: Date };
  signal?: AbortSignal;
  onProgress?: (progress: CaptureProgress) => void;
  /** Tests inject a client; otherwise one is built from the account's configuration. */
  createGateway?: (account: AccountConfig, signal: AbortSignal) => GatewayClient;
  /**
   * The gateway reads of this account, already under way (a manual snapshot starts them while
   * the database opens). The run starts at its start, and writes what it brings back only if it
   * holds the lock; otherwise it is aborted. Closed in every case.
   */
  started?: GatewayCapture;
}

/** This process as a worker, recorded on each run it makes (snapshot_runs.worker). */
export const WORKER = `${hostname()}:${process.pid}`;

/**
 * One snapshot run for one account: lock, record, fetch, write atomically, record the outcome.
 * Never throws: gateway and data problems become a `failed` run with a message, and a database
 * that fails before the run is recorded becomes a failed result for this account alone.
 */
export async function captureAccount(ctx: AppContext, account: AccountConfig, options: CaptureOptions): Promise<AccountRunResult> {
  // A run that takes over reads already under way starts, and is timed, from their start.
  const started = options.started?.startedAt ?? ctx.clock.now();
  const startedMs = options.started?.startedMs ?? Date.now();
  try {
    return await lockAndCapture(ctx, account, options, started, startedMs);
  } catch (error) {
    // The database failed before the run could be recorded: report the account, keep the others going.
    const message = describeDatabaseFailure(error, ctx.database.description);
    ctx.logger.child({ account: account.name }).error({ err: error }, `snapshot run could not start: ${message}`);
    return { account: account.name, status: 'failed', durationMs: Date.now() - startedMs, error: message };
  } finally {
    // A run that did not go ahead (locked, skipped, no database) takes no gateway reads with it.
    options.started?.abort(new InterruptedError());
    options.started?.close();
    options.onProgress?.({ account: account.name, phase: 'finished' });
  }
}

async function lockAndCapture(ctx: AppContext, account: AccountConfig, options: CaptureOptions, started: Date, startedMs: number): Promise<AccountRunResult> {
  const log = ctx.logger.child({ account: account.name });
  const { db } = ctx.database;
  const lock = await tryAcquireAccountLock(ctx.database, account.name);
  if (!lock) {
    const holder = await findRunningRun(db, account.name);
    const message = holder
      ? `another process holds the lock of account "${account.name}" (run ${holder.id}, started ${formatLocalTime(holder.started_at, ctx.config.timezone)} by ${holder.worker ?? 'unknown'})`
      : `another process holds the lock of account "${account.name}"`;
    log.warn({ holderRunId: holder?.id }, `skipped: ${message}`);
    return { account: account.name, status: 'skipped', skipReason: 'locked', durationMs: Date.now() - startedMs, error: message };
  }

  try {
    const served = options.serve?.window;
    if (served && started > served.closesAt) {
      log.warn({ businessDate: served.businessDate }, `skipped: the capture window of ${served.businessDate} closed before this account's turn`);
      return { account: account.name, status: 'skipped', skipReason: 'window-closed', businessDate: served.businessDate, durationMs: Date.now() - startedMs };
    }
    // A slot's capture stands in for itself only when it finished after the slot's own time: an
    // earlier capture (manual, inside the window) is not the closing balance the slot would give.
    const already = served ? (await findEndOfDayCaptures(db, [account.name], served.businessDate, options.serve?.slot)).get(account.name) : undefined;
    if (served && already) {
      const since = options.serve?.slot ? ` after the slot of ${options.serve.slot.toISOString()}` : '';
      log.info(
        { businessDate: served.businessDate, capturedBy: already.runId, capturedAt: already.finishedAt?.toISOString() },
        `skipped: ${served.businessDate} already has its end-of-day snapshot (run ${already.runId}, ${already.trigger}, finished ${already.finishedAt?.toISOString() ?? 'at an unknown time'}${since})`,
      );
      return {
        account: account.name,
        status: 'skipped',
        skipReason: 'already-captured',
        capturedBy: already.runId,
        businessDate: served.businessDate,
        durationMs: Date.now() - startedMs,
      };
    }
    if (options.signal?.aborted) {
      return { account: account.name, status: 'failed', durationMs: Date.now() - startedMs, error: 'interrupted before it started' };
    }
    const timing: CaptureTiming = served
      ? {
          businessDate: served.businessDate,
          endOfDay: started >= served.opensAt,
          cutoffAt: served.cutoffAt,
          driftSeconds: Math.round((started.getTime() - served.cutoffAt.getTime()) / 1000),
          timezone: served.timezone ?? businessCalendarOf(ctx.config).rulesFor(served.businessDate).timezone,
        }
      : businessCalendarOf(ctx.config).classify(started);
    const businessDate = timing.businessDate;
    // Runs the account's earlier holders left `running` are marked abandoned in the same round trip.
    const { runId, abandoned } = await startRunAbandoningOthers(db, {
      account: account.name,
      environment: account.environment,
      trigger: options.trigger,
      businessDate,
      startedAt: started,
      slot: options.serve?.slot ?? null,
      worker: WORKER,
      timing,
    });
    if (abandoned.length > 0) log.warn({ abandonedRunIds: abandoned }, `marked ${abandoned.length} earlier run(s) abandoned: their process died`);
    const runLog = log.child({ runId });
    runLog.info({ trigger: options.trigger, businessDate, endOfDay: timing.endOfDay, cutoffDriftSeconds: timing.driftSeconds }, 'snapshot run started');
    return await fetchAndRecord(ctx, account, options, { runId, businessDate, timing, startedAt: started, log: runLog, lockLost: lock.lost, lock });
  } finally {
    await lock.release();
  }
}

/**
 * How a capture whose reads finished at `finished` stands: end of day of the slot's date when it
 * finished inside that window, else whatever the instant is (intraday after a window closed).
 */
function timingAtReadsEnd(ctx: AppContext, served: CaptureWindow | undefined, finished: Date): CaptureTiming {
  if (served && finished >= served.opensAt && finished <= served.closesAt) {
    return {
      businessDate: served.businessDate,
      endOfDay: true,
      cutoffAt: served.cutoffAt,
      driftSeconds: Math.round((finished.getTime() - served.cutoffAt.getTime()) / 1000),
      timezone: served.timezone ?? businessCalendarOf(ctx.config).rulesFor(served.businessDate).timezone,
    };
  }
  return businessCalendarOf(ctx.config).classify(finished);
}

async function fetchAndRecord(
  ctx: AppContext,
  account: AccountConfig,
  options: CaptureOptions,
  run: { runId: number; businessDate: string; timing: CaptureTiming; startedAt: Date; log: AppContext['logger']; lockLost: AbortSignal; lock: AccountLock },
): Promise<AccountRunResult> {
  const { db } = ctx.database;
  const capture =
    options.started ??
    startGatewayCapture(ctx.config, account, {
      clock: ctx.clock,
      logger: run.log,
      signal: options.signal,
      onProgress: options.onProgress,
      metrics: ctx.metrics,
      createGateway: options.createGateway,
    });
  // The gateway stops on a stop request (the capture listens to it) or on the loss of our lock.
  const onLockLost = () => capture.abort(run.lockLost.reason);
  run.lockLost.addEventListener('abort', onLockLost, { once: true });
  if (run.lockLost.aborted) onLockLost();

  const counts: { walletsReported: number | null; walletsFetched: number; pagesFetched: number; requests: number } = {
    walletsReported: null,
    walletsFetched: 0,
    pagesFetched: 0,
    requests: 0,
  };
  try {
    // Each page's single reads start as soon as it is listed; nothing comes back unless the listing holds.
    const { listing, singles } = await capture.balances;
    counts.walletsReported = listing.totalReported ?? null;
    counts.pagesFetched = listing.pagesFetched;
    counts.walletsFetched = listing.wallets.length;
    if (listing.wallets.length === 0 && listing.totalReported !== 0) {
      // An empty answer without X-PH-Total: 0 is more likely a gateway fault than a merchant with
      // no wallets, and a succeeded empty run would hide the day's real balances in daily_balances.
      throw new ProtocolError('The gateway listed no wallets and did not confirm it with X-PH-Total: 0; an empty snapshot was not recorded.');
    }
    run.log.info({ wallets: listing.wallets.length, pages: listing.pagesFetched }, 'wallet list fetched');
    counts.requests = capture.requestCount;
    if (capture.signal.aborted) throw new InterruptedError();

    options.onProgress?.({ account: account.name, phase: 'writing' });
    // The balances are those of the moment the reads finished: that moment, not the run's start,
    // says which day's closing balance they are (a run paused for hours reads the next morning).
    const capturedAt = ctx.clock.now();
    const timing = timingAtReadsEnd(ctx, options.serve?.window, capturedAt);
    // Each row records the scale it was captured in, so a later change of the gateway's unit
    // never reinterprets it. A currency whose decimals are unknown (XAG) is kept as the raw
    // integer with no scale and flagged: one exotic wallet never costs the account its night.
    const rows = listing.wallets.map((wallet, i) => {
      const single = singles[i]!;
      const scale = gatewayScaleFor(ctx.config, account, wallet.currency);
      return 'unconfirmed' in single
        ? { currency: wallet.currency, balance: wallet.balance, singleBalance: null, scale, unconfirmedReason: single.unconfirmed }
        : { currency: wallet.currency, balance: wallet.balance, singleBalance: single.balance, scale };
    });
    const unconfirmed = rows.filter((r) => 'unconfirmedReason' in r);
    const unknownScale = rows.filter((r) => r.scale === null).map((r) => r.currency);
    const warnings = [
      ...(unconfirmed.length === 0 ? [] : [`${unconfirmed.length} wallet(s) the single read could not confirm, kept at their listed balance: ${unconfirmed.map((r) => `${r.currency} (${r.unconfirmedReason})`).join('; ')}`]),
      ...unknownScale.map((currency) => unknownDecimalsAdvice(account.name, currency)),
    ];
    const warning = warnings.length === 0 ? null : warnings.join('; ');
    let finishedAt = capturedAt;
    await db.transaction().execute(async (trx) => {
      // Fencing: the lock is re-asserted in the transaction that writes, not trusted from its
      // start; the run's row is locked with it, and must still be running.
      await run.lock.assertHeld(trx, run.runId);
      // The date's inputs lock (see lockAccountDates): an approval meanwhile is seen by the lock trigger.
      await lockAccountDates(trx, [{ account: account.name, businessDate: timing.businessDate }]);
      // The last batch of rows (the only one below 5,000 wallets) goes in with the run's success.
      const batches = snapshotRowBatches(rows);
      const last = batches.pop();
      for (const batch of batches) await snapshotRowsInsert(run.runId, account.name, capturedAt, batch).execute(trx);
      finishedAt = ctx.clock.now();
      await markRunSucceeded(
        trx,
        run.runId,
        finishedAt,
        counts,
        { timing, readsFinishedAt: capturedAt, warning },
        last && snapshotRowsInsert(run.runId, account.name, capturedAt, last),
      );
    });
    // The duration printed and measured is the one stored (finished_at - started_at), to the millisecond.
    const durationMs = finishedAt.getTime() - run.startedAt.getTime();
    if (timing.businessDate !== run.businessDate || timing.endOfDay !== run.timing.endOfDay) {
      run.log.warn(
        { startedFor: run.businessDate, businessDate: timing.businessDate, endOfDay: timing.endOfDay, cutoffDriftSeconds: timing.driftSeconds },
        `the reads finished at ${capturedAt.toISOString()}: the snapshot counts as ${describeCaptureTiming(timing.businessDate, timing.endOfDay, timing.driftSeconds)}, not as the run started`,
      );
    }
    if (warning !== null) run.log.warn({ unconfirmed: unconfirmed.map((r) => r.currency), unknownDecimals: unknownScale }, warning);
    const mismatches = rows.filter((r) => r.singleBalance !== null && r.singleBalance !== r.balance).length;
    if (mismatches > 0) run.log.warn({ mismatches }, 'the list and single-wallet endpoints disagree for some wallets');
    run.log.info({ ...counts, durationMs }, 'snapshot run succeeded');
    return {
      account: account.name,
      status: 'succeeded',
      runId: run.runId,
      businessDate: timing.businessDate,
      timing,
      ...counts,
      durationMs,
      ...(warning === null ? {} : { warning }),
    };
  } catch (caught) {
    const lockLost = run.lockLost.aborted && !(caught instanceof AccountLockLostError);
    const error = capture.signal.aborted && !lockLost && !(caught instanceof InterruptedError) && !(caught instanceof AccountLockLostError) ? new InterruptedError() : caught;
    const message = lockLost
      ? `the lock of account "${account.name}" was lost mid-run (${describeError(run.lockLost.reason)}); nothing was written`
      : error instanceof InterruptedError
        ? 'interrupted'
        : describeDatabaseFailure(error, ctx.database.description);
    counts.requests = capture.requestCount;
    // The duration printed and measured is the one stored (finished_at - started_at).
    const finishedAt = ctx.clock.now();
    await recordFailure(ctx, run, finishedAt, message, counts, options.signal);
    // A scheduled attempt is tried again within its window: only a missed date is an error then.
    if (options.serve) run.log.warn({ err: error }, `snapshot run failed: ${message}`);
    else run.log.error({ err: error }, `snapshot run failed: ${message}`);
    const errorCode = typeof (error as { code?: unknown } | null)?.code === 'string' ? (error as { code: string }).code : undefined;
    return {
      account: account.name,
      status: 'failed',
      runId: run.runId,
      businessDate: run.businessDate,
      timing: run.timing,
      ...counts,
      durationMs: finishedAt.getTime() - run.startedAt.getTime(),
      error: message,
      ...(errorCode === undefined ? {} : { errorCode }),
    };
  } finally {
    run.lockLost.removeEventListener('abort', onLockLost);
    capture.close();
  }
}

// How long a failed run's record is retried while the database is away (a restart takes seconds).
const RECORD_FAILURE_TRIES = [1_000, 2_000, 4_000, 8_000];

/**
 * Records the run failed. A run cut off by a lost database connection cannot be recorded until
 * it is back: try a few times, else the next attempt, holding the lock, marks it abandoned.
 */
async function recordFailure(
  ctx: AppContext,
  run: { runId: number; log: AppContext['logger'] },
  finishedAt: Date,
  message: string,
  counts: { walletsReported: number | null; walletsFetched: number; pagesFetched: number; requests: number },
  signal: AbortSignal | undefined,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await markRunFailed(ctx.database.db, run.runId, finishedAt, message, counts);
      return;
    } catch (dbError) {
      const delay = RECORD_FAILURE_TRIES[attempt];
      if (delay === undefined || signal?.aborted) {
        run.log.error({ err: dbError }, `could not record the failed run: ${describeDatabaseFailure(dbError, ctx.database.description)}`);
        return;
      }
      // Real time, not the injected clock: this waits for a server, not for a business moment.
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
