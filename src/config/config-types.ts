import type { BankCalendar } from './bank-calendar-settings.js';
import type { AmountOrShare, QuietSettings } from './quiet-settings.js';
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
  /**
   * The file the API secret was read from (`<apiSecretEnv>_FILE`, absolute), when it came from one:
   * read again before each capture attempt, so a corrected file counts without a restart.
   */
  readonly apiSecretFile?: string;
  /** The accounts file's `amountUnit` / `amountDecimals`, which win over the environment's for this account. */
  readonly amounts?: Partial<AmountUnitSettings>;
  /** How this account's books are written and where they are pulled from (the accounts file's `books`). */
  readonly books?: AccountBooksSettings;
  /** Issue 45: materiality per currency (`default` for the rest), winning over RECON_MATERIALITY[_<CODE>]. */
  readonly materiality?: Readonly<Record<string, AmountOrShare>>;
  /** Issue 45: `auto`: a settled, clean date may be approved by rule when every account of it says so. */
  readonly certify?: 'auto' | 'manual';
}

/**
 * A bank account (the accounts file's `bankAccounts`): reconciled from its statements' closing
 * booked balance against its books, like a gateway account is from its wallets.
 */
export interface BankAccountConfig {
  readonly name: string;
  /** How its statements name it: the IBAN (no spaces, upper case) or another identifier (camt `Othr/Id`, MT940 `:25:`). */
  readonly iban: string | undefined;
  readonly accountId: string | undefined;
  readonly currency: string;
  readonly books?: AccountBooksSettings;
  /** How its books entries are matched with its statement entries (`matching:`); defaults apply to what is absent. */
  readonly matching?: BankMatchingSettings;
  /** Issue 45: materiality per currency (`default` for the rest), winning over RECON_MATERIALITY[_<CODE>]. */
  readonly materiality?: Readonly<Record<string, AmountOrShare>>;
  /** Issue 45: `auto`: a settled, clean date may be approved by rule when every account of it says so. */
  readonly certify?: 'auto' | 'manual';
  /** The days the bank books (`calendar:`); absent: every day. */
  readonly calendar?: BankCalendar;
  /** `yearly`: statement numbers restart at 1 each year; `never`: they never do; absent: a 1 on a new year's first statement is taken as a restart. */
  readonly sequenceRestarts?: 'yearly' | 'never';
}

/** A bank account's `matching:` settings, as read from the accounts file. */
export interface BankMatchingSettings {
  readonly dateWindowDays?: number;
  /** Minor units of the account's currency (written in major units in the file). */
  readonly amountTolerance?: bigint;
  readonly references?: ReadonlyArray<'end_to_end' | 'bank_reference' | 'remittance'>;
  readonly groupSize?: number;
  /** Days after its date an unmatched entry is expected to clear; absent: no expected date. */
  readonly expectedClearDays?: number;
}

/** An account's saved books settings; command-line options win over them. */
export interface AccountBooksSettings {
  /** Headers of the fields in its exports: { business_date: "Value date", balance: "Closing balance" }. */
  readonly map?: Readonly<Partial<Record<'business_date' | 'currency' | 'balance' | 'account', string>>>;
  readonly dateFormat?: 'YYYY-MM-DD' | 'DD/MM/YYYY' | 'MM/DD/YYYY' | 'YYYY/MM/DD' | 'DD.MM.YYYY' | 'DD-MM-YYYY';
  /** Older spelling of decimalMark: true is `comma`, false `point`. */
  readonly decimalComma?: boolean;
  /** How text amounts write decimals: `1.234,56` (comma) or `1,234.56` (point). */
  readonly decimalMark?: 'comma' | 'point';
  readonly amounts?: 'major' | 'minor';
  /** The query that reads its books from the ledger database (absolute path), instead of RECON_BOOKS_SQL_FILE. */
  readonly sqlFile?: string;
  /** The query that reads its books entries from the ledger database (absolute path), instead of RECON_BOOKS_ENTRIES_SQL_FILE. */
  readonly entriesSqlFile?: string;
}

/** Where books are pulled from: the merchant's ledger database and the query run against it. */
export interface BooksSourceSettings {
  readonly databaseUrl: Secret | undefined;
  /** RECON_BOOKS_SQL_FILE as an absolute path: the query for accounts without their own. */
  readonly sqlFile: string | undefined;
  /** RECON_BOOKS_ENTRIES_SQL_FILE as an absolute path: the entries query for accounts without their own. */
  readonly entriesSqlFile: string | undefined;
  readonly statementTimeoutMs: number;
  /** RECON_BOOKS_PULL_EVERY: how often the worker pulls books for a date that has none yet. */
  readonly pullEveryMs: number;
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
  /** RECON_LOCALE: how amounts are written for people and CSV separators; undefined: 1,234.56 and commas. */
  readonly locale: string | undefined;
  readonly schedule: string;
  /** Local time (HH:MM in `timezone`) at which a business date ends. */
  readonly cutoff: string;
  /** How far either side of a cut-off a capture still counts as that date's end of day. */
  readonly captureWindowMs: number;
  /** Waits between capture attempts within a window; the last one repeats. */
  readonly retryDelaysMs: readonly number[];
  /** How long after a date's cut-off its books may still arrive before the date counts as `no_books`. */
  readonly booksDeadlineMs: number;
  readonly accounts: readonly AccountConfig[];
  /** Bank accounts, reconciled from bank statements (empty when the accounts file lists none). */
  readonly bankAccounts: readonly BankAccountConfig[];
  /** How long after a date's cut-off its bank statement may still arrive before the date counts as `no_statement`. */
  readonly statementDeadlineMs: number;
  /** RECON_STATEMENT_MAX_BYTES: a statement file larger than this is refused before it is read. */
  readonly statementMaxBytes: number;
  /**
   * The database's business calendar, oldest first, once a command opened a database that holds
   * one: each version's rules hold from its business date on, so a date is read by the rules in
   * force for it. The fields above are then the latest version's.
   */
  readonly calendarVersions?: readonly CalendarVersion[];
  readonly accountConcurrency: number;
  /** The job queue on a PostgreSQL server: pg-boss's schema and how long a capture job may stay active. */
  readonly queue: { readonly schema: string; readonly jobExpiryMs: number };
  readonly maxConsecutiveFailures: number;
  readonly catchUp: boolean;
  readonly shutdownGraceMs: number;
  /** Tolerance in major units: the default, per-currency overrides (RECON_TOLERANCE_JPY) and RECON_TOLERANCE_BPS. */
  readonly tolerance: ToleranceSettings;
  /** The gateway's unit: GATEWAY_AMOUNT_UNIT and GATEWAY_AMOUNT_DECIMALS_<CODE>. */
  readonly amounts: AmountUnitSettings;
  /** Who manual case actions are recorded as when --by is not given (RECON_ACTOR); else the OS user. */
  readonly actor: string | undefined;
  /** RECON_SIGNING_KEY_FILE as an absolute path: the Ed25519 private key (PEM) that signs each sign-off step; undefined: steps are not signed. */
  readonly signingKeyFile: string | undefined;
  /** RECON_SIGNING_PUBLIC_KEY_FILE (absolute) and RECON_SIGNING_SINCE: the key every sign-off step since then must be signed by; undefined: no key is pinned. */
  readonly pinnedSigningKey: { readonly publicKeyFile: string; readonly since: Date } | undefined;
  readonly notifications: NotificationSettings;
  /** Quiet nights: re-announcing, materiality, caps and quiet hours (src/config/quiet-settings.ts). */
  readonly quiet: QuietSettings;
  readonly metrics: MetricsSettings;
  readonly books: BooksSourceSettings;
  readonly console: ConsoleSettings;
  /** Sentences about what is not wrong enough to stop but likely a mistake (an unknown variable, an ignored one); said once at start. */
  readonly warnings: readonly string[];
}

/** The review console: its public address, which proxies to trust, and single sign-on. */
export interface ConsoleSettings {
  /** RECON_CONSOLE_URL: where people open it; its origin is the only one whose forms are accepted. */
  readonly publicUrl: string | undefined;
  /** RECON_CONSOLE_TRUST_PROXY, as Fastify's trustProxy takes it. */
  readonly trustProxy: boolean | number | string;
  readonly oidc:
    | { readonly issuer: string; readonly clientId: string; readonly clientSecret: Secret; readonly roleClaim: string; readonly roleMap: Readonly<Record<string, 'viewer' | 'preparer' | 'approver' | 'admin'>> }
    | undefined;
}

/** Where events are sent; each channel is optional (absent: not configured). */
export interface NotificationSettings {
  readonly webhook: { readonly url: Secret; readonly secret: Secret } | undefined;
  readonly slack: { readonly url: Secret } | undefined;
  readonly email: { readonly smtpUrl: Secret; readonly from: string; readonly to: readonly string[] } | undefined;
  /** Attempts per notification and channel before it is marked failed. */
  readonly maxAttempts: number;
  /** How long a deliverer's claim on one row lasts (RECON_NOTIFY_LEASE); renewed while it sends. */
  readonly leaseMs: number;
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
 * What the gateway's integer `balance` means: `minor` (ISO 4217 minor units, the default) or
 * `major` (whole units), and per-currency decimals that win over both (IDR: 0, whole rupiah).
 */
export interface AmountUnitSettings {
  readonly unit: 'minor' | 'major';
  readonly decimalsByCurrency: Readonly<Record<string, number>>;
}

/**
 * Tolerances as configured, in major units (decimal text such as "0.01"), and a relative part in
 * basis points of the balance. Turned into exact integers per currency by toleranceFor.
 */
export interface ToleranceSettings {
  readonly default: string;
  readonly byCurrency: Readonly<Record<string, string>>;
  readonly bps: number;
}

/** One version of the database's business calendar: its rules from a business date on. */
export interface CalendarVersion {
  /** The first business date the rules hold for; `0001-01-01`: from the start. */
  readonly effectiveFrom: string;
  readonly timezone: string;
  readonly cutoff: string;
  readonly captureWindowMs: number;
  readonly booksDeadlineMs: number;
  readonly statementDeadlineMs: number;
  readonly recordedAt: Date;
}
