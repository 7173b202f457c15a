import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { CronDriver } from '../../src/scheduler/cron-driver.js';
import { nodeCronDriver } from '../../src/scheduler/cron-driver.js';
import { createScheduler, type SchedulerOptions } from '../../src/scheduler/scheduler.js';
import { captureLogs } from '../helpers/capture-logs.js';

/** A cron driver the test fires by hand. */
function fakeDriver(previous?: Date) {
  let onTick: ((slot: Date) => void) | undefined;
  let stopped = false;
  const driver: CronDriver = {
    start(_expression, _timezone, tick) {
      onTick = tick;
      return { stop: () => void (stopped = true), nextRun: () => new Date('2026-11-21T23:55:00Z') };
    },
    previousSlot: () => previous,
  };
  return { driver, fire: (slot: Date) => onTick?.(slot), isStopped: () => stopped };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function build(overrides: Partial<SchedulerOptions> & { driver: CronDriver }) {
  const logs = captureLogs();
  const ticks: Array<{ slot: Date; reason: string }> = [];
  const scheduler = createScheduler({
    expression: '55 23 * * *',
    timezone: 'UTC',
    clock: new FixedClock('2026-11-21T08:00:00Z'),
    logger: logs.logger,
    catchUp: true,
    needsCatchUp: async () => false,
    runTick: async (slot, _signal, reason) => void ticks.push({ slot, reason }),
    ...overrides,
  });
  return { scheduler, logs, ticks };
}

describe('scheduler', () => {
  beforeEach(() => vi.useRealTimers());
  afterEach(() => vi.useRealTimers());

  it('runs a tick for each slot and logs the next run at start and after each tick', async () => {
    const fake = fakeDriver();
    const { scheduler, logs, ticks } = build({ driver: fake.driver });
    await scheduler.start();
    fake.fire(new Date('2026-11-21T23:55:00Z'));
    await scheduler.idle();
    expect(ticks).toEqual([{ slot: new Date('2026-11-21T23:55:00Z'), reason: 'schedule' }]);
    const nextRunLines = logs.lines().filter((l) => l.nextRun === '2026-11-21T23:55:00.000Z');
    expect(nextRunLines).toHaveLength(2);
  });

  it('skips a tick that comes while the previous one still runs, and logs it', async () => {
    const fake = fakeDriver();
    const gate = deferred();
    const { scheduler, logs } = build({
      driver: fake.driver,
      runTick: async () => gate.promise,
    });
    await scheduler.start();
    fake.fire(new Date('2026-11-20T23:55:00Z'));
    fake.fire(new Date('2026-11-21T23:55:00Z'));
    gate.resolve();
    await scheduler.idle();
    expect(logs.lines().some((l) => l.msg === 'tick skipped: the previous run is still going' && l.slot === '2026-11-21T23:55:00.000Z')).toBe(true);
  });

  it('catches up the latest slot at start when an account lacks a succeeded run for it', async () => {
    const slot = new Date('2026-11-20T23:55:00Z');
    const fake = fakeDriver(slot);
    const asked: Date[] = [];
    const { scheduler, ticks } = build({ driver: fake.driver, needsCatchUp: async (s) => (asked.push(s), true) });
    await scheduler.start();
    await scheduler.idle();
    expect(asked).toEqual([slot]);
    expect(ticks).toEqual([{ slot, reason: 'catch-up' }]);
  });

  it('does not catch up when the slot was captured or catch-up is off', async () => {
    const slot = new Date('2026-11-20T23:55:00Z');
    const captured = build({ driver: fakeDriver(slot).driver, needsCatchUp: async () => false });
    await captured.scheduler.start();
    const off = build({ driver: fakeDriver(slot).driver, catchUp: false, needsCatchUp: async () => true });
    await off.scheduler.start();
    expect(captured.ticks).toEqual([]);
    expect(off.ticks).toEqual([]);
  });

  it('on shutdown lets a running tick finish within the grace period', async () => {
    const fake = fakeDriver();
    const gate = deferred();
    let interrupted = false;
    const { scheduler } = build({
      driver: fake.driver,
      runTick: async (_slot, signal) => {
        signal.addEventListener('abort', () => (interrupted = true));
        await gate.promise;
      },
    });
    await scheduler.start();
    fake.fire(new Date('2026-11-21T23:55:00Z'));
    const stopped = scheduler.stop(60_000);
    gate.resolve();
    await stopped;
    expect(interrupted).toBe(false);
    expect(fake.isStopped()).toBe(true);
  });

  it('interrupts a running tick when the grace period runs out, then waits for it', async () => {
    vi.useFakeTimers();
    const fake = fakeDriver();
    let finished = false;
    const { scheduler, logs } = build({
      driver: fake.driver,
      runTick: (_slot, signal) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            finished = true;
            resolve();
          }),
        ),
    });
    await scheduler.start();
    fake.fire(new Date('2026-11-21T23:55:00Z'));
    const stopped = scheduler.stop(5_000);
    await vi.advanceTimersByTimeAsync(5_000);
    await stopped;
    expect(finished).toBe(true);
    expect(scheduler.running).toBe(false);
    expect(logs.text()).toContain('grace period over: interrupting the running run');
    // A tick after stop never starts.
    fake.fire(new Date('2026-11-22T23:55:00Z'));
    expect(scheduler.running).toBe(false);
  });
});

describe('node-cron driver', () => {
  it('finds the latest slot at or before now in the configured time zone', () => {
    expect(nodeCronDriver.previousSlot('55 23 * * *', 'UTC', new Date('2026-11-21T08:00:00Z'))).toEqual(new Date('2026-11-20T23:55:00Z'));
    // 23:55 in Berlin (UTC+1 in November) is 22:55 UTC.
    expect(nodeCronDriver.previousSlot('55 23 * * *', 'Europe/Berlin', new Date('2026-11-21T23:00:00Z'))).toEqual(new Date('2026-11-21T22:55:00Z'));
  });

  it('fires a real node-cron task on a fake clock', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-21T23:54:58Z') });
    const slots: Date[] = [];
    const handle = nodeCronDriver.start('55 23 * * *', 'UTC', (slot) => slots.push(slot));
    expect(handle.nextRun()).toEqual(new Date('2026-11-21T23:55:00Z'));
    await vi.advanceTimersByTimeAsync(3_000);
    handle.stop();
    vi.useRealTimers();
    expect(slots.map((s) => s.toISOString())).toEqual(['2026-11-21T23:55:00.000Z']);
  });
});
