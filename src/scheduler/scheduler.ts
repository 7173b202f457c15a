import type { BusinessCalendar } from '../business-date/business-calendar.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { serviceOfSlot, type SlotSchedule, type SlotService } from './slot-schedule.js';

export interface SchedulerOptions {
  schedule: SlotSchedule;
  calendar: BusinessCalendar;
  clock: Clock;
  logger: Logger;
  /** At start, settle closed windows and resume the slot whose window is still open. */
  resume: boolean;
  /** Records the dates whose window closed while no worker ran. */
  settleClosed(): Promise<void>;
  /** One slot's night, until its business date is settled; must honour the signal. */
  runNight(serve: SlotService, signal: AbortSignal, reason: 'schedule' | 'resume'): Promise<void>;
  /**
   * Runs every `maintainEveryMs` beside the nights, whatever the slots: settles what anyone left
   * owed or unsettled (a capture by another process, books imported, a run that died).
   */
  maintain?(signal: AbortSignal): Promise<void>;
  maintainEveryMs?: number;
}

/** The long-running worker's loop: slots on the injected clock, resume at start, graceful shutdown. */
export interface Scheduler {
  start(): Promise<void>;
  /** Stops waiting for slots, lets a running night finish for `graceMs`, then interrupts it and waits. */
  stop(graceMs: number): Promise<void>;
  /** Resolves when the loop has ended (after stop) ; for tests. */
  readonly stopped: Promise<void>;
  /** The night under way, if any. */
  readonly running: SlotService | undefined;
}

// Waits are chained in steps of at most a day, so a clock that jumps (suspend, NTP) is re-read.
const MAX_SLEEP_MS = 86_400_000;

/**
 * Builds a scheduler; nothing happens until `start()`. Nights run one after another: capture
 * windows never overlap, so the next slot of another business date always comes after the
 * current night's window has closed, and a slot passed during a night serves the same date.
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const { logger, clock } = options;
  const stopController = new AbortController();
  let current: { serve: SlotService; controller: AbortController; done: Promise<void> } | undefined;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (resolveStopped = resolve));

  const night = async (serve: SlotService, reason: 'schedule' | 'resume') => {
    const controller = new AbortController();
    const date = serve.window.businessDate;
    logger.info(
      { slot: serve.slot.toISOString(), businessDate: date, cutoffAt: serve.window.cutoffAt.toISOString(), windowClosesAt: serve.window.closesAt.toISOString(), reason },
      reason === 'resume' ? `resuming the night of ${date}: its capture window is still open` : `scheduled night of ${date} starting`,
    );
    const done = (async () => {
      try {
        await options.runNight(serve, controller.signal, reason);
      } catch (error) {
        logger.error({ err: error, slot: serve.slot.toISOString(), businessDate: date }, `the night of ${date} failed`);
      }
    })();
    current = { serve, controller, done };
    await done;
    current = undefined;
  };

  const sleepUntil = async (instant: Date) => {
    for (let now = clock.now(); now < instant; now = clock.now()) {
      await clock.sleep(Math.min(instant.getTime() - now.getTime(), MAX_SLEEP_MS), stopController.signal);
    }
  };

  const maintenance = async () => {
    const every = options.maintainEveryMs ?? 60_000;
    while (!stopController.signal.aborted) {
      await clock.sleep(every, stopController.signal).catch(() => undefined);
      if (stopController.signal.aborted) return;
      try {
        await options.maintain!(stopController.signal);
      } catch (error) {
        logger.error({ err: error }, 'settling what is owed failed; tried again at the next round');
      }
    }
  };

  const loop = async () => {
    // The date of the last night served: a later slot of the same date joins it (already served).
    let lastServed: string | undefined;
    try {
      const startedAt = clock.now();
      if (options.resume) {
        try {
          await options.settleClosed();
        } catch (error) {
          logger.error({ err: error }, 'could not settle the dates whose window closed while no worker ran');
        }
        // Only one window can be open at a time; its latest slot that already fired is resumed.
        const lookBack = new Date(startedAt.getTime() - 2 * options.calendar.captureWindowMs - 1000);
        const open = options.schedule
          .between(lookBack, startedAt)
          .map((slot) => serviceOfSlot(options.calendar, slot))
          .filter((serve) => serve.window.closesAt > startedAt)
          .at(-1);
        if (open && !stopController.signal.aborted) {
          await night(open, 'resume');
          lastServed = open.window.businessDate;
        }
      }
      if (options.maintain) void maintenance();
      let after = startedAt;
      while (!stopController.signal.aborted) {
        const next = options.schedule.nextAfter(after);
        if (next === undefined) {
          logger.warn({ schedule: options.schedule.expression }, 'the schedule has no further slots: the worker idles until stopped');
          await clock.sleep(Number.MAX_SAFE_INTEGER, stopController.signal);
          return;
        }
        const serve = serviceOfSlot(options.calendar, next);
        logger.info(
          { nextRun: next.toISOString(), businessDate: serve.window.businessDate, timezone: options.schedule.timezone },
          `next run at ${next.toISOString()} for business date ${serve.window.businessDate}`,
        );
        await sleepUntil(next);
        // Slots that passed while a night ran are not run late: their date was served, or its
        // window closed and the maintenance round settles it.
        after = new Date(Math.max(next.getTime(), clock.now().getTime()));
        if (stopController.signal.aborted) break;
        if (serve.window.businessDate === lastServed) {
          logger.info({ slot: next.toISOString(), businessDate: lastServed }, `slot ${next.toISOString()} joins the night of ${lastServed}, already served`);
          continue;
        }
        if (clock.now() > serve.window.closesAt) {
          logger.warn({ slot: next.toISOString(), businessDate: serve.window.businessDate }, `slot ${next.toISOString()} fired after the window of ${serve.window.businessDate} closed: the date is settled, not captured late`);
          continue;
        }
        await night(serve, 'schedule');
        lastServed = serve.window.businessDate;
      }
    } catch (error) {
      if (!stopController.signal.aborted) logger.error({ err: error }, 'the scheduler loop stopped unexpectedly');
    } finally {
      resolveStopped();
    }
  };

  return {
    get running() {
      return current?.serve;
    },
    stopped,
    async start() {
      logger.info(
        { schedule: options.schedule.expression, timezone: options.schedule.timezone, captureWindowMs: options.calendar.captureWindowMs },
        'scheduler started',
      );
      void loop();
    },
    async stop(graceMs) {
      stopController.abort(new Error('shutdown'));
      const running = current;
      if (running) {
        logger.info({ graceMs }, 'waiting for the running night to finish');
        let timer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), graceMs);
        });
        const outcome = await Promise.race([running.done.then(() => 'done' as const), graceOver]);
        clearTimeout(timer);
        if (outcome === 'timeout') {
          logger.warn('grace period over: interrupting the running night');
          running.controller.abort(new Error('shutdown'));
          await running.done;
        }
      }
      await stopped;
    },
  };
}
