import type { BusinessCalendar } from './business-calendar.js';

/** The instants of one capture (a run of the ledger) its drift is measured from. */
export interface CaptureInstants {
  /** When its gateway reads finished: what decides its date (null while running, after a failure). */
  readsFinishedAt: Date | null;
  startedAt: Date;
  /** The statement file a backfill imported the day from: its balances are the day's close. */
  source?: string | null;
}

/**
 * A capture's drift from `cutoffAt`, the cut-off of its business date as configured now, in
 * seconds (negative: before the cut-off): when its reads finished (else when it started) minus the
 * cut-off; 0 for a day imported from statements. The one rule for every place that shows drift
 * (`runs`, reports, the console, the night digest): computed where it is shown, never read back
 * from `snapshot_runs.cutoff_drift_seconds`, which keeps the drift from the cut-off in force at
 * capture time — after RECON_CUTOFF moved, that one is measured from a cut-off that no longer exists.
 *
 * @example driftFromCutoff(calendar.cutoffOf('2026-11-24'), { readsFinishedAt, startedAt }) // -578
 */
export function driftFromCutoff(cutoffAt: Date, capture: CaptureInstants): number {
  if (capture.source !== null && capture.source !== undefined) return 0;
  const at = capture.readsFinishedAt ?? capture.startedAt;
  return Math.round((at.getTime() - cutoffAt.getTime()) / 1000);
}

/** {@link driftFromCutoff} from the cut-off of `businessDate` in `calendar` (the current settings). */
export function currentDriftSeconds(calendar: Pick<BusinessCalendar, 'cutoffOf'>, businessDate: string, capture: CaptureInstants): number {
  return driftFromCutoff(calendar.cutoffOf(businessDate), capture);
}
