import cron from 'node-cron';

/** What the scheduler needs from a cron library; tests drive a fake one on a fake clock. */
export interface CronDriver {
  /** Calls `onTick(slot)` at every slot of `expression` in `timezone` until stopped. */
  start(expression: string, timezone: string, onTick: (slot: Date) => void): { stop(): void; nextRun(): Date | null };
  /** The latest slot at or before `now`, looking back at most 31 days. */
  previousSlot(expression: string, timezone: string, now: Date): Date | undefined;
}

const LOOK_BACK_MINUTES = 31 * 24 * 60;

/** node-cron behind the driver interface. */
export const nodeCronDriver: CronDriver = {
  start(expression, timezone, onTick) {
    // noOverlap is ours to handle (the scheduler logs a skipped tick); node-cron just calls.
    const task = cron.schedule(expression, (context) => onTick(context.date), { timezone, name: 'wallet-recon nightly' });
    // A tick node-cron missed (the event loop was blocked past its tolerance) is run late rather
    // than lost until the next restart's catch-up.
    task.on('execution:missed', (context) => onTick(context.date));
    return {
      stop: () => void task.destroy(),
      nextRun: () => task.getNextRun(),
    };
  },
  previousSlot(expression, timezone, now) {
    // node-cron has no "previous run": walk back minute by minute (slots are minute-aligned here).
    const task = cron.createTask(expression, () => undefined, { timezone });
    try {
      const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
      for (let i = 0; i <= LOOK_BACK_MINUTES; i++) {
        const candidate = new Date(minute.getTime() - i * 60_000);
        if (task.match(candidate)) return candidate;
      }
      return undefined;
    } finally {
      void task.destroy();
    }
  },
};
