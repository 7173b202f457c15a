import * as z from 'zod';
import { MAX_CAPTURE_WINDOW_MS } from '../business-date/business-calendar.js';
import { parseDuration } from '../business-date/duration.js';
import { AUTH_SCHEME_PATTERN } from '../gateway/base-url.js';
import { checkCronExpression } from '../scheduler/slot-schedule.js';
import { booksVariables } from './books-settings.js';
import { consoleVariables } from './console-settings.js';
import { databaseTimeoutVariables } from './database-timeouts.js';
import { metricsVariables } from './metrics-settings.js';
import { notificationVariables } from './notification-settings.js';
import { quietVariables } from './quiet-settings.js';
import { positiveInt, trueOrFalse, wholeNumber } from './schema-helpers.js';

/** Every variable wallet-recon reads (besides the per-account ones an accounts file names), with its rule and default. */
export const envSchema = z.object({
  DATABASE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || isPostgresUrl(v), 'must be a postgres:// or postgresql:// URL'),
  DATABASE_PASSWORD: z.string().optional(),
  RECON_DATA_DIR: z.string().min(1).optional(),
  ...databaseTimeoutVariables,
  GATEWAY_ENV: z.enum(['live', 'sandbox'], { error: 'must be one of: live, sandbox' }).default('sandbox'),
  GATEWAY_LIVE_URL: z.string().optional(),
  GATEWAY_SANDBOX_URL: z.string().optional(),
  GATEWAY_API_KEY: z.string().min(1).optional(),
  GATEWAY_API_SECRET: z.string().min(1).optional(),
  GATEWAY_TIMEOUT_MS: positiveInt(600_000, 'milliseconds').default(30_000),
  GATEWAY_CONCURRENCY: positiveInt(256, 'requests at once').default(8),
  // The gateway refuses a larger page (400: per_page must be an integer from 1 to 100).
  GATEWAY_PER_PAGE: positiveInt(100, 'wallets per page').default(100),
  GATEWAY_MAX_RPS: z.coerce.number({ error: 'must be a number of requests per second above 0, such as 5 or 0.5' }).positive({ error: 'must be a number of requests per second above 0, such as 5 or 0.5' }).optional(),
  GATEWAY_AUTH_SCHEME: z
    .string()
    .regex(AUTH_SCHEME_PATTERN, 'must be a single word such as Bearer, Token or empty for a bare token')
    .default('Bearer'),
  GATEWAY_RETRY_ATTEMPTS: wholeNumber('retries', 0, 20).default(4),
  GATEWAY_MAX_RETRY_AFTER_MS: positiveInt(3_600_000, 'milliseconds').default(60_000),
  GATEWAY_RETRY_BASE_DELAY_MS: positiveInt(60_000, 'milliseconds').default(500),
  GATEWAY_MAX_PAGES: positiveInt(1_000_000, 'pages').default(10_000),
  GATEWAY_AMOUNT_UNIT: z.enum(['minor', 'major'], { error: 'must be one of: minor (ISO 4217 minor units, such as cents), major (whole units)' }).default('minor'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    error: 'must be one of: fatal, error, warn, info, debug, trace, silent',
  }).default('info'),
  RECON_TIMEZONE: z.string().default('UTC').refine(isTimeZone, 'must be an IANA time zone such as UTC or Europe/Berlin'),
  RECON_LOCALE: z.string().optional().refine((v) => v === undefined || isLocale(v), 'must be a BCP 47 locale such as en-US, en-GB or de-DE'),
  RECON_SCHEDULE: z
    .string()
    .default('55 23 * * *')
    .superRefine((v, ctx) => {
      const problem = checkCronExpression(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  RECON_CUTOFF: z
    .string()
    .default('00:00')
    .refine((v) => /^([01]\d|2[0-3]):[0-5]\d$/.test(v), 'must be a local time HH:MM from 00:00 to 23:59, such as 00:00 or 17:30'),
  RECON_CAPTURE_WINDOW: z
    .string()
    .default('3h')
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === undefined || ms < 1000 || ms > MAX_CAPTURE_WINDOW_MS) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration from 1s to 11h, such as 90s, 45m or 3h (windows either side of two cut-offs must not overlap)' });
        return z.NEVER;
      }
      return ms;
    }),
  RECON_RETRY_DELAYS: z
    .string()
    .default('5m,10m,20m,30m')
    .transform((v, ctx) => {
      const delays = v.split(',').map((part) => parseDuration(part));
      if (delays.some((d) => d === undefined || d < 1000 || d > 86_400_000)) {
        ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of durations from 1s to 24h, such as 5m,10m,20m,30m' });
        return z.NEVER;
      }
      return delays as number[];
    }),
  RECON_BOOKS_DEADLINE: z
    .string()
    .default('12h')
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === undefined || ms < 1000 || ms > 31 * 86_400_000) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration after the cut-off from 1s to 31d, such as 12h or 2d (books that have not arrived by then are missed)' });
        return z.NEVER;
      }
      return ms;
    }),
  RECON_QUEUE_SCHEMA: z
    .string()
    .default('pgboss')
    .refine((v) => /^[a-z_][a-z0-9_]{0,62}$/.test(v) && v !== 'public', 'must be a lower-case PostgreSQL schema name other than public, such as pgboss'),
  RECON_QUEUE_JOB_EXPIRY: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const ms = parseDuration(v);
      if (ms === undefined || ms < 2000 || ms > 3_600_000) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration from 2s to 1h, such as 90s or 5m (how long a capture job may run before another worker takes it)' });
        return z.NEVER;
      }
      return ms;
    }),
  RECON_STATEMENT_DEADLINE: z
    .string()
    .default('36h')
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === undefined || ms < 1000 || ms > 31 * 86_400_000) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration after the cut-off from 1s to 31d, such as 36h or 3d (a bank account whose statement has not arrived by then has no_statement)' });
        return z.NEVER;
      }
      return ms;
    }),
  RECON_STATEMENT_MAX_BYTES: wholeNumber('bytes', 1024, 64 * 1024 * 1024 * 1024).default(256 * 1024 * 1024),
  RECON_ACCOUNTS_FILE: z.string().min(1).optional(),
  RECON_ACCOUNT_CONCURRENCY: positiveInt(64, 'accounts at once').default(2),
  RECON_MAX_CONSECUTIVE_FAILURES: positiveInt(1000, 'missed dates').default(3),
  RECON_CATCH_UP: trueOrFalse('true'),
  RECON_SHUTDOWN_GRACE_MS: wholeNumber('milliseconds', 0, 600_000).default(5_000),
  RECON_TOLERANCE: z
    .string()
    .default('0')
    .refine((v) => /^\d{1,30}(\.\d{1,18})?$/.test(v), 'must be an amount in major units, 0 or more, such as 0.01 or 1'),
  RECON_TOLERANCE_BPS: wholeNumber('basis points (1 bps = 0.01% of the balance)', 0, 10_000).default(0),
  RECON_ACTOR: z.string().trim().min(1).max(200).optional(),
  RECON_SIGNING_KEY_FILE: z.string().min(1).optional(),
  RECON_SIGNING_PUBLIC_KEY_FILE: z.string().min(1).optional(),
  RECON_SIGNING_SINCE: z
    .string()
    .optional()
    .refine((v) => v === undefined || (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v))), 'must be an ISO date-time with its offset, such as 2026-12-01T00:00:00Z'),
  ...notificationVariables,
  ...quietVariables,
  ...metricsVariables,
  ...booksVariables,
  ...consoleVariables,
});

export type EnvValues = z.output<typeof envSchema>;

function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'postgres:' || url.protocol === 'postgresql:';
  } catch {
    return false;
  }
}

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** A well-formed BCP 47 tag the runtime has number formats for (de-DE yes, "german" or xx-XX no). */
function isLocale(value: string): boolean {
  try {
    return Intl.NumberFormat.supportedLocalesOf(value).length > 0;
  } catch {
    return false;
  }
}
