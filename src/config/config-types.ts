import type { Secret } from '../secret.js';

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
  /** Where dataDir came from: RECON_DATA_DIR, an existing checkout's .data/ (said with a notice), or the user's data directory. */
  readonly dataDirSource: 'RECON_DATA_DIR' | 'checkout' | 'user-data-dir';
  /** PostgreSQL server: DATABASE_CONNECT_TIMEOUT, DATABASE_STATEMENT_TIMEOUT, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT. */
  readonly databaseTimeouts: DatabaseTimeouts;
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
  /** Sentences about what is not wrong enough to stop but likely a mistake (an unknown variable, an ignored one); said once at start. */
  readonly warnings: readonly string[];
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
