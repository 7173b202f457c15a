import type { BusinessCalendar } from './business-calendar.js';
import { formatDuration } from './duration.js';
import { wallClockOf } from './zoned-time.js';

/** The instants of one capture (a run of the ledger) its drift is measured from. */
export interface CaptureInstants {
  /** When its gateway reads finished: what decides its date (null while running, after a failure). */
  readsFinishedAt: Date | null;
  startedAt: Date;
  /** The statement file a backfill imported the day from: its balances are the day's close. */
  source?: string | null;
  /** The cut-off the run was captured against (`snapshot_runs.cutoff_at`); null for a run that never had one. */
  cutoffAt?: Date | null;
}

/**
 * A capture's drift from its cut-off, in seconds (negative: before the cut-off): when its reads
 * finished (else when it started) minus the cut-off it was captured against — the run's own
 * `cutoff_at`, so a later change of the calendar never re-reads it — else `fallbackCutoffAt`, the
 * cut-off its date has by the database's calendar; 0 for a day imported from statements. The one
 * rule for every place that shows drift (`runs`, reports, the console, the night digest).
 *
 * @example driftFromCutoff(calendar.cutoffOf('2026-11-24'), { readsFinishedAt, startedAt, cutoffAt }) // -578
 */
export function driftFromCutoff(fallbackCutoffAt: Date, capture: CaptureInstants): number {
  if (capture.source !== null && capture.source !== undefined) return 0;
  const at = capture.readsFinishedAt ?? capture.startedAt;
  const cutoffAt = capture.cutoffAt ?? fallbackCutoffAt;
  return Math.round((at.getTime() - cutoffAt.getTime()) / 1000);
}

/** {@link driftFromCutoff} with the cut-off of `businessDate` in `calendar` for a run that kept none. */
export function capturedDriftSeconds(calendar: Pick<BusinessCalendar, 'cutoffOf'>, businessDate: string, capture: CaptureInstants): number {
  return driftFromCutoff(capture.cutoffAt ?? calendar.cutoffOf(businessDate), capture);
}

/** Drift for people: "22 h 25 min before the cut-off", "at the cut-off", "drift unknown". */
export function describeDrift(seconds: number | null): string {
  if (seconds === null) return 'drift unknown';
  if (seconds === 0) return 'at the cut-off';
  return `${formatDuration(seconds * 1000)} ${seconds < 0 ? 'before' : 'after'} the cut-off`;
}

/**
 * The rules a run was captured under, said for people when they are not the ones its date has by
 * the calendar now ("cut-off 18:00 Europe/Berlin as captured"); undefined when they agree or the
 * run kept none. Its drift, end of day and lateness are read by those rules all the same.
 */
export function capturedUnderOtherRules(
  calendar: Pick<BusinessCalendar, 'cutoffOf' | 'rulesFor'>,
  businessDate: string,
  run: { cutoffAt: Date | null; cutoffTimezone: string | null },
): string | undefined {
  if (run.cutoffAt === null) return undefined;
  const now = calendar.rulesFor(businessDate);
  const zone = run.cutoffTimezone ?? now.timezone;
  if (run.cutoffAt.getTime() === calendar.cutoffOf(businessDate).getTime() && zone === now.timezone) return undefined;
  const local = new Date(wallClockOf(run.cutoffAt.getTime(), zone)).toISOString();
  return `cut-off ${local.slice(11, 16)} ${zone} as captured (${local.slice(0, 10)}; the calendar now says ${now.cutoff} ${now.timezone})`;
}
