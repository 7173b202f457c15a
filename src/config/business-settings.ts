import { BusinessCalendar } from '../business-date/business-calendar.js';
import { checkScheduleFitsWindows, SlotSchedule } from '../scheduler/slot-schedule.js';
import { configProblems, describeIssue } from './config-problems.js';
import type { Config } from './config-types.js';

/**
 * Checks that every slot of RECON_SCHEDULE lies inside the capture window of its nearest
 * cut-off (a slot outside every window could capture no day's end). Walks a year of slots, so
 * only the worker calls it, before it starts. Throws a ConfigError (exit 2) saying which slot.
 */
export function assertScheduleFitsWindows(config: Config): void {
  const misfit = checkScheduleFitsWindows(new SlotSchedule(config.schedule, config.timezone), businessCalendarOf(config));
  if (misfit) throw configProblems([`RECON_SCHEDULE "${config.schedule}" ${misfit} (RECON_CUTOFF ${config.cutoff}).`]);
}

/** Business dates, cut-offs and capture windows as configured. */
export function businessCalendarOf(config: Pick<Config, 'timezone' | 'cutoff' | 'captureWindowMs'>): BusinessCalendar {
  return new BusinessCalendar({ timezone: config.timezone, cutoff: config.cutoff, captureWindowMs: config.captureWindowMs });
}

/** The tolerance, in minor units, for one currency. */
export function toleranceFor(config: Config, currency: string): bigint {
  return config.tolerance.byCurrency[currency] ?? config.tolerance.default;
}

/** The per-currency tolerances (RECON_TOLERANCE_JPY=0), adding a problem for each bad one. */
export function toleranceByCurrencyOf(env: Record<string, string | undefined>, problems: string[]): Record<string, bigint> {
  const toleranceByCurrency: Record<string, bigint> = {};
  for (const [key, value] of Object.entries(env)) {
    const match = /^RECON_TOLERANCE_(.+)$/.exec(key);
    if (!match || value === undefined) continue;
    const currency = match[1]!;
    if (!/^[A-Z]{3}$/.test(currency)) problems.push(`${key} must end in a three-letter currency code such as RECON_TOLERANCE_JPY`);
    else if (!/^\d{1,30}$/.test(value)) problems.push(describeIssue(key, value, 'must be a whole number of minor units, 0 or more'));
    else toleranceByCurrency[currency] = BigInt(value);
  }
  return toleranceByCurrency;
}
