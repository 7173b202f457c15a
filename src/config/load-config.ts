import { databaseTimeoutsOf } from './database-timeouts.js';
import path from 'node:path';
import { checkBaseUrl } from '../gateway/base-url.js';
import { Secret } from '../secret.js';
import { resolveAccounts } from './accounts.js';
import { booksSettingsOf } from './books-settings.js';
import { currencySettingsOf } from './business-settings.js';
import { configProblems, describeIssue } from './config-problems.js';
import { DEFAULT_SANDBOX_URL, type AccountConfig, type Config } from './config-types.js';
import { ignoredAccountVariableWarnings, unknownVariableWarnings, type VariableSource } from './config-warnings.js';
import { resolveDatabaseUrl } from './database-url.js';
import { isInMemoryDataDir, resolveDataDir } from './data-dir.js';
import { readDotEnv } from './dot-env.js';
import { envSchema } from './env-schema.js';
import { consoleProblems, consoleSettingsOf } from './console-settings.js';
import { metricsSettingsOf } from './metrics-settings.js';
import { notificationProblems, notificationSettingsOf } from './notification-settings.js';
import { resolveSecretFiles, SECRET_VARIABLES } from './secret-files.js';
import { isQuietCurrencyVariable, quietSettingsOf } from './quiet-settings.js';

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
  const dotEnv = options.ignoreDotEnv ? {} : readDotEnv(cwd);
  const env: Record<string, string | undefined> = { ...dotEnv, ...base, ...options.overrides };
  // What the operator set (not the program's own overrides), for the warnings about names.
  const given: VariableSource[] = [
    ...Object.keys(base).filter((name) => base[name] !== undefined && base[name] !== '').map((name) => ({ name, from: 'set in the environment' })),
    ...Object.keys(dotEnv).filter((name) => dotEnv[name] !== '' && (base[name] === undefined || base[name] === '')).map((name) => ({ name, from: `set in ${path.join(cwd, '.env')}` })),
  ].filter((v) => options.overrides?.[v.name] === undefined);
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
  problems.push(...consoleProblems(env));
  if ((env.RECON_SIGNING_PUBLIC_KEY_FILE === undefined) !== (env.RECON_SIGNING_SINCE === undefined)) {
    // Half a pin would leave verify guessing from when signatures are owed: refused, not guessed.
    problems.push(
      env.RECON_SIGNING_SINCE === undefined
        ? 'RECON_SIGNING_PUBLIC_KEY_FILE is set without RECON_SIGNING_SINCE: set the date-time from which every sign-off step must be signed by that key (e.g. RECON_SIGNING_SINCE=2026-12-01T00:00:00Z), or unset both.'
        : 'RECON_SIGNING_SINCE is set without RECON_SIGNING_PUBLIC_KEY_FILE: name the Ed25519 public key (PEM) that must sign every sign-off step since then, or unset both.',
    );
  }

  const { toleranceByCurrency, amountDecimals } = currencySettingsOf(env, problems);

  const accountsResult = parsed.success ? resolveAccounts(env, cwd, parsed.data.GATEWAY_ENV) : { accounts: [], bankAccounts: [], problems: [] };
  problems.push(...accountsResult.problems);
  const databaseUrl = parsed.success ? resolveDatabaseUrl(parsed.data.DATABASE_URL, parsed.data.DATABASE_PASSWORD, problems) : undefined;
  const books = parsed.success ? booksSettingsOf(parsed.data, cwd, [...accountsResult.accounts, ...accountsResult.bankAccounts], problems) : undefined;
  const quiet = parsed.success ? quietSettingsOf(parsed.data, env, problems) : undefined;
  const dataDir = resolveDataDir(parsed.success ? parsed.data.RECON_DATA_DIR : undefined, cwd, problems);

  if (!parsed.success || problems.length > 0) {
    throw configProblems(problems);
  }
  const v = parsed.data;
  return deepFreeze({
    databaseUrl,
    secretVariables: [...new Set([...SECRET_VARIABLES, ...accountsResult.accounts.map((a) => a.apiSecretEnv)])],
    ...dataDir,
    databaseTimeouts: databaseTimeoutsOf(v),
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
    locale: v.RECON_LOCALE,
    schedule: v.RECON_SCHEDULE,
    cutoff: v.RECON_CUTOFF,
    captureWindowMs: v.RECON_CAPTURE_WINDOW,
    retryDelaysMs: v.RECON_RETRY_DELAYS,
    booksDeadlineMs: v.RECON_BOOKS_DEADLINE,
    accounts: accountsResult.accounts,
    bankAccounts: accountsResult.bankAccounts,
    statementDeadlineMs: v.RECON_STATEMENT_DEADLINE,
    statementMaxBytes: v.RECON_STATEMENT_MAX_BYTES,
    accountConcurrency: v.RECON_ACCOUNT_CONCURRENCY,
    // A job a worker died in is taken by another once it expires: by default half the shortest
    // retry delay, so with the queue's sweep a killed worker's accounts are taken within that delay;
    // at least 30 s, since pg-boss also gives up on a handler still running at its job's expiry.
    queue: { schema: v.RECON_QUEUE_SCHEMA, jobExpiryMs: v.RECON_QUEUE_JOB_EXPIRY ?? Math.max(30_000, Math.round(Math.min(...v.RECON_RETRY_DELAYS) / 2)) },
    maxConsecutiveFailures: v.RECON_MAX_CONSECUTIVE_FAILURES,
    catchUp: v.RECON_CATCH_UP,
    shutdownGraceMs: v.RECON_SHUTDOWN_GRACE_MS,
    tolerance: { default: v.RECON_TOLERANCE, byCurrency: toleranceByCurrency, bps: v.RECON_TOLERANCE_BPS },
    amounts: { unit: v.GATEWAY_AMOUNT_UNIT, decimalsByCurrency: amountDecimals },
    actor: v.RECON_ACTOR,
    signingKeyFile: v.RECON_SIGNING_KEY_FILE === undefined ? undefined : path.resolve(cwd, v.RECON_SIGNING_KEY_FILE),
    pinnedSigningKey:
      v.RECON_SIGNING_PUBLIC_KEY_FILE === undefined || v.RECON_SIGNING_SINCE === undefined ? undefined : { publicKeyFile: path.resolve(cwd, v.RECON_SIGNING_PUBLIC_KEY_FILE), since: new Date(v.RECON_SIGNING_SINCE) },
    notifications: notificationSettingsOf(v),
    quiet: quiet!,
    metrics: metricsSettingsOf(v),
    books: books!,
    console: consoleSettingsOf(v),
    warnings: [
      ...unknownVariableWarnings(given, (name) => isKnownVariable(name, accountsResult.accounts), KNOWN_VARIABLES),
      ...(env.RECON_ACCOUNTS_FILE !== undefined && options.overrides?.RECON_ACCOUNTS_FILE === undefined
        ? ignoredAccountVariableWarnings(new Set(given.map((g) => g.name)), new Set(accountsResult.accounts.flatMap(accountVariables)))
        : []),
      ...(databaseUrl === undefined && isInMemoryDataDir(dataDir.dataDir)
        ? [`RECON_DATA_DIR is ${dataDir.dataDir}: the embedded database lives in memory and keeps nothing once the command ends.`]
        : []),
    ],
  });
}

/** The names the environment schema reads, and the _FILE form of each secret: what a misspelt name is compared with. */
const KNOWN_VARIABLES: readonly string[] = [...Object.keys(envSchema.shape), ...SECRET_VARIABLES.map((name) => `${name}_FILE`)];

/** The variables an account takes its credentials from (the secret's _FILE form included). */
function accountVariables(account: AccountConfig): string[] {
  return [account.apiKeyEnv, account.apiSecretEnv, `${account.apiSecretEnv}_FILE`];
}

function isKnownVariable(name: string, accounts: readonly AccountConfig[]): boolean {
  // Per-currency tolerances are checked where they are read (RECON_TOLERANCE_JPY).
  return KNOWN_VARIABLES.includes(name) || name.startsWith('RECON_TOLERANCE_') || isQuietCurrencyVariable(name) || name.startsWith('GATEWAY_AMOUNT_DECIMALS_') || accounts.some((a) => accountVariables(a).includes(name));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Secret) && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
