import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseEnv } from 'node:util';
import envPaths from 'env-paths';
import { z } from 'zod';
import { BusinessCalendar, MAX_CAPTURE_WINDOW_MS } from './business-date/business-calendar.js';
import { DATA_DIR_MARKER } from './db/embedded-data-dir.js';
import { parseDuration } from './business-date/duration.js';
import { ConfigError } from './errors.js';
import { AUTH_SCHEME_PATTERN, checkBaseUrl, parseOutgoingUrl } from './gateway/base-url.js';
import { maskUrlPasswords } from './logger.js';
import { checkCronExpression, checkScheduleFitsWindows, SlotSchedule } from './scheduler/slot-schedule.js';
import { registerSecretValue, Secret } from './secret.js';

/**
 * Environment variables holding secrets. Each may instead be given as `<NAME>_FILE`, the path of
 * a file holding the value (Docker and Kubernetes secrets); values are never echoed in a message
 * and are removed from the process environment once read. The accounts file's `apiSecretEnv`
 * variables get the same treatment. A new secret variable only needs its name added here.
 */
export const SECRET_VARIABLES: readonly string[] = [
  'GATEWAY_API_SECRET',
  'DATABASE_URL',
  'DATABASE_PASSWORD',
  // Notification and metrics endpoints: a webhook or Slack URL is itself a credential, an SMTP or
  // Pushgateway URL may carry a password.
  'RECON_WEBHOOK_URL',
  'RECON_WEBHOOK_SECRET',
  'RECON_SLACK_WEBHOOK_URL',
  'RECON_SMTP_URL',
  'RECON_PUSHGATEWAY_URL',
];

/** The secret the sandbox emulator expects in Secret-Key (or SANDBOX_API_SECRET_FILE). */
export const SANDBOX_SECRET_VARIABLE = 'SANDBOX_API_SECRET';

/** A secret file holds one value; anything larger is the wrong file. */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

export type Environment = 'live' | 'sandbox';
export const ENVIRONMENTS: readonly Environment[] = ['live', 'sandbox'];

/** The emulator's default address: the sandbox base URL when none is configured. */
export const DEFAULT_SANDBOX_URL = 'http://127.0.0.1:4010';

export interface GatewaySettings {
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly perPage: number;
  readonly maxRps: number | undefined;
  readonly authScheme: string;
  readonly retryAttempts: number;
  readonly maxRetryAfterMs: number;
  readonly retryBaseDelayMs: number;
  readonly maxPages: number;
}

/** One merchant account: where its gateway is and which credentials it uses. */
export interface AccountConfig {
  readonly name: string;
  readonly environment: Environment;
  readonly baseUrl: string | undefined;
  readonly apiKey: string | undefined;
  readonly apiSecret: Secret | undefined;
  /** Where the credentials come from, for messages ("GATEWAY_API_KEY"). */
  readonly apiKeyEnv: string;
  readonly apiSecretEnv: string;
}

/** How long a database call may take before the attempt fails (PostgreSQL server sessions). */
export interface DatabaseTimeouts {
  readonly connectMs: number;
  readonly statementMs: number;
  readonly idleInTransactionMs: number;
}

export interface Config {
  readonly databaseUrl: Secret | undefined;
  /** Names of the variables that held this configuration's secrets (removed from the environment after start-up). */
  readonly secretVariables: readonly string[];
  readonly dataDir: string;
  /** PostgreSQL server: DATABASE_CONNECT_TIMEOUT, DATABASE_STATEMENT_TIMEOUT, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT. */
  readonly databaseTimeouts: DatabaseTimeouts;
  /** Where dataDir came from: RECON_DATA_DIR, an existing checkout's .data/ (said with a notice), or the user's data directory. */
  readonly dataDirSource: 'RECON_DATA_DIR' | 'checkout' | 'user-data-dir';
  readonly environment: Environment;
  readonly liveUrl: string | undefined;
  readonly sandboxUrl: string;
  readonly gateway: GatewaySettings;
  readonly logLevel: string;
  /** Whether LOG_LEVEL was set, rather than defaulted (the demo is quieter by default). */
  readonly logLevelSet: boolean;
  readonly timezone: string;
  readonly schedule: string;
  /** Local time (HH:MM in `timezone`) at which a business date ends. */
  readonly cutoff: string;
  /** How far either side of a cut-off a capture still counts as that date's end of day. */
  readonly captureWindowMs: number;
  /** Waits between capture attempts within a window; the last one repeats. */
  readonly retryDelaysMs: readonly number[];
  readonly accounts: readonly AccountConfig[];
  readonly accountConcurrency: number;
  readonly maxConsecutiveFailures: number;
  readonly catchUp: boolean;
  readonly shutdownGraceMs: number;
  /** Tolerance in minor units: the default and per-currency overrides (RECON_TOLERANCE_JPY). */
  readonly tolerance: { readonly default: bigint; readonly byCurrency: Readonly<Record<string, bigint>> };
  /** Who manual case actions are recorded as when --by is not given (RECON_ACTOR); else the OS user. */
  readonly actor: string | undefined;
  readonly notifications: NotificationSettings;
  readonly metrics: MetricsSettings;
}

/** Where events are sent; each channel is optional (absent: not configured). */
export interface NotificationSettings {
  readonly webhook: { readonly url: Secret; readonly secret: Secret } | undefined;
  readonly slack: { readonly url: Secret } | undefined;
  readonly email: { readonly smtpUrl: Secret; readonly from: string; readonly to: readonly string[] } | undefined;
  /** Attempts per notification and channel before it is marked failed. */
  readonly maxAttempts: number;
}

export interface MetricsSettings {
  /** Port of the worker's /metrics and /healthz; undefined: not served. */
  readonly port: number | undefined;
  readonly host: string;
  /** Whether per-account series carry an `account` label. */
  readonly perAccount: boolean;
  /** Where one-shot commands push their metrics; undefined: not pushed. */
  readonly pushgatewayUrl: Secret | undefined;
}

/**
 * A whole number of `unit` from `min` to `max`, refused in the operator's words
 * ("must be a whole number of milliseconds from 1 to 600000") rather than the validator's.
 */
const wholeNumber = (unit: string, min: number, max: number) =>
  z.string().transform((v, ctx) => {
    const n = /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number of ${unit} from ${min} to ${max}` });
      return z.NEVER;
    }
    return n;
  });
const positiveInt = (max: number, unit: string) => wholeNumber(unit, 1, max);

/** A database timeout: a duration from 1s to 1h (0 is refused: a call must never wait forever). */
const databaseTimeout = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === undefined || ms < 1000 || ms > 3_600_000) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration from 1s to 1h, such as 10s, 90s or 5m' });
        return z.NEVER;
      }
      return ms;
    });

const envSchema = z.object({
  DATABASE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || isPostgresUrl(v), 'must be a postgres:// or postgresql:// URL'),
  DATABASE_PASSWORD: z.string().optional(),
  RECON_DATA_DIR: z.string().min(1).optional(),
  // A database call that hangs (a black-holed server, a lock never released) fails the attempt,
  // which the night retries, instead of holding the worker past its capture window.
  DATABASE_CONNECT_TIMEOUT: databaseTimeout('10s'),
  DATABASE_STATEMENT_TIMEOUT: databaseTimeout('60s'),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT: databaseTimeout('60s'),
  GATEWAY_ENV: z.enum(['live', 'sandbox'], { error: 'must be one of: live, sandbox' }).default('sandbox'),
  GATEWAY_LIVE_URL: z.string().optional(),
  GATEWAY_SANDBOX_URL: z.string().optional(),
  GATEWAY_API_KEY: z.string().min(1).optional(),
  GATEWAY_API_SECRET: z.string().min(1).optional(),
  GATEWAY_TIMEOUT_MS: positiveInt(600_000, 'milliseconds').default(30_000),
  GATEWAY_CONCURRENCY: positiveInt(256, 'requests at once').default(8),
  GATEWAY_PER_PAGE: positiveInt(10_000, 'wallets per page').default(100),
  GATEWAY_MAX_RPS: z.coerce.number({ error: 'must be a number of requests per second above 0, such as 5 or 0.5' }).positive({ error: 'must be a number of requests per second above 0, such as 5 or 0.5' }).optional(),
  GATEWAY_AUTH_SCHEME: z
    .string()
    .regex(AUTH_SCHEME_PATTERN, 'must be a single word such as Bearer, Token or empty for a bare token')
    .default('Bearer'),
  GATEWAY_RETRY_ATTEMPTS: wholeNumber('retries', 0, 20).default(4),
  GATEWAY_MAX_RETRY_AFTER_MS: positiveInt(3_600_000, 'milliseconds').default(60_000),
  GATEWAY_RETRY_BASE_DELAY_MS: positiveInt(60_000, 'milliseconds').default(500),
  GATEWAY_MAX_PAGES: positiveInt(1_000_000, 'pages').default(10_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    error: 'must be one of: fatal, error, warn, info, debug, trace, silent',
  }).default('info'),
  RECON_TIMEZONE: z.string().default('UTC').refine(isTimeZone, 'must be an IANA time zone such as UTC or Europe/Berlin'),
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
  RECON_ACCOUNTS_FILE: z.string().min(1).optional(),
  RECON_ACCOUNT_CONCURRENCY: positiveInt(64, 'accounts at once').default(2),
  RECON_MAX_CONSECUTIVE_FAILURES: positiveInt(1000, 'missed dates').default(3),
  RECON_CATCH_UP: z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], { error: 'must be true or false' })
    .default('true')
    .transform((v) => ['1', 'true', 'yes', 'on'].includes(v)),
  RECON_SHUTDOWN_GRACE_MS: wholeNumber('milliseconds', 0, 600_000).default(5_000),
  RECON_TOLERANCE: z
    .string()
    .default('0')
    .refine((v) => /^\d{1,30}$/.test(v), 'must be a whole number of minor units, 0 or more'),
  RECON_ACTOR: z.string().trim().min(1).max(200).optional(),
  // Notifications and metrics.
  RECON_WEBHOOK_URL: z.string().optional(),
  RECON_WEBHOOK_SECRET: z
    .string()
    .optional()
    .refine((v) => v === undefined || isWebhookSecret(v), 'must be whsec_ followed by the base64 of 24 to 64 random bytes (for example: echo "whsec_$(openssl rand -base64 32)")'),
  RECON_SLACK_WEBHOOK_URL: z.string().optional(),
  RECON_SMTP_URL: z.string().optional(),
  RECON_MAIL_FROM: z.string().optional().refine((v) => v === undefined || isMailAddress(v), 'must be an e-mail address such as recon@example.com or "Recon <recon@example.com>"'),
  RECON_MAIL_TO: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const list = v.split(',').map((a) => a.trim()).filter(Boolean);
      if (list.length === 0 || !list.every(isMailAddress)) {
        ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of e-mail addresses such as finance@example.com,ops@example.com' });
        return z.NEVER;
      }
      return list;
    }),
  RECON_NOTIFY_MAX_ATTEMPTS: positiveInt(100, 'attempts').default(10),
  RECON_METRICS_PORT: z
    .string()
    .optional()
    .refine((v) => v === undefined || (/^\d{1,5}$/.test(v) && Number(v) >= 1 && Number(v) <= 65535), 'must be a port number from 1 to 65535')
    .transform((v) => (v === undefined ? undefined : Number(v))),
  RECON_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  RECON_METRICS_PER_ACCOUNT: z
    .enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'], { error: 'must be true or false' })
    .default('true')
    .transform((v) => ['1', 'true', 'yes', 'on'].includes(v)),
  RECON_PUSHGATEWAY_URL: z.string().optional(),
});

const accountsFileSchema = z.object({
  accounts: z
    .array(
      z
        .object({
          name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'must be letters, digits, ".", "_" or "-"'),
          environment: z.enum(['live', 'sandbox'], { error: 'must be one of: live, sandbox' }),
          apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must name an environment variable'),
          apiSecretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must name an environment variable'),
          baseUrl: z.string().optional(),
        })
        .strict(),
    )
    .min(1, 'must list at least one account'),
});

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

function readDotEnv(cwd: string): Record<string, string> {
  const file = path.join(cwd, '.env');
  if (!existsSync(file)) return {};
  try {
    return parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch (error) {
    throw new ConfigError(`Could not read ${file}: ${(error as Error).message}`, [], { cause: error });
  }
}

function describeIssue(variable: string, value: string | undefined, message: string): string {
  const shown = value === undefined ? '' : SECRET_VARIABLES.includes(variable) ? ' (value hidden)' : `, got "${maskUrlPasswords(value)}"`;
  return `${variable} ${message}${shown}`;
}

/**
 * Fills each secret variable given as `<NAME>_FILE` from its file, in `env` (a private copy).
 * Returns the problems: both forms set, a file that cannot be read, is empty or is too large.
 * Only the path is ever quoted, never the content.
 */
function resolveSecretFiles(env: Record<string, string | undefined>, names: Iterable<string>, cwd: string): string[] {
  const problems: string[] = [];
  for (const name of new Set(names)) {
    const fileVariable = `${name}_FILE`;
    const file = env[fileVariable];
    if (file === undefined) continue;
    if (env[name] !== undefined) {
      problems.push(`${name} and ${fileVariable} are both set; set only one of them (the file is the safer place for a secret)`);
      continue;
    }
    const where = `${fileVariable} (${file})`;
    try {
      const fullPath = path.resolve(cwd, file);
      if (statSync(fullPath).size > MAX_SECRET_FILE_BYTES) {
        problems.push(`${where} is larger than 64 KiB; it should hold only the value of ${name}`);
        continue;
      }
      // Files written by `echo` or an editor end in a line break that is not part of the secret.
      const value = readFileSync(fullPath, 'utf8').replace(/[\r\n]+$/, '');
      if (value === '') problems.push(`${where} is empty; it should hold the value of ${name}`);
      else env[name] = value;
    } catch (error) {
      problems.push(`${where} could not be read: ${describeFileError(error)}`);
    }
  }
  return problems;
}

function describeFileError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'there is no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied (the file must be readable by the user wallet-recon runs as)';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  return code ?? 'unknown error';
}

/**
 * Removes the configuration's secret variables from the environment (by default the process's),
 * so that a diagnostic report or a child process does not carry them. Call once the
 * configuration is loaded; later loads must read from a copy taken before (`copyEnvironment`).
 */
export function removeSecretsFromEnvironment(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  for (const name of config.secretVariables) delete env[name];
}

/**
 * The YAML parser, loaded only when an accounts file is YAML: every command reads the
 * configuration at start, and loading the parser cost each of them ~10 ms it rarely needs.
 */
function parseYaml(text: string): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
}

/** A private copy of the environment (by default the process's), to load the configuration from. */
export function copyEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env };
}

/**
 * The secret the sandbox emulator expects, from SANDBOX_API_SECRET or SANDBOX_API_SECRET_FILE
 * (never from the command line, where `ps` shows it); undefined when neither is set.
 * Throws ConfigError for an unreadable file or both forms set.
 */
export function loadSandboxSecret(options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): string | undefined {
  const source = options.env ?? process.env;
  const env: Record<string, string | undefined> = { ...source };
  for (const key of Object.keys(env)) if (env[key] === '') env[key] = undefined;
  const problems = resolveSecretFiles(env, [SANDBOX_SECRET_VARIABLE], options.cwd ?? process.cwd());
  if (problems.length > 0) throw configProblems(problems);
  delete source[SANDBOX_SECRET_VARIABLE];
  return env[SANDBOX_SECRET_VARIABLE];
}

function configProblems(problems: string[]): ConfigError {
  // One problem reads as one sentence on one line; several as a list.
  if (problems.length === 1) return new ConfigError(`${problems[0]!.replace(/[.]$/, '')}.`, problems);
  return new ConfigError(`The configuration has ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.map((p) => `  - ${p}`).join('\n')}`, problems);
}

export interface LoadConfigOptions {
  /** The environment to read; defaults to process.env. A .env file in `cwd` fills what it lacks. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Skip reading `.env` (tests). */
  ignoreDotEnv?: boolean;
  /** Values that win over the environment (the demo points the gateway at its own emulator). */
  overrides?: Record<string, string | undefined>;
}

/**
 * Reads and validates the whole environment once. Every problem is collected into one
 * ConfigError (exit code 2); secret values are never repeated in it.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const cwd = options.cwd ?? process.cwd();
  const base = options.env ?? process.env;
  const env: Record<string, string | undefined> = { ...(options.ignoreDotEnv ? {} : readDotEnv(cwd)), ...base, ...options.overrides };
  for (const key of Object.keys(env)) if (env[key] === '') env[key] = undefined;
  // An empty auth scheme is meaningful (bare token), so keep it when explicitly set.
  if (base.GATEWAY_AUTH_SCHEME === '') env.GATEWAY_AUTH_SCHEME = '';

  const problems: string[] = resolveSecretFiles(env, SECRET_VARIABLES, cwd);
  // Parsed once per process: zod's compiled fast path would cost more to build than it saves.
  const parsed = envSchema.safeParse(env, { jitless: true });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const variable = String(issue.path[0]);
      problems.push(describeIssue(variable, env[variable], issue.message));
    }
  }

  for (const variable of ['GATEWAY_LIVE_URL', 'GATEWAY_SANDBOX_URL'] as const) {
    const value = env[variable];
    const problem = value === undefined ? undefined : checkBaseUrl(value);
    if (problem) problems.push(describeIssue(variable, value, problem));
  }

  problems.push(...notificationProblems(env));

  const toleranceByCurrency: Record<string, bigint> = {};
  for (const [key, value] of Object.entries(env)) {
    const match = /^RECON_TOLERANCE_(.+)$/.exec(key);
    if (!match || value === undefined) continue;
    const currency = match[1]!;
    if (!/^[A-Z]{3}$/.test(currency)) problems.push(`${key} must end in a three-letter currency code such as RECON_TOLERANCE_JPY`);
    else if (!/^\d{1,30}$/.test(value)) problems.push(describeIssue(key, value, 'must be a whole number of minor units, 0 or more'));
    else toleranceByCurrency[currency] = BigInt(value);
  }

  const accountsResult = parsed.success ? resolveAccounts(env, cwd, parsed.data.GATEWAY_ENV) : { accounts: [], problems: [] };
  problems.push(...accountsResult.problems);
  const databaseUrl = parsed.success ? resolveDatabaseUrl(parsed.data.DATABASE_URL, parsed.data.DATABASE_PASSWORD, problems) : undefined;

  if (!parsed.success || problems.length > 0) {
    throw configProblems(problems);
  }
  const v = parsed.data;
  return deepFreeze({
    databaseUrl,
    secretVariables: [...new Set([...SECRET_VARIABLES, ...accountsResult.accounts.map((a) => a.apiSecretEnv)])],
    ...resolveDataDir(v.RECON_DATA_DIR, cwd),
    databaseTimeouts: {
      connectMs: v.DATABASE_CONNECT_TIMEOUT,
      statementMs: v.DATABASE_STATEMENT_TIMEOUT,
      idleInTransactionMs: v.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT,
    },
    environment: v.GATEWAY_ENV,
    liveUrl: v.GATEWAY_LIVE_URL,
    sandboxUrl: v.GATEWAY_SANDBOX_URL ?? DEFAULT_SANDBOX_URL,
    gateway: {
      timeoutMs: v.GATEWAY_TIMEOUT_MS,
      concurrency: v.GATEWAY_CONCURRENCY,
      perPage: v.GATEWAY_PER_PAGE,
      maxRps: v.GATEWAY_MAX_RPS,
      authScheme: v.GATEWAY_AUTH_SCHEME,
      retryAttempts: v.GATEWAY_RETRY_ATTEMPTS,
      maxRetryAfterMs: v.GATEWAY_MAX_RETRY_AFTER_MS,
      retryBaseDelayMs: v.GATEWAY_RETRY_BASE_DELAY_MS,
      maxPages: v.GATEWAY_MAX_PAGES,
    },
    logLevel: v.LOG_LEVEL,
    logLevelSet: env.LOG_LEVEL !== undefined,
    timezone: v.RECON_TIMEZONE,
    schedule: v.RECON_SCHEDULE,
    cutoff: v.RECON_CUTOFF,
    captureWindowMs: v.RECON_CAPTURE_WINDOW,
    retryDelaysMs: v.RECON_RETRY_DELAYS,
    accounts: accountsResult.accounts,
    accountConcurrency: v.RECON_ACCOUNT_CONCURRENCY,
    maxConsecutiveFailures: v.RECON_MAX_CONSECUTIVE_FAILURES,
    catchUp: v.RECON_CATCH_UP,
    shutdownGraceMs: v.RECON_SHUTDOWN_GRACE_MS,
    tolerance: { default: BigInt(v.RECON_TOLERANCE), byCurrency: toleranceByCurrency },
    actor: v.RECON_ACTOR,
    notifications: {
      webhook: v.RECON_WEBHOOK_URL === undefined ? undefined : { url: new Secret(v.RECON_WEBHOOK_URL), secret: new Secret(v.RECON_WEBHOOK_SECRET!) },
      slack: v.RECON_SLACK_WEBHOOK_URL === undefined ? undefined : { url: new Secret(v.RECON_SLACK_WEBHOOK_URL) },
      email: v.RECON_SMTP_URL === undefined ? undefined : { smtpUrl: new Secret(v.RECON_SMTP_URL), from: v.RECON_MAIL_FROM!, to: v.RECON_MAIL_TO! },
      maxAttempts: v.RECON_NOTIFY_MAX_ATTEMPTS,
    },
    metrics: {
      port: v.RECON_METRICS_PORT,
      host: v.RECON_METRICS_HOST,
      perAccount: v.RECON_METRICS_PER_ACCOUNT,
      pushgatewayUrl: v.RECON_PUSHGATEWAY_URL === undefined ? undefined : new Secret(v.RECON_PUSHGATEWAY_URL),
    },
  });
}

function isWebhookSecret(value: string): boolean {
  const base64 = value.startsWith('whsec_') ? value.slice('whsec_'.length) : value;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return false;
  const bytes = Buffer.from(base64, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

function isMailAddress(value: string): boolean {
  return /^[^\s@<>]+@[^\s@<>]+$/.test(value) || /^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(value.trim());
}

/** Channels configured by halves, and endpoint URLs that would send credentials in clear. */
function notificationProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const pairs: Array<[string, string[]]> = [
    ['RECON_WEBHOOK_URL', ['RECON_WEBHOOK_SECRET']],
    ['RECON_SMTP_URL', ['RECON_MAIL_FROM', 'RECON_MAIL_TO']],
  ];
  for (const [main, needed] of pairs) {
    for (const other of needed) {
      if (env[main] !== undefined && env[other] === undefined) problems.push(`${other} is required when ${main} is set`);
      if (env[main] === undefined && env[other] !== undefined) problems.push(`${other} is set but ${main} is not: set both, or neither`);
    }
  }
  for (const variable of ['RECON_WEBHOOK_URL', 'RECON_SLACK_WEBHOOK_URL', 'RECON_PUSHGATEWAY_URL'] as const) {
    const value = env[variable];
    const problem = value === undefined ? undefined : checkEndpointUrl(value);
    if (problem) problems.push(describeIssue(variable, value, problem));
  }
  const smtp = env.RECON_SMTP_URL;
  if (smtp !== undefined && !/^smtps?:\/\/[^/]+/.test(smtp)) problems.push(describeIssue('RECON_SMTP_URL', smtp, 'must be an smtp:// or smtps:// URL such as smtps://user:password@smtp.example.com:465'));
  return problems;
}

/** Checks an outgoing endpoint (webhook, Slack, Pushgateway): the gateway's rule, never naming the host (the URL is a secret). */
export function checkEndpointUrl(value: string): string | undefined {
  const parsed = parseOutgoingUrl(value, { why: 'what is sent cannot be read or changed on the way', nameHost: false });
  return 'problem' in parsed ? parsed.problem : undefined;
}

/** The user's data directory for wallet-recon: `$XDG_DATA_HOME/wallet-recon`, else `~/.local/share/wallet-recon` (Linux). */
export function userDataRoot(): string {
  return envPaths('wallet-recon', { suffix: '' }).data;
}

/**
 * The embedded database's folder: RECON_DATA_DIR; else the `.data/` an earlier version created in
 * this folder, so an existing checkout never silently starts a fresh database; else the user's
 * data directory, whatever folder a cron job starts in.
 */
function resolveDataDir(configured: string | undefined, cwd: string): Pick<Config, 'dataDir' | 'dataDirSource'> {
  if (configured !== undefined) return { dataDir: path.resolve(cwd, configured), dataDirSource: 'RECON_DATA_DIR' };
  const checkout = path.join(cwd, '.data');
  if (existsSync(path.join(checkout, DATA_DIR_MARKER)) || existsSync(path.join(checkout, 'PG_VERSION'))) return { dataDir: checkout, dataDirSource: 'checkout' };
  return { dataDir: path.join(userDataRoot(), 'database'), dataDirSource: 'user-data-dir' };
}

/**
 * The connection string, with DATABASE_PASSWORD put into it when given separately (so one Docker
 * secret serves PostgreSQL and wallet-recon). Its password is masked in logs by value too.
 */
function resolveDatabaseUrl(url: string | undefined, password: string | undefined, problems: string[]): Secret | undefined {
  if (url === undefined) {
    if (password !== undefined) problems.push('DATABASE_PASSWORD is set but DATABASE_URL is not; give DATABASE_URL without its password, e.g. postgres://recon@db:5432/recon');
    return undefined;
  }
  const parsed = new URL(url);
  if (password !== undefined) {
    if (parsed.password !== '') {
      problems.push('DATABASE_URL already contains a password and DATABASE_PASSWORD is set too; keep the password in one place only');
      return undefined;
    }
    if (parsed.username === '') {
      problems.push('DATABASE_PASSWORD is set but DATABASE_URL names no user; write it as postgres://USER@host:port/database');
      return undefined;
    }
    parsed.password = encodeURIComponent(password);
  }
  if (parsed.password !== '') registerSecretValue(decodeURIComponent(parsed.password));
  return new Secret(password === undefined ? url : parsed.href);
}

function resolveAccounts(
  env: Record<string, string | undefined>,
  cwd: string,
  defaultEnvironment: Environment,
): { accounts: AccountConfig[]; problems: string[] } {
  const file = env.RECON_ACCOUNTS_FILE;
  if (file === undefined) {
    return {
      accounts: [
        {
          name: 'default',
          environment: defaultEnvironment,
          baseUrl: undefined,
          apiKey: env.GATEWAY_API_KEY,
          apiSecret: env.GATEWAY_API_SECRET === undefined ? undefined : new Secret(env.GATEWAY_API_SECRET),
          apiKeyEnv: 'GATEWAY_API_KEY',
          apiSecretEnv: 'GATEWAY_API_SECRET',
        },
      ],
      problems: [],
    };
  }
  const fullPath = path.resolve(cwd, file);
  let raw: unknown;
  try {
    const text = readFileSync(fullPath, 'utf8');
    raw = /\.ya?ml$/i.test(fullPath) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    return { accounts: [], problems: [`RECON_ACCOUNTS_FILE (${file}) could not be read: ${(error as Error).message}`] };
  }
  const parsed = accountsFileSchema.safeParse(Array.isArray(raw) ? { accounts: raw } : raw, { jitless: true });
  if (!parsed.success) {
    return {
      accounts: [],
      problems: parsed.error.issues.map((i) => `RECON_ACCOUNTS_FILE (${file}) at ${i.path.join('.') || 'top level'}: ${i.message}`),
    };
  }
  const problems: string[] = resolveSecretFiles(
    env,
    parsed.data.accounts.map((a) => a.apiSecretEnv),
    cwd,
  );
  const seen = new Set<string>();
  const accounts = parsed.data.accounts.map((a, index) => {
    if (seen.has(a.name)) problems.push(`RECON_ACCOUNTS_FILE (${file}) at accounts.${index}.name: "${a.name}" appears twice`);
    seen.add(a.name);
    if (a.baseUrl !== undefined) {
      const problem = checkBaseUrl(a.baseUrl);
      if (problem) problems.push(`RECON_ACCOUNTS_FILE (${file}) at accounts.${index}.baseUrl ${problem}`);
    }
    const secret = env[a.apiSecretEnv];
    return {
      name: a.name,
      environment: a.environment,
      baseUrl: a.baseUrl,
      apiKey: env[a.apiKeyEnv],
      apiSecret: secret === undefined ? undefined : new Secret(secret),
      apiKeyEnv: a.apiKeyEnv,
      apiSecretEnv: a.apiSecretEnv,
    } satisfies AccountConfig;
  });
  return { accounts, problems };
}

/** The gateway base URL an account talks to. Throws ConfigError when live has no URL. */
export function baseUrlFor(config: Config, account: AccountConfig): string {
  if (account.baseUrl) return account.baseUrl;
  if (account.environment === 'sandbox') return config.sandboxUrl;
  if (!config.liveUrl) {
    throw new ConfigError(`Account "${account.name}" uses the live gateway but GATEWAY_LIVE_URL is not set.`, [
      'GATEWAY_LIVE_URL is required for live accounts',
    ]);
  }
  return config.liveUrl;
}

/**
 * The accounts a gateway command will use (all, or the one named), checked for credentials.
 * Throws one ConfigError listing every missing variable.
 */
export function selectAccounts(config: Config, name?: string): AccountConfig[] {
  const chosen = name === undefined ? [...config.accounts] : config.accounts.filter((a) => a.name === name);
  if (chosen.length === 0) {
    throw new ConfigError(
      `There is no account named "${name}". Configured accounts: ${config.accounts.map((a) => a.name).join(', ')}.`,
      [`unknown account ${name}`],
    );
  }
  const problems: string[] = [];
  for (const account of chosen) {
    if (!account.apiKey) problems.push(`${account.apiKeyEnv} is not set (API key of account "${account.name}")`);
    if (!account.apiSecret) problems.push(`${account.apiSecretEnv} is not set, nor ${account.apiSecretEnv}_FILE (API secret of account "${account.name}")`);
    try {
      baseUrlFor(config, account);
    } catch (error) {
      problems.push((error as ConfigError).message);
    }
  }
  if (problems.length > 0) throw configProblems(problems);
  return chosen;
}

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

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Secret) && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
