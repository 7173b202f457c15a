import { describe, expect, it } from 'vitest';
import { BusinessCalendar } from '../../src/business-date/business-calendar.js';
import { checkCronExpression, checkScheduleFitsWindows, isPlainDaily, serviceOfSlot, SlotSchedule } from '../../src/scheduler/slot-schedule.js';

const isoList = (dates: Date[]) => dates.map((d) => d.toISOString());

describe('slot schedule across DST in Europe/Berlin', () => {
  const berlin = (expression: string) => new SlotSchedule(expression, 'Europe/Berlin');

  it('fires a slot in the spring gap exactly once, at the first instant after the gap (2026-03-29)', () => {
    const slots = berlin('30 2 * * *').between(new Date('2026-03-27T12:00:00Z'), new Date('2026-03-31T12:00:00Z'));
    expect(isoList(slots)).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // 02:30 does not exist: 03:00 CEST, the end of the gap
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
  });

  it('fires a slot in the repeated autumn hour exactly once, at its first occurrence (2026-10-25)', () => {
    const slots = berlin('30 2 * * *').between(new Date('2026-10-23T12:00:00Z'), new Date('2026-10-27T12:00:00Z'));
    expect(isoList(slots)).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z', '2026-10-27T01:30:00.000Z']);
  });

  it('gives each local day its slots once, whatever instant the search starts from', () => {
    const schedule = berlin('*/20 2 * * *');
    expect(isoList(schedule.between(new Date('2026-10-24T23:00:00Z'), new Date('2026-10-25T03:00:00Z')))).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T00:20:00.000Z',
      '2026-10-25T00:40:00.000Z',
    ]);
    // Starting inside the repeated hour (the second 02:10) finds no second 02:20 or 02:40.
    expect(schedule.nextAfter(new Date('2026-10-25T01:10:00Z'))?.toISOString()).toBe('2026-10-26T01:00:00.000Z');
  });

  it('fires two wall times of one DST gap once, at the end of the gap', () => {
    const slots = berlin('15,45 2 * * *').between(new Date('2026-03-28T12:00:00Z'), new Date('2026-03-29T12:00:00Z'));
    expect(isoList(slots)).toEqual(['2026-03-29T01:00:00.000Z']);
  });

  it('includes a slot at the end of the range and stops at the limit', () => {
    const schedule = new SlotSchedule('0 * * * *', 'UTC');
    expect(isoList(schedule.between(new Date('2026-11-20T00:00:00Z'), new Date('2026-11-20T02:00:00Z')))).toEqual(['2026-11-20T01:00:00.000Z', '2026-11-20T02:00:00.000Z']);
    expect(schedule.between(new Date('2026-11-20T00:00:00Z'), new Date('2026-11-21T00:00:00Z'), 3)).toHaveLength(3);
  });

  it('runs six-field expressions with seconds, in the zone', () => {
    expect(new SlotSchedule('30 55 23 * * *', 'UTC').nextAfter(new Date('2026-11-20T12:00:00Z'))?.toISOString()).toBe('2026-11-20T23:55:30.000Z');
    expect(berlin('30 55 23 * * *').nextAfter(new Date('2026-11-20T12:00:00Z'))?.toISOString()).toBe('2026-11-20T22:55:30.000Z');
  });

  it('refuses a schedule that can never match (30 February) when it is built', () => {
    expect(() => new SlotSchedule('0 0 30 2 *', 'UTC')).toThrow(/is not a valid cron expression/);
  });
});

describe('cron expressions', () => {
  it('accepts five fields or six with seconds, and says what is wrong otherwise', () => {
    expect(checkCronExpression('55 23 * * *')).toBeUndefined();
    expect(checkCronExpression('0 55 23 * * *')).toBeUndefined();
    expect(checkCronExpression(' 55  23 * * * ')).toBeUndefined();
    expect(checkCronExpression('55 23 * *')).toMatch(/5 fields .* or 6 with seconds first.*got 4 fields\)$/);
    expect(checkCronExpression('daily')).toMatch(/got 1 field\)$/);
    expect(checkCronExpression('61 23 * * *')).toMatch(/is not a valid cron expression/);
    // Fields are split on runs of spaces, so a doubled space adds no empty field.
    expect(checkCronExpression('55  23  * *')).toMatch(/got 4 fields\)$/);
    expect(checkCronExpression('0 1 2 3 4 5 6')).toMatch(/got 7 fields\)$/);
  });

  it('refuses a daily-looking expression whose minute or hour is out of range or not a plain number', () => {
    for (const expression of ['60 23 * * *', '0 24 * * *', '+5 0 * * *', '1e1 0 * * *', '5.0 1 * * *', '0 0x1 * * *']) {
      expect([expression, checkCronExpression(expression)]).toEqual([expression, expect.stringMatching(/^is not a valid cron expression \(/)]);
    }
  });

  it('refuses an impossible day, month or weekday after a plain minute and hour', () => {
    for (const expression of ['0 0 32 * *', '0 0 * 13 *', '0 0 * * 8', '0 0 * * * 8']) {
      expect([expression, checkCronExpression(expression)]).toEqual([expression, expect.stringMatching(/^is not a valid cron expression \(Constraint error/)]);
    }
  });

  it('accepts the edges of the minute and hour ranges', () => {
    for (const expression of ['0 0 * * *', '59 23 * * *', '* * * * *', '07 9 * * *', '0 0 * * * *']) expect([expression, checkCronExpression(expression)]).toEqual([expression, undefined]);
  });
});

// A plain daily expression is answered without cron-parser (bundle-load.test.ts: commands that
// never schedule do not load it); one sent to the full check by mistake gets the same answer.
describe('plain daily expressions (checked without cron-parser)', () => {
  const plain = (expression: string) => isPlainDaily(expression.split(' '));

  it('are five fields: minute and hour each * or a number in range, then * * *', () => {
    for (const expression of ['55 23 * * *', '0 0 * * *', '59 23 * * *', '* * * * *', '* 5 * * *', '30 * * * *', '07 09 * * *']) {
      expect([expression, plain(expression)]).toEqual([expression, true]);
    }
  });

  it('are not anything else: numbers out of range or written otherwise, days, months, weekdays, seconds', () => {
    const others = ['60 23 * * *', '0 24 * * *', '+5 0 * * *', '1e1 0 * * *', '5.0 1 * * *', '007 1 * * *', 'a 1 * * *', '*/5 * * * *', '1-5 0 * * *', '0 0 1 * *', '0 0 * 1 *', '0 0 * * 1', '0 0 * * * *', '0 0 0 * * *'];
    for (const expression of others) expect([expression, plain(expression)]).toEqual([expression, false]);
  });
});

describe('a schedule against the capture windows', () => {
  const calendar = (cutoff: string, hours: number) => new BusinessCalendar({ timezone: 'Europe/Berlin', cutoff, captureWindowMs: hours * 3_600_000 });

  it('fits when a slot is exactly a window away from its cut-off', () => {
    expect(checkScheduleFitsWindows(new SlotSchedule('0 21 * * *', 'UTC'), new BusinessCalendar({ timezone: 'UTC', cutoff: '00:00', captureWindowMs: 3 * 3_600_000 }))).toBeUndefined();
    expect(checkScheduleFitsWindows(new SlotSchedule('59 20 * * *', 'UTC'), new BusinessCalendar({ timezone: 'UTC', cutoff: '00:00', captureWindowMs: 3 * 3_600_000 }))).toMatch(/fires at 20:59:00/);
  });

  it('fits when every slot is within the window of its nearest cut-off, DST nights included', () => {
    expect(checkScheduleFitsWindows(new SlotSchedule('55 23 * * *', 'Europe/Berlin'), calendar('00:00', 3))).toBeUndefined();
    expect(checkScheduleFitsWindows(new SlotSchedule('0 17 * * 1-5', 'Europe/Berlin'), calendar('17:00', 1))).toBeUndefined();
  });

  it('says which slot falls outside, how far from the cut-off, and what to change', () => {
    const problem = checkScheduleFitsWindows(new SlotSchedule('0 12 * * *', 'Europe/Berlin'), calendar('00:00', 3));
    expect(problem).toMatch(/fires at 12:00:00 \(Europe\/Berlin\) on 2026-01-01, 12 h from the nearest cut-off, outside the capture window of ±3 h/);
    expect(problem).toMatch(/Move the schedule closer to RECON_CUTOFF or widen the window/);
  });

  it('names the date whose clock change makes a slot that fits every other day miss its window', () => {
    // 00:00 is 3 h before a 03:00 cut-off, except on 2026-10-25, when 03:00 comes an hour later (CEST to CET).
    const problem = checkScheduleFitsWindows(new SlotSchedule('0 0 * * *', 'Europe/Berlin'), calendar('03:00', 3));
    expect(problem).toMatch(/fires at 00:00:00 \(Europe\/Berlin\) on 2026-10-25, when the clocks change from CEST to CET, 4 h from the nearest cut-off/);
  });

  it('serves the business date of the nearest cut-off, before or after it', () => {
    const c = calendar('00:00', 3);
    expect(serviceOfSlot(c, new Date('2026-11-20T22:55:00Z')).window.businessDate).toBe('2026-11-20');
    expect(serviceOfSlot(c, new Date('2026-11-21T00:30:00Z')).window).toMatchObject({
      businessDate: '2026-11-20',
      cutoffAt: new Date('2026-11-20T23:00:00Z'),
      closesAt: new Date('2026-11-21T02:00:00Z'),
    });
  });
});
