import { describe, expect, it } from 'vitest';
import { BusinessCalendar, describeCaptureTiming } from '../../src/business-date/business-calendar.js';
import { formatDuration, parseDuration } from '../../src/business-date/duration.js';
import { instantOfWall, wallOfDate } from '../../src/business-date/zoned-time.js';

const calendar = (cutoff: string, timezone = 'UTC', window = '3h') => new BusinessCalendar({ timezone, cutoff, captureWindowMs: parseDuration(window)! });
const iso = (d: Date) => d.toISOString();

describe('cut-off of a business date', () => {
  it('with 00:00 is the midnight that ends the date, not the one that starts it', () => {
    expect(iso(calendar('00:00').cutoffOf('2026-11-20'))).toBe('2026-11-21T00:00:00.000Z');
    expect(iso(calendar('00:00', 'Europe/Berlin').cutoffOf('2026-11-20'))).toBe('2026-11-20T23:00:00.000Z');
  });

  it('with 17:00 is 17:00 local on the date itself', () => {
    expect(iso(calendar('17:00', 'America/New_York').cutoffOf('2026-11-20'))).toBe('2026-11-20T22:00:00.000Z');
  });

  it('in a DST gap is the first instant after the gap, and where the time occurs twice, the first', () => {
    // Berlin, 2026-03-29: clocks jump from 02:00 to 03:00 (01:00Z); 02:30 does not exist.
    expect(iso(calendar('02:30', 'Europe/Berlin').cutoffOf('2026-03-29'))).toBe('2026-03-29T01:00:00.000Z');
    // Berlin, 2026-10-25: 02:30 happens at 00:30Z (summer time) and again at 01:30Z.
    expect(iso(calendar('02:30', 'Europe/Berlin').cutoffOf('2026-10-25'))).toBe('2026-10-25T00:30:00.000Z');
  });

  it('handles the gaps and repeats of zones west of UTC too (New York, 2026-03-08 and 2026-11-01)', () => {
    // 02:30 does not exist on 2026-03-08: the clocks jump from 02:00 EST to 03:00 EDT (07:00Z).
    expect(iso(calendar('02:30', 'America/New_York').cutoffOf('2026-03-08'))).toBe('2026-03-08T07:00:00.000Z');
    // 01:30 happens twice on 2026-11-01: first in EDT (05:30Z), then in EST (06:30Z).
    expect(iso(calendar('01:30', 'America/New_York').cutoffOf('2026-11-01'))).toBe('2026-11-01T05:30:00.000Z');
    expect(iso(calendar('01:30', 'America/New_York').cutoffOf('2026-11-02'))).toBe('2026-11-02T06:30:00.000Z');
  });

  it('with a cut-off just after midnight is on the date itself, not the next', () => {
    expect(iso(calendar('00:30').cutoffOf('2026-11-20'))).toBe('2026-11-20T00:30:00.000Z');
    expect(iso(calendar('00:01').cutoffOf('2026-11-20'))).toBe('2026-11-20T00:01:00.000Z');
  });

  it('maps wall times exactly, to the millisecond, around both Berlin transitions', () => {
    expect(instantOfWall(wallOfDate('2026-03-29') + 2 * 3_600_000 + 59 * 60_000 + 59_999, 'Europe/Berlin')).toBe(Date.parse('2026-03-29T01:00:00.000Z'));
    expect(instantOfWall(wallOfDate('2026-03-29') + 3_600_000 + 59 * 60_000 + 59_999, 'Europe/Berlin')).toBe(Date.parse('2026-03-29T00:59:59.999Z'));
    expect(instantOfWall(wallOfDate('2026-10-25') + 3 * 3_600_000, 'Europe/Berlin')).toBe(Date.parse('2026-10-25T02:00:00.000Z'));
  });
});

describe('business date of an instant', () => {
  it('is the date whose period (previous cut-off to its own) contains it', () => {
    const c = calendar('17:00', 'America/New_York');
    expect(c.businessDateOf(new Date('2026-11-20T21:59:59Z'))).toBe('2026-11-20');
    // 17:00 New York: the cut-off itself already belongs to the next date.
    expect(c.businessDateOf(new Date('2026-11-20T22:00:00Z'))).toBe('2026-11-21');
    expect(c.latestClosedDate(new Date('2026-11-20T22:00:00Z'))).toBe('2026-11-20');
    expect(c.latestClosedDate(new Date('2026-11-20T21:00:00Z'))).toBe('2026-11-19');
  });

  it('with a 00:00 cut-off is the local calendar date', () => {
    const c = calendar('00:00', 'Asia/Tokyo');
    expect(c.businessDateOf(new Date('2026-11-20T14:59:59Z'))).toBe('2026-11-20');
    expect(c.businessDateOf(new Date('2026-11-20T15:00:00Z'))).toBe('2026-11-21');
  });
});

describe('capture timing', () => {
  const c = calendar('00:00', 'UTC', '3h');

  it('inside the window before the cut-off is that date\'s end of day, with a negative drift', () => {
    expect(c.classify(new Date('2026-11-20T23:55:00Z'))).toEqual({ businessDate: '2026-11-20', endOfDay: true, cutoffAt: new Date('2026-11-21T00:00:00Z'), driftSeconds: -300, timezone: 'UTC' });
  });

  it('inside the window after the cut-off still serves the date that just ended', () => {
    expect(c.classify(new Date('2026-11-21T00:20:00Z'))).toMatchObject({ businessDate: '2026-11-20', endOfDay: true, driftSeconds: 1200 });
    expect(c.classify(new Date('2026-11-21T03:00:00Z'))).toMatchObject({ businessDate: '2026-11-20', endOfDay: true, driftSeconds: 10_800 });
  });

  it('outside every window is intraday of the date whose period contains it', () => {
    expect(c.classify(new Date('2026-11-21T03:00:01Z'))).toMatchObject({ businessDate: '2026-11-21', endOfDay: false });
    expect(c.classify(new Date('2026-11-21T14:00:00Z'))).toMatchObject({ businessDate: '2026-11-21', endOfDay: false, driftSeconds: -36_000 });
  });

  it('counts both edges of the window in, and a millisecond beyond out', () => {
    const cut = Date.parse('2026-11-21T00:00:00Z');
    expect(c.classify(new Date(cut - 3 * 3_600_000))).toMatchObject({ businessDate: '2026-11-20', endOfDay: true, driftSeconds: -10_800 });
    expect(c.classify(new Date(cut - 3 * 3_600_000 - 1))).toMatchObject({ businessDate: '2026-11-20', endOfDay: false });
    expect(c.windowOf('2026-11-20')).toEqual({
      businessDate: '2026-11-20',
      timezone: 'UTC',
      cutoffAt: new Date('2026-11-21T00:00:00Z'),
      opensAt: new Date('2026-11-20T21:00:00Z'),
      closesAt: new Date('2026-11-21T03:00:00Z'),
    });
  });

  it('finds the nearest cut-off on either side', () => {
    // Exactly halfway, the earlier cut-off wins.
    expect(c.nearestCutoff(new Date('2026-11-21T12:00:00Z'))).toMatchObject({ businessDate: '2026-11-20', distanceMs: 12 * 3_600_000 });
    expect(c.nearestCutoff(new Date('2026-11-21T11:00:00Z'))).toMatchObject({ businessDate: '2026-11-20', distanceMs: 11 * 3_600_000 });
    expect(c.nearestCutoff(new Date('2026-11-21T13:00:00Z'))).toMatchObject({ businessDate: '2026-11-21', distanceMs: 11 * 3_600_000 });
  });

  it('refuses a window so wide that two dates would share captures', () => {
    expect(() => new BusinessCalendar({ timezone: 'UTC', cutoff: '00:00', captureWindowMs: 12 * 3_600_000 })).toThrow(/at most 11 hours/);
    for (const cutoff of ['24:00', '23:60', '7:00', 'x07:00', '07:00x', '']) {
      expect(() => new BusinessCalendar({ timezone: 'UTC', cutoff, captureWindowMs: 1000 })).toThrow(`cut-off must be HH:MM from 00:00 to 23:59, got "${cutoff}"`);
    }
    expect(() => new BusinessCalendar({ timezone: 'UTC', cutoff: '00:00', captureWindowMs: 0 })).toThrow(/more than 0 and at most 11 hours, got 0 ms/);
    expect(new BusinessCalendar({ timezone: 'UTC', cutoff: '23:59', captureWindowMs: 11 * 3_600_000 }).captureWindowMs).toBe(11 * 3_600_000);
  });
});

describe('how a capture is described', () => {
  it('names the date, end of day or intraday, and the distance to the cut-off', () => {
    expect(describeCaptureTiming('2026-11-20', true, -300)).toBe('2026-11-20, end of day, 5 min before cut-off');
    expect(describeCaptureTiming('2026-11-20', true, 75)).toBe('2026-11-20, end of day, 1 min 15 s after cut-off');
    expect(describeCaptureTiming('2026-11-20', true, 0)).toBe('2026-11-20, end of day, at the cut-off');
    expect(describeCaptureTiming('2026-11-20', true, null)).toBe('2026-11-20, end of day');
    expect(describeCaptureTiming('2026-11-20', false, -36_000)).toBe('2026-11-20, intraday');
  });
});

describe('durations', () => {
  it('parses 90s, 45m, 3h and combinations, and refuses bare or malformed numbers', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('45m')).toBe(2_700_000);
    expect(parseDuration('3h')).toBe(10_800_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration(' 500ms ')).toBe(500);
    for (const bad of ['', '90', '3 h', 'h', '-5m', '1.5h', '5x', '5mx', 'x5m']) expect(parseDuration(bad)).toBeUndefined();
  });

  it('formats for people', () => {
    expect(formatDuration(45_000)).toBe('45 s');
    expect(formatDuration(-300_000)).toBe('5 min');
    expect(formatDuration(3_900_000)).toBe('1 h 5 min');
    expect(formatDuration(3 * 3_600_000)).toBe('3 h');
    expect(formatDuration(27 * 3_600_000)).toBe('1 d 3 h');
    // Each unit takes over exactly at its first whole one.
    expect(formatDuration(59_000)).toBe('59 s');
    expect(formatDuration(60_000)).toBe('1 min');
    expect(formatDuration(570_000)).toBe('9 min 30 s');
    expect(formatDuration(600_000)).toBe('10 min');
    expect(formatDuration(659_000)).toBe('11 min');
    expect(formatDuration(3_600_000)).toBe('1 h');
    expect(formatDuration(86_400_000)).toBe('1 d');
    expect(formatDuration(48 * 3_600_000)).toBe('2 d');
  });
});
