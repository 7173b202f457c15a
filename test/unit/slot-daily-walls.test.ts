import { createRequire } from 'node:module';
import type { CronExpressionParser } from 'cron-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dailyWallTimesAfter, SlotSchedule } from '../../src/scheduler/slot-schedule.js';

const cron = (createRequire(import.meta.url)('cron-parser') as { CronExpressionParser: typeof CronExpressionParser }).CronExpressionParser;

const take = (walls: { next(): number }, n: number): number[] => Array.from({ length: n }, () => walls.next());

// Instants from 2025 to 2028, at any millisecond (a search may start from any instant).
const anInstant = fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2028, 11, 31) });
const aZone = fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Chatham', 'America/Santiago');

describe('plain daily wall times', () => {
  it('are the wall times cron-parser walks for the same minute and hour, strictly after the start', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 23 }), anInstant, (minute, hour, after) => {
        const walls = cron.parse(`${minute} ${hour} * * *`, { currentDate: new Date(after), tz: 'UTC' });
        const expected = take({ next: () => walls.next().getTime() }, 5);
        const counted = take(dailyWallTimesAfter(minute, hour, after), 5);
        expect(counted).toEqual(expected);
        expect(counted[0]).toBeGreaterThan(after);
      }),
    );
  });

  it('start the next day when the start is exactly that day’s wall time', () => {
    const at = Date.UTC(2026, 5, 1, 23, 55);
    expect(take(dailyWallTimesAfter(55, 23, at), 2)).toEqual([at + 86_400_000, at + 2 * 86_400_000]);
    expect(take(dailyWallTimesAfter(55, 23, at - 1), 1)).toEqual([at]);
  });
});

describe('a plain daily schedule', () => {
  it('fires at the same instants as the same schedule written with a seconds field (walked by cron-parser), in any zone, across DST', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 23 }), aZone, anInstant, (minute, hour, zone, from) => {
        const to = new Date(from + 40 * 86_400_000);
        const daily = new SlotSchedule(`${minute} ${hour} * * *`, zone).between(new Date(from), to);
        const withSeconds = new SlotSchedule(`0 ${minute} ${hour} * * *`, zone).between(new Date(from), to);
        expect(daily.map((d) => d.toISOString())).toEqual(withSeconds.map((d) => d.toISOString()));
        expect(daily.length).toBeGreaterThanOrEqual(39);
      }),
      { numRuns: 60 },
    );
  });
});

describe('a daily schedule with a star for the minute or the hour', () => {
  it('fires every minute of its hour, or at its minute of every hour, as cron-parser walks it', () => {
    const day = { from: new Date('2026-06-01T00:00:00Z'), to: new Date('2026-06-02T00:00:00Z') };
    const everyMinute = new SlotSchedule('* 3 * * *', 'UTC').between(day.from, day.to);
    expect(everyMinute.map((d) => d.toISOString())).toEqual(Array.from({ length: 60 }, (_, m) => new Date(Date.UTC(2026, 5, 1, 3, m)).toISOString()));
    const everyHour = new SlotSchedule('30 * * * *', 'Europe/Berlin').between(day.from, day.to);
    expect(everyHour.map((d) => d.toISOString())).toEqual(Array.from({ length: 24 }, (_, h) => new Date(Date.UTC(2026, 5, 1, h, 30)).toISOString()));
  });
});
