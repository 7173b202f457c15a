import * as z from 'zod';
import { describeIssue } from './config-problems.js';
import { wholeNumber } from './schema-helpers.js';

/**
 * A threshold written as an amount in major units, a percentage, or both (`5.00,10%`): what
 * RECON_RENOTIFY_CHANGE and RECON_MATERIALITY take. Amounts stay decimal text (exact); a
 * percentage is kept as text too (`0.1`), compared in integers by its users.
 */
export interface AmountOrShare {
  /** Major units, such as "5.00"; undefined: no absolute part. */
  readonly amount: string | undefined;
  /** Percent, such as "10" or "0.1"; undefined: no relative part. */
  readonly percent: string | undefined;
}

/** Quiet nights (issue 45): when a problem is announced again, what is worth a person's time, caps and quiet hours. */
export interface QuietSettings {
  /** RECON_RENOTIFY_CHANGE and RECON_RENOTIFY_CHANGE_<CODE>: a move beyond either part re-announces a problem. */
  readonly renotifyChange: { readonly default: AmountOrShare; readonly byCurrency: Readonly<Record<string, AmountOrShare>> };
  /** RECON_MATERIALITY and RECON_MATERIALITY_<CODE>: a difference within either part is immaterial. Undefined default: none. */
  readonly materiality: { readonly default: AmountOrShare | undefined; readonly byCurrency: Readonly<Record<string, AmountOrShare>> };
  /** RECON_NOTIFY_MAX_PER_NIGHT: problem messages per channel and business date before the rest are folded. */
  readonly maxPerNight: number;
  /** RECON_QUIET_HOURS as minutes of the local day [start, end); undefined: none. */
  readonly quietHours: { readonly start: number; readonly end: number; readonly text: string } | undefined;
  /** RECON_QUIET_HOURS_CHANNELS. */
  readonly quietChannels: readonly string[];
  /** RECON_AUTO_PREPARE: whether settled, clean dates are prepared for sign-off by wallet-recon. */
  readonly autoPrepare: boolean;
}

const AMOUNT = /^\d{1,30}(\.\d{1,18})?$/;
const PERCENT = /^(\d{1,3}(\.\d{1,6})?)%$/;

/** Parses `5.00`, `10%` or `5.00,10%`; undefined when it is not one of these. */
export function parseAmountOrShare(text: string): AmountOrShare | undefined {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.length > 2) return undefined;
  let amount: string | undefined;
  let percent: string | undefined;
  for (const part of parts) {
    const share = PERCENT.exec(part);
    if (share && percent === undefined && Number(share[1]) <= 100) percent = share[1];
    else if (AMOUNT.test(part) && amount === undefined) amount = part;
    else return undefined;
  }
  return { amount, percent };
}

const FORMS = 'an amount in major units (5.00), a percentage (10%), or both (5.00,10%)';

const amountOrShare = (what: string) =>
  z
    .string()
    .optional()
    .refine((v) => v === undefined || parseAmountOrShare(v) !== undefined, `must be ${FORMS}: ${what}`);

/** The variables of quiet nights, part of the one environment schema. */
export const quietVariables = {
  RECON_RENOTIFY_CHANGE: amountOrShare('how far a problem\'s amount must move to be announced again').default('10%'),
  RECON_MATERIALITY: amountOrShare('a difference within it is immaterial'),
  RECON_NOTIFY_MAX_PER_NIGHT: wholeNumber('messages', 1, 100_000).default(50),
  RECON_QUIET_HOURS: z
    .string()
    .optional()
    .refine((v) => v === undefined || parseQuietHours(v) !== undefined, 'must be HH:MM-HH:MM in RECON_TIMEZONE, such as 22:00-07:00'),
  RECON_QUIET_HOURS_CHANNELS: z
    .string()
    .default('slack,email')
    .transform((v, ctx) => {
      const list = v.split(',').map((c) => c.trim()).filter(Boolean);
      if (!list.every((c) => ['webhook', 'slack', 'email'].includes(c))) {
        ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of channels: webhook, slack, email' });
        return z.NEVER;
      }
      return list;
    }),
  // A control choice: some controllers require a person to prepare every sign-off (maker-checker
  // with two people), so the system's own preparation can be switched off.
  RECON_AUTO_PREPARE: z.enum(['on', 'off'], { error: 'must be one of: on, off' }).default('on'),
};

type QuietValues = z.output<z.ZodObject<typeof quietVariables>>;

/** `22:00-07:00` as minutes of the local day; undefined when malformed or empty (start = end). */
export function parseQuietHours(text: string): { start: number; end: number; text: string } | undefined {
  const m = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/.exec(text.trim());
  if (!m) return undefined;
  const start = Number(m[1]) * 60 + Number(m[2]);
  const end = Number(m[3]) * 60 + Number(m[4]);
  return start === end ? undefined : { start, end, text: text.trim() };
}

/** Whether a variable name is one of the per-currency forms read here. */
export function isQuietCurrencyVariable(name: string): boolean {
  return /^RECON_(RENOTIFY_CHANGE|MATERIALITY)_/.test(name);
}

/** The quiet-night settings from validated values and the per-currency variables, adding a problem for each bad one. */
export function quietSettingsOf(v: QuietValues, env: Record<string, string | undefined>, problems: string[]): QuietSettings {
  const renotify: Record<string, AmountOrShare> = {};
  const materiality: Record<string, AmountOrShare> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const m = /^RECON_(RENOTIFY_CHANGE|MATERIALITY)_(.+)$/.exec(key);
    if (!m) continue;
    const currency = m[2]!;
    if (!/^[A-Z]{3}$/.test(currency)) {
      problems.push(`${key} must end in a three-letter currency code such as RECON_${m[1]}_EUR`);
      continue;
    }
    const parsed = parseAmountOrShare(value);
    if (parsed === undefined) problems.push(describeIssue(key, value, `must be ${FORMS}`));
    else (m[1] === 'MATERIALITY' ? materiality : renotify)[currency] = parsed;
  }
  return {
    renotifyChange: { default: parseAmountOrShare(v.RECON_RENOTIFY_CHANGE)!, byCurrency: renotify },
    materiality: { default: v.RECON_MATERIALITY === undefined ? undefined : parseAmountOrShare(v.RECON_MATERIALITY), byCurrency: materiality },
    maxPerNight: v.RECON_NOTIFY_MAX_PER_NIGHT,
    quietHours: v.RECON_QUIET_HOURS === undefined ? undefined : parseQuietHours(v.RECON_QUIET_HOURS),
    quietChannels: v.RECON_QUIET_HOURS_CHANNELS,
    autoPrepare: v.RECON_AUTO_PREPARE === 'on',
  };
}
