import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BusinessCalendar } from '../../src/business-date/business-calendar.js';
import { addDays, instantOfWall, localDateOf, wallClockOf } from '../../src/business-date/zoned-time.js';

// Every zone this Node knows, and instants over twenty years of their DST rules.
const zones = Intl.supportedValuesOf('timeZone');
const zone = fc.constantFrom(...zones);
const instant = fc.integer({ min: Date.parse('2016-01-01T00:00:00Z'), max: Date.parse('2036-01-01T00:00:00Z') });
const cutoff = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
const windowMs = fc.integer({ min: 1, max: 11 * 3600 }).map((s) => s * 1000);
const calendar = fc.record({ timezone: zone, cutoff, captureWindowMs: windowMs }).map((s) => new BusinessCalendar(s));
const runs = { numRuns: 300 };

describe('business dates, for random instants, zones, cut-offs and windows', () => {
  it('assign the date whose period (previous cut-off inclusive, own cut-off exclusive) contains the instant', () => {
    fc.assert(
      fc.property(calendar, instant, (c, t) => {
        const date = c.businessDateOf(new Date(t));
        expect(c.cutoffOf(addDays(date, -1)).getTime()).toBeLessThanOrEqual(t);
        expect(c.cutoffOf(date).getTime()).toBeGreaterThan(t);
      }),
      runs,
    );
  });

  it('give each date exactly one cut-off, after the previous one, on the date itself (or the next midnight)', () => {
    fc.assert(
      fc.property(calendar, instant, (c, t) => {
        const date = localDateOf(t, c.timezone);
        const cut = c.cutoffOf(date).getTime();
        const next = c.cutoffOf(addDays(date, 1)).getTime();
        expect(next).toBeGreaterThan(cut);
        // A local day lasts 23 to 25 hours where clocks move by an hour; allow the rare 2-hour shifts.
        expect(next - cut).toBeGreaterThanOrEqual(21 * 3_600_000);
        expect(next - cut).toBeLessThanOrEqual(27 * 3_600_000);
        expect([date, addDays(date, 1)]).toContain(localDateOf(cut, c.timezone));
      }),
      runs,
    );
  });

  it('never let two capture windows overlap', () => {
    fc.assert(
      fc.property(calendar, instant, (c, t) => {
        const date = c.businessDateOf(new Date(t));
        expect(c.windowOf(date).closesAt.getTime()).toBeLessThan(c.windowOf(addDays(date, 1)).opensAt.getTime());
      }),
      runs,
    );
  });

  it('classify a capture as end of day exactly when it starts within the window of the cut-off it is measured from', () => {
    fc.assert(
      fc.property(calendar, instant, (c, t) => {
        const timing = c.classify(new Date(t));
        const cut = c.cutoffOf(timing.businessDate).getTime();
        expect(timing.cutoffAt.getTime()).toBe(cut);
        expect(timing.driftSeconds).toBe(Math.round((t - cut) / 1000));
        const inWindow = (date: string) => Math.abs(t - c.cutoffOf(date).getTime()) <= c.captureWindowMs;
        const own = c.businessDateOf(new Date(t));
        if (timing.endOfDay) expect(inWindow(timing.businessDate)).toBe(true);
        else {
          expect(timing.businessDate).toBe(own);
          expect(inWindow(own) || inWindow(addDays(own, -1))).toBe(false);
        }
      }),
      runs,
    );
  });
});

describe('wall-clock time, for random instants and zones', () => {
  it('maps an instant to its wall time and back to the first instant showing it', () => {
    fc.assert(
      fc.property(zone, instant, (z, t) => {
        const wall = wallClockOf(t, z);
        const back = instantOfWall(wall, z);
        // Where the wall time occurs twice, the first occurrence is returned: never later than t.
        expect(back).toBeLessThanOrEqual(t);
        expect(wallClockOf(back, z)).toBe(wall);
      }),
      runs,
    );
  });
});
