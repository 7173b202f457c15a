import type { AppContext } from '../src/app-context.js';
import { addDays } from '../src/business-date/zoned-time.js';
import type { CaptureWindow } from '../src/business-date/business-calendar.js';
import { businessCalendarOf, selectAccounts } from '../src/config/index.js';
import { countConsecutiveMissedDates, findFirstServedDates, findLastRunError, listSettledDates } from '../src/db/capture-day.repository.js';
import { abandonRunningRuns, accountsWithoutEndOfDay, findRunningRun, hasEndOfDayCapture } from '../src/db/snapshot-run.repository.js';
import { describeDatabaseFailure, isConnectionLost } from '../src/db/connection-errors.js';
import { configuredChannels, enqueueEvent, enqueueNightCompleted, recordMissedDateAndNotify } from '../src/notifications/outbox.js';
import { announceRecoveredDates, atRiskKey } from '../src/notifications/date-recovered.js';
import { hasQueuedOutcome } from '../src/db/notification.repository.js';
import { serviceOfSlot, type SlotSchedule, type SlotService } from '../src/scheduler/slot-schedule.js';
import { tryAcquireAccountLock } from '../src/snapshot/account-lock.js';
import { planNight } from '../src/queue/night-plan.js';
import { runSnapshotJob, type SnapshotJobOptions } from './snapshot-job.js';

/**
 * Pays what some accounts owe (the worker passes the reconcile job's settleOwedReconciliations);
 * stops between account-dates once `signal` is aborted, leaving the rest owed.
 */
export type ReconcileHook = (ctx: AppContext, accounts: readonly string[], signal?: AbortSignal) => Promise<unknown>;

export interface NightOptions {
  serve: SlotService;
  signal: AbortSignal;
  createGateway?: SnapshotJobOptions['createGateway'];
  reconcile?: ReconcileHook;
}

/** Where an account's business date stands once its night is over. */
export type NightAccountStatus = 'captured' | 'missed' | 'pending';

export interface NightAccountOutcome {
  account: string;
  status: NightAccountStatus;
  /** The run that captured the date, when this night captured it. */
  runId?: number;
  /** Capture attempts this night made (runs recorded). */
  attempts: number;
  /** The last error of this night's attempts, if any. */
  error?: string;
}

export interface NightResult {
  businessDate: string;
  slot: Date;
  accounts: NightAccountOutcome[];
  /** Stopped by shutdown before the date was settled; another worker or a restart settles it. */
  interrupted: boolean;
}

/**
 * One scheduled slot's night: capture every account that lacks an end-of-day snapshot for the
 * slot's business date, try again after RECON_RETRY_DELAYS until each is captured or the
 * capture window closes (accounts another worker holds are polled the same way), then settle
 * the date: what is still uncaptured is recorded as missed and raises the alarm. Once the
 * cut-off has passed, whatever the accounts owe is reconciled (a capture made by anyone), and
 * the date's one `night.completed` digest is written.
 */
export async function runNight(ctx: AppContext, options: NightOptions): Promise<NightResult> {
  const { window } = options.serve;
  const { signal } = options;
  const date = window.businessDate;
  const db = ctx.database.db;
  const log = ctx.logger.child({ businessDate: date });
  // The same plan as the server's queue: from this date on the worker answers for these accounts
  // (earlier dates can never be missed); those captured after the slot are skipped, said in the log.
  const { accounts: names } = await planNight(ctx, options.serve);
  const outcomes = new Map<string, NightAccountOutcome>(names.map((account) => [account, { account, status: 'pending', attempts: 0 }]));
  const delays = ctx.config.retryDelaysMs;
  const { slot } = options.serve;
  // Accounts announced at risk this night: once captured (by this loop or anyone else), people
  // hear so. Seeded from the outbox, so a worker restarted mid-night still tells them.
  const atRisk = new Set<string>();
  try {
    for (const account of names) if (await hasQueuedOutcome(db, atRiskKey(account, date))) atRisk.add(account);
  } catch (error) {
    log.warn({ err: error }, 'could not read which dates were announced at risk; a recovery is announced only for risks raised from now on');
  }
  const announceRecoveries = async (stillPending: readonly string[]) => {
    const recovered = [...atRisk].filter((account) => !stillPending.includes(account));
    if (recovered.length === 0) return;
    try {
      await announceRecoveredDates(ctx, recovered, date);
    } catch (error) {
      ctx.logger.error({ err: error, accounts: recovered }, 'could not queue the date.recovered notification');
    }
    for (const account of recovered) atRisk.delete(account);
  };

  for (let round = 0; !signal.aborted; round++) {
    const now = ctx.clock.now();
    if (now >= window.closesAt) break;
    if (now < window.opensAt) {
      await sleepQuietly(ctx, window.opensAt.getTime() - now.getTime(), signal);
      continue;
    }
    // The database away (restarted, failing over): wait a little and ask again, inside the window.
    const pending = await whileDatabaseAway(ctx, signal, window.closesAt, () => accountsWithoutEndOfDay(db, names, date, slot));
    if (pending === undefined) continue;
    await announceRecoveries(pending);
    if (pending.length === 0) break;
    if (round > 0) log.info({ accounts: pending, attempt: round + 1 }, `trying again: ${pending.length} account(s) still without an end-of-day snapshot for ${date}`);
    const result = await runSnapshotJob(ctx, { trigger: 'schedule', accounts: pending, serve: options.serve, signal, createGateway: options.createGateway });
    let credentialsRefused = false;
    for (const run of result.accounts) {
      const outcome = outcomes.get(run.account)!;
      if (run.runId !== undefined) outcome.attempts++;
      if (run.status === 'succeeded' && run.businessDate === date) {
        Object.assign(outcome, { status: 'captured', runId: run.runId, error: undefined });
      } else if (run.status === 'failed' && run.error) {
        outcome.error = run.error;
        // Refused credentials do not heal by themselves: people hear of it now, not when the
        // window closes, and the gateway is not asked again and again with the same secret.
        if (run.errorCode === 'E_AUTH') {
          credentialsRefused = true;
          atRisk.add(run.account);
          await raiseDateAtRisk(ctx, { account: run.account, businessDate: date, windowClosesAt: window.closesAt, reason: run.error });
        }
      }
    }
    const still = (await whileDatabaseAway(ctx, signal, window.closesAt, () => accountsWithoutEndOfDay(db, pending, date, slot))) ?? pending;
    await announceRecoveries(still);
    if (still.length === 0) break;
    const nowAfter = ctx.clock.now().getTime();
    // With credentials refused, only the longest of RECON_RETRY_DELAYS: someone has to fix them.
    const delay = credentialsRefused ? Math.max(...delays) : delays[Math.min(round, delays.length - 1)]!;
    const wake = Math.min(nowAfter + delay, window.closesAt.getTime());
    if (wake > nowAfter) {
      log.warn(
        { accounts: still, nextAttempt: new Date(wake).toISOString(), windowClosesAt: window.closesAt.toISOString() },
        `${still.length} account(s) not captured for ${date} yet: next attempt at ${new Date(wake).toISOString()} (the window closes at ${window.closesAt.toISOString()})`,
      );
      await sleepQuietly(ctx, wake - nowAfter, signal);
    }
  }

  if (signal.aborted) return { businessDate: date, slot: options.serve.slot, accounts: [...outcomes.values()], interrupted: true };
  return settleNight(ctx, { serve: options.serve, signal, reconcile: options.reconcile, outcomes: [...outcomes.values()] });
}

/**
 * The end of a night, in process or as the queue's settle job: every account not captured has
 * its date settled (missed once its window closed, recorded once across workers), the date's
 * results wait for its cut-off and are reconciled, and the one `night.completed` digest is written
 * once every account's date is settled.
 */
export async function settleNight(
  ctx: AppContext,
  options: { serve: SlotService; signal: AbortSignal; reconcile?: ReconcileHook; outcomes: NightAccountOutcome[] },
): Promise<NightResult> {
  const { window } = options.serve;
  const { signal } = options;
  const date = window.businessDate;
  const outcomes = options.outcomes;
  const names = outcomes.map((o) => o.account);
  const interrupted = (): NightResult => ({ businessDate: date, slot: options.serve.slot, accounts: outcomes, interrupted: true });
  for (const outcome of outcomes) {
    if (outcome.status === 'captured') continue;
    // A stop request is honoured between accounts: those settled stay settled (each is recorded
    // once, in its own transaction), the rest are settled when the date is settled again (the
    // settle job is retried, the minute's round settles dates left unsettled).
    if (signal.aborted) return interrupted();
    // A database down through the window: the miss is recorded as soon as it is back.
    const settled = await whileDatabaseAway(ctx, signal, undefined, () => settleAccountDate(ctx, outcome.account, window));
    if (settled === undefined) return interrupted();
    outcome.status = settled;
  }
  // A capture before the cut-off can still be replaced by a later one that finishes before it:
  // the date's results wait for its cut-off, then follow whatever is its snapshot by then.
  const untilCutoff = window.cutoffAt.getTime() - ctx.clock.now().getTime();
  if (untilCutoff > 0) await sleepQuietly(ctx, untilCutoff, signal);
  if (signal.aborted) return interrupted();
  await reconcileQuietly(ctx, options.reconcile, names, signal);
  // Reconciling stopped part-way leaves the rest owed: no digest over results still owed.
  if (signal.aborted) return interrupted();
  ctx.logger.info(
    {
      businessDate: date,
      captured: outcomes.filter((a) => a.status === 'captured').length,
      missed: outcomes.filter((a) => a.status === 'missed').length,
      pending: outcomes.filter((a) => a.status === 'pending').length,
    },
    `night of ${date} settled`,
  );
  const result: NightResult = { businessDate: date, slot: options.serve.slot, accounts: outcomes, interrupted: false };
  // Tell people: the night.completed digest, written once every account's date is settled.
  await whileDatabaseAway(ctx, signal, undefined, () => enqueueNightCompleted(ctx, result, window));
  return result;
}

/**
 * Settles one account's business date once its window has closed: captured, missed (recorded
 * once across replicas, logged at error level, reconciled so the gap shows in the results), or
 * still pending while a live process is capturing it right now.
 */
export async function settleAccountDate(ctx: AppContext, account: string, window: CaptureWindow): Promise<NightAccountStatus> {
  const db = ctx.database.db;
  const date = window.businessDate;
  const lock = await tryAcquireAccountLock(ctx.database, account);
  try {
    if (lock) {
      // Holding the lock, any run still marked running belongs to a process that died: a failure.
      await abandonRunningRuns(db, account, ctx.clock.now());
    } else {
      const running = await findRunningRun(db, account);
      // A capture of this date that started inside the window may still land; its worker settles it.
      if (running?.business_date === date && running.end_of_day) return 'pending';
    }
    if (await hasEndOfDayCapture(db, account, date)) return 'captured';
    const lastError = (await findLastRunError(db, account, date)) ?? 'no capture was attempted inside the window (no worker was running)';
    // The miss and its date.missed notification are written in one transaction.
    const recorded = await recordMissedDateAndNotify(ctx, {
      account,
      businessDate: date,
      cutoffAt: window.cutoffAt,
      windowClosedAt: window.closesAt,
      recordedAt: ctx.clock.now(),
      lastError,
    });
    if (recorded) {
      ctx.logger.error(
        { account, businessDate: date, windowClosedAt: window.closesAt.toISOString(), lastError },
        `account "${account}" missed business date ${date}: no end-of-day snapshot by the end of its capture window (${window.closesAt.toISOString()}); last error: ${lastError}`,
      );
      await raiseConsecutiveMissAlarm(ctx, account, lastError);
    }
    return 'missed';
  } finally {
    await lock?.release();
  }
}

async function raiseConsecutiveMissAlarm(ctx: AppContext, account: string, lastError: string): Promise<void> {
  const missed = await countConsecutiveMissedDates(ctx.database.db, account);
  if (missed >= ctx.config.maxConsecutiveFailures) {
    ctx.logger.error(
      { account, consecutiveMissedDates: missed },
      `account "${account}" has missed ${missed} business dates in a row (last error: ${lastError})`,
    );
  }
}

// How far back the worker looks for dates whose window closed without being settled.
const SETTLE_LOOK_BACK_DAYS = 62;

/**
 * Every business date the schedule served whose window closed without being settled — no worker
 * ran, its worker died, or another process's capture was still in flight when the window closed
 * and then failed — is settled now: recorded as missed unless it was captured, and once every
 * account of the date is settled, its `night.completed` digest is written (once per date).
 * Never for dates before the worker first served an account: manual snapshots and backfills
 * before that make no missed past. The worker calls this at start and every minute.
 */
export async function settleClosedDates(ctx: AppContext, schedule: SlotSchedule, reconcile?: ReconcileHook, signal?: AbortSignal): Promise<number> {
  const calendar = businessCalendarOf(ctx.config);
  const now = ctx.clock.now();
  const names = selectAccounts(ctx.config).map((a) => a.name);
  const firstDates = await findFirstServedDates(ctx.database.db, names);
  if (firstDates.size === 0) return 0;
  const earliest = [...firstDates.values()].sort()[0]!;
  const from = [earliest, addDays(calendar.businessDateOf(now), -SETTLE_LOOK_BACK_DAYS)].sort()[1]!;
  const windows = new Map<string, { window: CaptureWindow; slot: Date }>();
  const start = new Date(calendar.cutoffOf(addDays(from, -1)).getTime() - calendar.captureWindowMs);
  for (const slot of schedule.between(start, now)) {
    const { window } = serviceOfSlot(calendar, slot);
    if (window.businessDate >= from && window.closesAt <= now && !windows.has(window.businessDate)) windows.set(window.businessDate, { window, slot });
  }
  const settled = await listSettledDates(ctx.database.db, names, from);
  let missed = 0;
  const touched = new Map<string, { window: CaptureWindow; slot: Date }>();
  for (const account of names) {
    // Stopped between accounts: the rest are settled at the next round (a worker's or the next start's).
    if (signal?.aborted) return missed;
    const first = firstDates.get(account);
    if (first === undefined) continue;
    for (const served of windows.values()) {
      if (served.window.businessDate < first || settled.has(`${account}|${served.window.businessDate}`)) continue;
      const status = await settleAccountDate(ctx, account, served.window);
      if (status === 'missed') missed++;
      if (status !== 'pending') touched.set(served.window.businessDate, served);
    }
  }
  if (touched.size === 0) return missed;
  await reconcileQuietly(ctx, reconcile, names, signal);
  if (signal?.aborted || configuredChannels(ctx.config).length === 0) return missed;
  // The digest of each date this settled, if every account of it is settled now.
  for (const { window, slot } of [...touched.values()].sort((a, b) => a.window.businessDate.localeCompare(b.window.businessDate))) {
    const days = await ctx.database.db.selectFrom('capture_days').select(['account', 'status']).where('business_date', '=', window.businessDate).where('account', 'in', names).execute();
    const accounts = names.map((account) => {
      const status = days.find((d) => d.account === account)?.status;
      return { account, status: status === 'captured' || status === 'missed' ? status : ('pending' as const) };
    });
    await enqueueNightCompleted(ctx, { businessDate: window.businessDate, slot, accounts, interrupted: false }, window);
  }
  return missed;
}

// How often a night asks again for a database that is away.
const DATABASE_AWAY_POLL_MS = 2_000;

/**
 * Runs a database step of the night; while the database is unreachable, waits and tries again
 * until it answers, the deadline passes or the worker stops (then undefined). Other errors throw.
 */
async function whileDatabaseAway<T>(ctx: AppContext, signal: AbortSignal, deadline: Date | undefined, step: () => Promise<T>): Promise<T | undefined> {
  for (let logged = false; ; ) {
    try {
      return await step();
    } catch (error) {
      if (!isConnectionLost(error)) throw error;
      if (!logged) ctx.logger.warn({ err: error }, `${describeDatabaseFailure(error, ctx.database.description)}: trying again every ${DATABASE_AWAY_POLL_MS / 1000} s`);
      logged = true;
    }
    if (signal.aborted || (deadline !== undefined && ctx.clock.now() >= deadline)) return undefined;
    await sleepQuietly(ctx, DATABASE_AWAY_POLL_MS, signal);
  }
}

/**
 * Tells people at once that an account's business date is at risk because the gateway refused
 * its credentials: one `date.at_risk` per account and date (a second attempt writes nothing).
 */
export async function raiseDateAtRisk(ctx: AppContext, risk: { account: string; businessDate: string; windowClosesAt: Date; reason: string }): Promise<void> {
  try {
    const written = await enqueueEvent(
      ctx.database.db,
      ctx.config,
      'date.at_risk',
      { account: risk.account, businessDate: risk.businessDate, windowClosesAt: risk.windowClosesAt.toISOString(), reason: risk.reason },
      atRiskKey(risk.account, risk.businessDate),
      ctx.clock.now(),
    );
    ctx.logger.error(
      { account: risk.account, businessDate: risk.businessDate, windowClosesAt: risk.windowClosesAt.toISOString(), notifications: written },
      `business date ${risk.businessDate} of account "${risk.account}" is at risk: ${risk.reason} Fix the credentials before ${risk.windowClosesAt.toISOString()}, when its capture window closes.`,
    );
  } catch (error) {
    ctx.logger.error({ err: error, account: risk.account }, 'could not queue the date.at_risk notification');
  }
}

async function sleepQuietly(ctx: AppContext, ms: number, signal: AbortSignal): Promise<void> {
  // An abort ends the wait early; the caller's loop sees the signal.
  await ctx.clock.sleep(ms, signal).catch(() => undefined);
}

async function reconcileQuietly(ctx: AppContext, reconcile: ReconcileHook | undefined, accounts: readonly string[], signal?: AbortSignal): Promise<void> {
  if (!reconcile) return;
  try {
    await reconcile(ctx, accounts, signal);
  } catch (error) {
    // What stays owed is paid on the worker's next round.
    ctx.logger.error({ err: error, accounts }, 'reconciling what the accounts owe failed; it is tried again within a minute');
  }
}
