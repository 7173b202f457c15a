import { describe, expect, it } from 'vitest';
import { BusinessCalendar } from '../../src/business-date/business-calendar.js';
import { FixedClock } from '../../src/clock.js';
import { createScheduler, type Scheduler, type SchedulerOptions } from '../../src/scheduler/scheduler.js';
import { SlotSchedule, type SlotService } from '../../src/scheduler/slot-schedule.js';
import { captureLogs } from '../helpers/capture-logs.js';

interface Setup {
  now: string;
  expression?: string;
  timezone?: string;
  cutoff?: string;
  windowHours?: number;
  resume?: boolean;
  /** Stop after this many nights. */
  nights?: number;
  runNight?: SchedulerOptions['runNight'];
}

/** A scheduler on virtual time whose nights only record what they were asked to serve. */
async function runScheduler(setup: Setup) {
  const logs = captureLogs();
  const clock = new FixedClock(setup.now);
  const timezone = setup.timezone ?? 'UTC';
  const served: Array<{ slot: string; businessDate: string; reason: string; at: string }> = [];
  let settled = 0;
  const scheduler: Scheduler = createScheduler({
    schedule: new SlotSchedule(setup.expression ?? '55 23 * * *', timezone),
    calendar: new BusinessCalendar({ timezone, cutoff: setup.cutoff ?? '00:00', captureWindowMs: (setup.windowHours ?? 3) * 3_600_000 }),
    clock,
    logger: logs.logger,
    resume: setup.resume ?? true,
    settleClosed: async () => void settled++,
    runNight:
      setup.runNight ??
      (async (serve: SlotService, _signal, reason) => {
        served.push({ slot: serve.slot.toISOString(), businessDate: serve.window.businessDate, reason, at: clock.now().toISOString() });
        if (served.length === (setup.nights ?? 2)) void scheduler.stop(0);
      }),
  });
  await scheduler.start();
  return { scheduler, served, logs, clock, settled: () => settled };
}

describe('scheduler on a fake clock', () => {
  it('runs a night at each slot, at the slot, serving the business date of the nearest cut-off', async () => {
    const { scheduler, served, logs } = await runScheduler({ now: '2026-11-20T12:00:00Z', nights: 3 });
    await scheduler.stopped;
    expect(served).toEqual([
      { slot: '2026-11-20T23:55:00.000Z', businessDate: '2026-11-20', reason: 'schedule', at: '2026-11-20T23:55:00.000Z' },
      { slot: '2026-11-21T23:55:00.000Z', businessDate: '2026-11-21', reason: 'schedule', at: '2026-11-21T23:55:00.000Z' },
      { slot: '2026-11-22T23:55:00.000Z', businessDate: '2026-11-22', reason: 'schedule', at: '2026-11-22T23:55:00.000Z' },
    ]);
    expect(logs.lines().some((l) => l.msg === 'next run at 2026-11-20T23:55:00.000Z for business date 2026-11-20')).toBe(true);
  });

  it('fires once per local day across both Berlin DST changes of 2026', async () => {
    const spring = await runScheduler({ now: '2026-03-27T12:00:00Z', expression: '30 2 * * *', timezone: 'Europe/Berlin', cutoff: '02:00', windowHours: 1, nights: 3 });
    await spring.scheduler.stopped;
    expect(spring.served.map((s) => `${s.businessDate}@${s.slot}`)).toEqual([
      '2026-03-28@2026-03-28T01:30:00.000Z',
      '2026-03-29@2026-03-29T01:00:00.000Z',
      '2026-03-30@2026-03-30T00:30:00.000Z',
    ]);
    const autumn = await runScheduler({ now: '2026-10-24T12:00:00Z', expression: '30 2 * * *', timezone: 'Europe/Berlin', cutoff: '02:00', windowHours: 1, nights: 2 });
    await autumn.scheduler.stopped;
    expect(autumn.served.map((s) => `${s.businessDate}@${s.slot}`)).toEqual(['2026-10-25@2026-10-25T00:30:00.000Z', '2026-10-26@2026-10-26T01:30:00.000Z']);
  });

  it('at start settles closed windows, then resumes the slot whose window is still open, keeping its date', async () => {
    // Restarted at 00:20: the 23:55 slot of the 20th fired while the worker was down; its window is open until 03:00.
    const { scheduler, served, settled } = await runScheduler({ now: '2026-11-21T00:20:00Z', nights: 2 });
    await scheduler.stopped;
    expect(settled()).toBe(1);
    expect(served[0]).toEqual({ slot: '2026-11-20T23:55:00.000Z', businessDate: '2026-11-20', reason: 'resume', at: '2026-11-21T00:20:00.000Z' });
    expect(served[1]).toMatchObject({ slot: '2026-11-21T23:55:00.000Z', businessDate: '2026-11-21', reason: 'schedule' });
  });

  it('does not resume a slot whose window has closed, nor anything with resume off', async () => {
    const closed = await runScheduler({ now: '2026-11-21T04:00:00Z', nights: 1 });
    await closed.scheduler.stopped;
    expect(closed.served).toEqual([expect.objectContaining({ businessDate: '2026-11-21', reason: 'schedule' })]);
    const off = await runScheduler({ now: '2026-11-21T00:20:00Z', resume: false, nights: 1 });
    await off.scheduler.stopped;
    expect(off.settled()).toBe(0);
    expect(off.served).toEqual([expect.objectContaining({ businessDate: '2026-11-21', reason: 'schedule' })]);
  });

  it('one night per business date: later slots of a served date join it, slots that passed during a night are not run late', async () => {
    // Slots every 30 minutes from 23:00 to 01:30 (all serve the date whose cut-off is midnight),
    // and a night that takes 70 minutes (an account being retried).
    const clockHolder: { clock?: FixedClock } = {};
    const run = await runScheduler({
      now: '2026-11-20T22:00:00Z',
      expression: '0,30 23,0,1 * * *',
      nights: 2,
      runNight: async (serve, signal) => {
        served.push({ slot: serve.slot.toISOString(), businessDate: serve.window.businessDate, at: clockHolder.clock!.now().toISOString() });
        await clockHolder.clock!.sleep(70 * 60_000, signal).catch(() => undefined);
        if (served.length === 2) void run.scheduler.stop(0);
      },
    });
    const served: Array<{ slot: string; businessDate: string; at: string }> = [];
    clockHolder.clock = run.clock;
    await run.scheduler.stopped;
    expect(served).toEqual([
      { slot: '2026-11-20T23:00:00.000Z', businessDate: '2026-11-20', at: '2026-11-20T23:00:00.000Z' },
      { slot: '2026-11-21T23:00:00.000Z', businessDate: '2026-11-21', at: '2026-11-21T23:00:00.000Z' },
    ]);
    expect(run.logs.text()).toContain('slot 2026-11-21T00:30:00.000Z joins the night of 2026-11-20, already served');
  });

  it('on stop lets a night finish within the grace period, else interrupts it and waits', async () => {
    let release!: () => void;
    let interrupted = false;
    const graceful = await runScheduler({
      now: '2026-11-20T23:54:00Z',
      runNight: (_serve, signal) =>
        new Promise<void>((resolve) => {
          release = resolve;
          signal.addEventListener('abort', () => ((interrupted = true), resolve()));
        }),
    });
    while (graceful.scheduler.running === undefined) await new Promise((r) => setImmediate(r));
    const stopping = graceful.scheduler.stop(60_000);
    release();
    await stopping;
    expect(interrupted).toBe(false);

    const stubborn = await runScheduler({
      now: '2026-11-20T23:54:00Z',
      runNight: (_serve, signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => ((interrupted = true), resolve()))),
    });
    while (stubborn.scheduler.running === undefined) await new Promise((r) => setImmediate(r));
    await stubborn.scheduler.stop(5);
    expect(interrupted).toBe(true);
    expect(stubborn.scheduler.running).toBeUndefined();
    expect(stubborn.logs.text()).toContain('grace period over: interrupting the running night');
  });
});

describe('fixed clock sleeps', () => {
  it('wakes sleepers in the order of their wake-up times and never moves the clock backwards', async () => {
    const clock = new FixedClock('2026-11-20T00:00:00Z');
    const woke: string[] = [];
    await Promise.all([
      clock.sleep(10 * 60_000).then(() => woke.push(`10m@${clock.now().toISOString()}`)),
      clock.sleep(5 * 60_000).then(() => woke.push(`5m@${clock.now().toISOString()}`)),
    ]);
    expect(woke).toEqual(['5m@2026-11-20T00:05:00.000Z', '10m@2026-11-20T00:10:00.000Z']);
    const controller = new AbortController();
    const aborted = clock.sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
  });
});
