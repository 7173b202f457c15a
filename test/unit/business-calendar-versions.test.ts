import { describe, expect, it } from 'vitest';
import { BusinessCalendar } from '../../src/business-date/business-calendar.js';
import { capturedDriftSeconds, capturedUnderOtherRules, describeDrift } from '../../src/business-date/capture-drift.js';
import type { AppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/index.js';
import { jobCalendarOf, serviceOfJob } from '../../src/queue/night-jobs.js';

// Issue 44: the calendar changes from a business date on; earlier dates keep the rules they had.
const HOUR = 3_600_000;
const berlin = (cutoff: string) => ({ timezone: 'Europe/Berlin', cutoff, captureWindowMs: 3 * HOUR });
const iso = (d: Date) => d.toISOString();

describe('a calendar with a later version', () => {
  // 18:00 up to 2026-12-03, 00:00 from 2026-12-04 on.
  const calendar = new BusinessCalendar(berlin('18:00'), [{ effectiveFrom: '2026-12-04', ...berlin('00:00') }]);

  it('reads each date by the rules in force for it', () => {
    expect(iso(calendar.cutoffOf('2026-12-03'))).toBe('2026-12-03T17:00:00.000Z');
    expect(iso(calendar.cutoffOf('2026-12-04'))).toBe('2026-12-04T23:00:00.000Z');
    expect(calendar.rulesFor('2026-12-03')).toMatchObject({ cutoff: '18:00', effectiveFrom: '0001-01-01' });
    expect(calendar.rulesFor('2026-12-04')).toMatchObject({ cutoff: '00:00', effectiveFrom: '2026-12-04' });
  });

  it('gives the instants between the old and the new cut-off to the first date of the new rules (a longer day)', () => {
    expect(calendar.businessDateOf(new Date('2026-12-03T16:59:59Z'))).toBe('2026-12-03');
    // 19:00 CET on the 3rd: after the 3rd's 18:00 cut-off, so the 4th (which ends at midnight of the 4th).
    expect(calendar.businessDateOf(new Date('2026-12-03T18:00:00Z'))).toBe('2026-12-04');
    expect(calendar.businessDateOf(new Date('2026-12-04T22:59:59Z'))).toBe('2026-12-04');
    expect(calendar.businessDateOf(new Date('2026-12-04T23:00:00Z'))).toBe('2026-12-05');
    expect(calendar.latestClosedDate(new Date('2026-12-04T12:00:00Z'))).toBe('2026-12-03');
  });

  it('gives a shorter first day when the cut-off moves earlier', () => {
    const earlier = new BusinessCalendar(berlin('00:00'), [{ effectiveFrom: '2026-12-04', ...berlin('18:00') }]);
    expect(earlier.businessDateOf(new Date('2026-12-03T22:59:59Z'))).toBe('2026-12-03');
    expect(earlier.businessDateOf(new Date('2026-12-03T23:00:00Z'))).toBe('2026-12-04');
    expect(earlier.businessDateOf(new Date('2026-12-04T17:00:00Z'))).toBe('2026-12-05');
  });

  it('classifies captures by the window of the date they serve', () => {
    expect(calendar.classify(new Date('2026-12-03T16:35:00Z'))).toMatchObject({ businessDate: '2026-12-03', endOfDay: true, driftSeconds: -1500, timezone: 'Europe/Berlin' });
    expect(calendar.classify(new Date('2026-12-04T22:35:00Z'))).toMatchObject({ businessDate: '2026-12-04', endOfDay: true, driftSeconds: -1500 });
    expect(calendar.classify(new Date('2026-12-04T12:00:00Z'))).toMatchObject({ businessDate: '2026-12-04', endOfDay: false });
  });
});

describe('drift of a run', () => {
  const now = new BusinessCalendar(berlin('00:00'));
  const run = { readsFinishedAt: new Date('2026-12-02T16:35:00Z'), startedAt: new Date('2026-12-02T16:34:58Z'), cutoffAt: new Date('2026-12-02T17:00:00Z') };

  it('is measured from the cut-off it was captured against, not the one the calendar gives its date now', () => {
    expect(capturedDriftSeconds(now, '2026-12-02', run)).toBe(-1500);
    expect(capturedDriftSeconds(now, '2026-12-02', { ...run, cutoffAt: null })).toBe(-(6 * 3600 + 25 * 60));
  });

  it('is written for people, and names the rules it was captured under when they are not today’s', () => {
    expect(describeDrift(-(22 * 3600 + 25 * 60))).toBe('22 h 25 min before the cut-off');
    expect(describeDrift(0)).toBe('at the cut-off');
    expect(describeDrift(90)).toBe('1 min 30 s after the cut-off');
    expect(capturedUnderOtherRules(now, '2026-12-02', { cutoffAt: run.cutoffAt, cutoffTimezone: 'Europe/Berlin' })).toBe(
      'cut-off 18:00 Europe/Berlin as captured (2026-12-02; the calendar now says 00:00 Europe/Berlin)',
    );
    expect(capturedUnderOtherRules(new BusinessCalendar(berlin('18:00')), '2026-12-02', { cutoffAt: run.cutoffAt, cutoffTimezone: 'Europe/Berlin' })).toBeUndefined();
  });
});

describe('a queued job', () => {
  it("carries its date's window, so a worker with other settings reads it as planned", () => {
    const planner = { config: loadConfig({ env: { RECON_TIMEZONE: 'Europe/Berlin', RECON_CUTOFF: '18:00' } }) } as AppContext;
    const other = { config: loadConfig({ env: { RECON_TIMEZONE: 'UTC', RECON_CUTOFF: '00:00' } }) } as AppContext;
    const window = new BusinessCalendar(berlin('18:00')).windowOf('2026-12-02');
    const serve = { slot: new Date('2026-12-02T16:55:00Z'), window };
    const data = { businessDate: '2026-12-02', slot: serve.slot.toISOString(), calendar: jobCalendarOf(planner, serve) };
    expect(data.calendar).toEqual({ timezone: 'Europe/Berlin', cutoff: '18:00', cutoffAt: '2026-12-02T17:00:00.000Z', opensAt: '2026-12-02T14:00:00.000Z', closesAt: '2026-12-02T20:00:00.000Z' });
    expect(serviceOfJob(other, data).window).toEqual({ ...window, timezone: 'Europe/Berlin' });
    // A job queued before jobs carried it: the running worker's calendar.
    expect(iso(serviceOfJob(other, { businessDate: '2026-12-02', slot: data.slot }).window.cutoffAt)).toBe('2026-12-03T00:00:00.000Z');
  });
});
