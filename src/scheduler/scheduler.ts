import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { CronDriver } from './cron-driver.js';

export interface SchedulerOptions {
  expression: string;
  timezone: string;
  clock: Clock;
  logger: Logger;
  driver: CronDriver;
  /** Run the missed latest slot at start when `needsCatchUp` says so. */
  catchUp: boolean;
  /** Whether a slot still lacks a succeeded run for some account. */
  needsCatchUp(slot: Date): Promise<boolean>;
  /** One tick's work (snapshot every account, then reconcile); must honour the signal. */
  runTick(slot: Date, signal: AbortSignal, reason: 'schedule' | 'catch-up'): Promise<void>;
}

/** The long-running worker's loop: ticks, overlap, catch-up and graceful shutdown. */
export interface Scheduler {
  start(): Promise<void>;
  /** Stops ticking, lets a running tick finish for `graceMs`, then interrupts it and waits. */
  stop(graceMs: number): Promise<void>;
  /** Resolves when the running tick (if any) finishes; for tests. */
  idle(): Promise<void>;
  readonly running: boolean;
}

/** Builds a scheduler; nothing happens until `start()`. */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const { logger } = options;
  let handle: { stop(): void; nextRun(): Date | null } | undefined;
  let current: { slot: Date; done: Promise<void>; controller: AbortController } | undefined;
  let stopping = false;

  const logNextRun = () => {
    const next = handle?.nextRun();
    if (next) logger.info({ nextRun: next.toISOString(), timezone: options.timezone }, `next run at ${next.toISOString()}`);
  };

  const tick = (slot: Date, reason: 'schedule' | 'catch-up') => {
    if (stopping) return;
    if (current) {
      logger.warn({ slot: slot.toISOString(), runningSlot: current.slot.toISOString() }, 'tick skipped: the previous run is still going');
      return;
    }
    const controller = new AbortController();
    const done = (async () => {
      logger.info({ slot: slot.toISOString(), reason }, reason === 'catch-up' ? 'catching up the missed slot' : 'scheduled run starting');
      try {
        await options.runTick(slot, controller.signal, reason);
      } catch (error) {
        logger.error({ err: error, slot: slot.toISOString() }, 'scheduled run failed');
      } finally {
        current = undefined;
        if (!stopping) logNextRun();
      }
    })();
    current = { slot, done, controller };
  };

  return {
    get running() {
      return current !== undefined;
    },
    async start() {
      handle = options.driver.start(options.expression, options.timezone, (slot) => tick(slot, 'schedule'));
      logger.info({ schedule: options.expression, timezone: options.timezone }, 'scheduler started');
      logNextRun();
      if (!options.catchUp) return;
      const slot = options.driver.previousSlot(options.expression, options.timezone, options.clock.now());
      if (slot && (await options.needsCatchUp(slot))) tick(slot, 'catch-up');
    },
    async stop(graceMs) {
      stopping = true;
      handle?.stop();
      const running = current;
      if (!running) return;
      logger.info({ graceMs }, 'waiting for the running run to finish');
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), graceMs);
      });
      const outcome = await Promise.race([running.done.then(() => 'done' as const), graceOver]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        logger.warn('grace period over: interrupting the running run');
        running.controller.abort(new Error('shutdown'));
        await running.done;
      }
    },
    async idle() {
      await current?.done;
    },
  };
}
