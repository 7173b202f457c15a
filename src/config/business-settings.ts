import { BusinessCalendar } from '../business-date/business-calendar.js';
import { checkScheduleFitsWindows, SlotSchedule } from '../scheduler/slot-schedule.js';
import { currencyDecimals, parseMajorAmount } from '../money/format-amount.js';
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

/**
 * Business dates, cut-offs and capture windows: the database's calendar (each date by the rules in
 * force for it) once the context read it, else as configured.
 */
export function businessCalendarOf(config: Pick<Config, 'timezone' | 'cutoff' | 'captureWindowMs' | 'calendarVersions'>): BusinessCalendar {
  const [first, ...later] = config.calendarVersions ?? [];
  if (first === undefined) return new BusinessCalendar({ timezone: config.timezone, cutoff: config.cutoff, captureWindowMs: config.captureWindowMs });
  return new BusinessCalendar(first, later);
}

/** How long after a date's cut-off its books and its bank statement may arrive: the deadlines in force for that date. */
export function deadlinesOf(config: Pick<Config, 'booksDeadlineMs' | 'statementDeadlineMs' | 'calendarVersions'>, businessDate: string): { booksDeadlineMs: number; statementDeadlineMs: number } {
  const version = [...(config.calendarVersions ?? [])].reverse().find((v) => businessDate >= v.effectiveFrom);
  return version ?? { booksDeadlineMs: config.booksDeadlineMs, statementDeadlineMs: config.statementDeadlineMs };
}

/** A non-negative decimal in major units, as tolerances are written: 0, 1, 0.01. */
export const MAJOR_AMOUNT = /^\d{1,30}(\.\d{1,18})?$/;

/**
 * The per-currency tolerances (RECON_TOLERANCE_JPY=1, in major units) and gateway decimals
 * (GATEWAY_AMOUNT_DECIMALS_IDR=0), adding a problem for each bad one.
 */
export function currencySettingsOf(
  env: Record<string, string | undefined>,
  problems: string[],
): { toleranceByCurrency: Record<string, string>; amountDecimals: Record<string, number> } {
  const toleranceByCurrency: Record<string, string> = {};
  const amountDecimals: Record<string, number> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const tolerance = /^RECON_TOLERANCE_(.+)$/.exec(key);
    if (tolerance && key !== 'RECON_TOLERANCE_BPS') {
      const currency = tolerance[1]!;
      if (!/^[A-Z]{3}$/.test(currency)) problems.push(`${key} must end in a three-letter currency code such as RECON_TOLERANCE_JPY`);
      else if (!MAJOR_AMOUNT.test(value)) problems.push(describeIssue(key, value, `must be an amount in major units of ${currency}, 0 or more, such as 0.01 or 1`));
      else toleranceByCurrency[currency] = value;
    }
    const decimals = /^GATEWAY_AMOUNT_DECIMALS_(.+)$/.exec(key);
    if (decimals) {
      const currency = decimals[1]!;
      const problem = checkGatewayDecimals(currency, value);
      if (problem) problems.push(describeIssue(key, value, problem));
      else amountDecimals[currency] = Number(value);
    }
  }
  for (const [currency, value] of Object.entries(toleranceByCurrency)) {
    const decimals = currencyDecimals(currency) ?? amountDecimals[currency];
    if (decimals !== undefined && parseMajorAmount(value, decimals) === undefined) {
      problems.push(describeIssue(`RECON_TOLERANCE_${currency}`, value, `has more decimals than ${currency} has (${decimals}); write it in whole ${decimals === 0 ? 'units' : `units with at most ${decimals} decimals`}`));
    }
  }
  return { toleranceByCurrency, amountDecimals };
}

/**
 * Why GATEWAY_AMOUNT_DECIMALS_<currency> (or an accounts file's amountDecimals) cannot be
 * `value`, or undefined when it can. More decimals than ISO 4217 gives the currency is refused:
 * books and reports are kept in the currency's ISO scale, and such amounts could only be
 * compared with them after rounding.
 */
export function checkGatewayDecimals(currency: string, value: string): string | undefined {
  if (!/^[A-Z]{3}$/.test(currency)) return `must end in a three-letter currency code such as GATEWAY_AMOUNT_DECIMALS_IDR`;
  if (!/^\d{1,2}$/.test(value) || Number(value) > 18) return 'must be a whole number of decimals from 0 to 18 (0: the gateway sends whole units)';
  const iso = currencyDecimals(currency);
  if (iso !== null && Number(value) > iso) return `is more decimals than ${currency} has in ISO 4217 (${iso}): such amounts could not be compared with the books without rounding`;
  return undefined;
}

/**
 * A tolerance written in major units, cut to `decimals` places: the finest step a currency has.
 * Rounded down, so it never allows more than was stated: ("0.01", 0) → "0", ("1.5", 0) → "1",
 * ("0.015", 2) → "0.01"; a tolerance that fits is returned as written.
 */
export function toleranceAtDecimals(text: string, decimals: number): string {
  const [whole, fraction = ''] = text.split('.');
  const kept = fraction.replace(/0+$/, '').slice(0, decimals);
  return fraction.replace(/0+$/, '').length <= decimals ? text : kept.length === 0 ? whole! : `${whole}.${kept}`;
}

/**
 * The tolerance for one currency as an integer at `decimals` places (the currency's scale), for
 * a balance of `balance` at the same scale: the larger of the absolute tolerance
 * (RECON_TOLERANCE_<CODE>, else RECON_TOLERANCE) and RECON_TOLERANCE_BPS of |balance|. Both are
 * rounded down, so they never allow more than was stated: a tolerance with more decimals than the
 * currency has is cut to its minor unit (RECON_TOLERANCE=0.01 is an exact match for JPY, 1.5 is
 * 1 yen); reports say so in their header.
 *
 * @example toleranceFor(config, 'EUR', 2) // RECON_TOLERANCE=0.01 → 1n
 */
export function toleranceFor(config: Pick<Config, 'tolerance'>, currency: string, decimals: number, balance = 0n): bigint {
  const text = config.tolerance.byCurrency[currency] ?? config.tolerance.default;
  const absolute = parseMajorAmount(toleranceAtDecimals(text, decimals), decimals)!;
  const magnitude = balance < 0n ? -balance : balance;
  const relative = (BigInt(config.tolerance.bps) * magnitude) / 10_000n;
  return relative > absolute ? relative : absolute;
}
