import type { envSchema } from './env-schema.js';

/** A variable of the environment schema. */
export type SchemaVariable = keyof typeof envSchema.shape;

/**
 * What each variable of the schema means, for docs/configuration.md (`npm run docs:config`).
 * Typed by the schema: a variable added there without a line here does not compile. Defaults
 * are not repeated: the reference takes them from the schema; `defaultText` only words one the
 * schema cannot show.
 */
export const VARIABLE_DESCRIPTIONS: Readonly<Record<SchemaVariable, { readonly meaning: string; readonly defaultText?: string }>> = {
  DATABASE_URL: { meaning: 'secret. PostgreSQL connection string (`postgres://` or `postgresql://`). Unset: the embedded database.' },
  DATABASE_PASSWORD: { meaning: 'secret. Password put into a `DATABASE_URL` written without one (one Docker secret for PostgreSQL and the worker).' },
  DATABASE_CONNECT_TIMEOUT: { meaning: 'How long opening a connection to the PostgreSQL server may take before the attempt fails (`10s`).' },
  DATABASE_STATEMENT_TIMEOUT: { meaning: 'The longest one statement of the job may run on the server before it is cancelled and the attempt fails (`60s`).' },
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT: { meaning: 'How long a session may sit idle inside a transaction before the server ends it (`60s`).' },
  RECON_DATA_DIR: {
    defaultText: 'user data dir',
    meaning:
      'Folder of the embedded database: an absolute path, new, empty or already wallet-recon\'s (a folder of other files is refused); files owner-only (0600/0700); one process at a time. `memory://`: an in-memory database that keeps nothing once the command ends (said with a warning). Default: `$XDG_DATA_HOME/wallet-recon/database`, else `~/.local/share/wallet-recon/database`; a `.data/` folder an earlier version created in the working directory is used instead, with a notice.',
  },
  GATEWAY_ENV: { meaning: '`live` or `sandbox`: the environment of the single account (an accounts file names each account\'s own).' },
  GATEWAY_LIVE_URL: { meaning: 'Live base address (required for live accounts); `https://`.' },
  GATEWAY_SANDBOX_URL: { defaultText: '`http://127.0.0.1:4010`', meaning: 'Sandbox base address; `http://` only for loopback hosts.' },
  GATEWAY_API_KEY: { meaning: 'API key of the `default` account (ignored, with a warning, when `RECON_ACCOUNTS_FILE` is set).' },
  GATEWAY_API_SECRET: { meaning: 'secret. API secret of the `default` account (sent only as `Secret-Key` to the configured origin; ignored, with a warning, when `RECON_ACCOUNTS_FILE` is set).' },
  GATEWAY_TIMEOUT_MS: { meaning: 'Per-attempt request timeout, in milliseconds.' },
  GATEWAY_CONCURRENCY: { meaning: 'Single-wallet reads at once.' },
  GATEWAY_PER_PAGE: { meaning: '`per_page` sent to list endpoints, 1 to 100 (the gateway refuses more).' },
  GATEWAY_MAX_RPS: { meaning: 'Requests-per-second cap per gateway origin, shared by every account\'s requests in the process (one budget, not one per account).' },
  GATEWAY_AUTH_SCHEME: { meaning: 'Word before the token in `Authorization` (empty: the bare token).' },
  GATEWAY_RETRY_ATTEMPTS: { meaning: 'Retries after the first attempt (network errors, timeouts, 408, 425, 429, 5xx).' },
  GATEWAY_MAX_RETRY_AFTER_MS: { meaning: 'Longest `Retry-After` honoured, in milliseconds; longer fails at once.' },
  GATEWAY_RETRY_BASE_DELAY_MS: { meaning: 'First backoff step, in milliseconds (exponential, full jitter).' },
  GATEWAY_MAX_PAGES: { meaning: 'Upper bound on the pages of one listing.' },
  GATEWAY_AMOUNT_UNIT: { meaning: 'What the gateway\'s integer `balance` counts: `minor` (ISO 4217 minor units, such as cents) or `major` (whole units). Per currency: `GATEWAY_AMOUNT_DECIMALS_<CUR>` (below); per account: `amountUnit` / `amountDecimals` in the accounts file. Each stored amount keeps the scale it was captured in.' },
  LOG_LEVEL: { meaning: '`fatal` `error` `warn` `info` `debug` `trace` `silent`. Unset: `info` when piped or run from cron, quiet on a terminal.' },
  RECON_TIMEZONE: { meaning: 'IANA zone of business dates, the cut-off and the schedule; every time a person reads (console, CLI messages, e-mail) is written in it with its zone (`06:29 CET`). Once a worker recorded it in the database\'s business calendar, a change affects future dates only, through `wallet-recon calendar set --from DATE` (see [operating](operating.md#the-business-calendar-of-the-database)).' },
  RECON_LOCALE: { meaning: 'How amounts are written for people (`de-DE`: `1.234,56`): console, e-mail, table report. With it set, CSV reports use its list separator (`;` where the decimal mark is a comma) and write the `_formatted` columns with its decimal mark and no grouping, so a spreadsheet in that locale reads them as numbers. Unset: `1,234.56` and comma-separated CSV. JSON never changes.' },
  RECON_SCHEDULE: { meaning: 'Cron expression of the worker\'s slots: 5 fields, or 6 with seconds first; every slot must lie inside a capture window (else `schedule` exits 2 saying which).' },
  RECON_CUTOFF: { meaning: 'Local time (`HH:MM`) at which a business date ends (see [operating](operating.md#business-dates-cut-off-and-capture-window)). Recorded in the database\'s business calendar by the first worker; a change affects future dates only, through `wallet-recon calendar set --cutoff HH:MM --from DATE`.' },
  RECON_CAPTURE_WINDOW: { meaning: 'How far either side of a cut-off a capture is that date\'s end-of-day snapshot (`90s`, `45m`, `3h`; at most `11h`).' },
  RECON_RETRY_DELAYS: { meaning: 'Waits between capture attempts within the window; the last one repeats.' },
  RECON_STATEMENT_MAX_BYTES: { defaultText: '268435456 (256 MiB)', meaning: 'The largest bank statement file `statements import` reads, in bytes (at least 1024): a larger file is refused before it is read, naming this limit. A camt file is read as a stream whatever its size; the limit bounds the time and the database space one file may take.' },
  RECON_STATEMENT_DEADLINE: { meaning: 'How long after a date\'s cut-off a bank account\'s statement for it may still arrive (`36h`, `3d`). Until then the bank account awaits it (`awaiting_statement`, no case); after it, one `no_statement` result and case.' },
  RECON_BOOKS_DEADLINE: { meaning: 'How long after a date\'s cut-off its books may still arrive (`12h`, `2d`). Until then the date awaits its books (`awaiting_books`, no case); after it, one `no_books` result and case and a `books.missing` notification.' },
  RECON_ACCOUNTS_FILE: { meaning: 'JSON or YAML list of accounts (below).' },
  RECON_ACCOUNT_CONCURRENCY: { meaning: 'Accounts captured at once (per worker; on a PostgreSQL server each worker takes this many capture jobs at a time).' },
  RECON_QUEUE_SCHEMA: { meaning: 'PostgreSQL server only: the schema of the job queue (pg-boss), created by `wallet-recon migrate`.' },
  RECON_QUEUE_JOB_EXPIRY: { meaning: 'PostgreSQL server only: how long a capture job may stay active before another worker takes it (a worker killed mid-job); default half the shortest of `RECON_RETRY_DELAYS`, at least 30 s. Size it above one capture\'s duration: pg-boss also gives a job up when its handler is still running at its expiry.' },
  RECON_MAX_CONSECUTIVE_FAILURES: { meaning: 'Missed business dates in a row before each further miss is also logged as an alarm.' },
  RECON_CATCH_UP: { meaning: 'At start, record the dates whose window closed while no worker ran as missed, and resume the slot whose window is still open.' },
  RECON_SHUTDOWN_GRACE_MS: { meaning: 'On SIGTERM, how long a running run may finish before it is interrupted, in milliseconds.' },
  RECON_TOLERANCE: { meaning: 'Reconciliation tolerance in **major** units of each currency (`0.01` is one cent of EUR, not `1`; per currency: `RECON_TOLERANCE_<CUR>`, below). A result matches when the absolute difference is within the larger of this and `RECON_TOLERANCE_BPS`. For a currency with fewer decimals it is rounded down to that currency\'s minor unit (`0.01` is an exact match for JPY, `1.5` is 1 yen), and reports say so.' },
  RECON_TOLERANCE_BPS: { meaning: 'Relative tolerance in basis points of the balance (1 bps = 0.01 %); 0 turns it off.' },
  RECON_SIGNING_KEY_FILE: {
    meaning:
      'An Ed25519 private key in PEM (`openssl genpkey -algorithm ed25519`), kept outside the database: every sign-off prepare, approve and reopen is signed with it, and `wallet-recon signoff verify` checks the signatures with the public key it derives. Unset: steps are hash-chained but not signed.',
  },
  RECON_SIGNING_PUBLIC_KEY_FILE: {
    meaning:
      'The Ed25519 public key in PEM (`openssl pkey -in signing-key.pem -pubout`) that signs sign-off steps, kept where the database owner cannot change it: with `RECON_SIGNING_SINCE` it pins the key, and `wallet-recon signoff verify` (which then needs no private key) requires every sign-off step made since then to carry a valid signature by it — a step without one, or signed by another key, is a broken seal. Set both or neither.',
  },
  RECON_SIGNING_SINCE: { meaning: 'An ISO date-time with its offset (`2026-12-01T00:00:00Z`): from when every sign-off step must be signed by `RECON_SIGNING_PUBLIC_KEY_FILE`\'s key. Set both or neither.' },
  RECON_ACTOR: { meaning: 'Who manual case actions are recorded as when `--by` is not given (else the operating-system user).' },
  RECON_WEBHOOK_URL: { meaning: 'secret. Receiver of signed webhooks (https, or http for loopback hosts only); needs `RECON_WEBHOOK_SECRET`.' },
  RECON_WEBHOOK_SECRET: { meaning: 'secret. Standard Webhooks signing secret: `whsec_` + base64 of 24–64 random bytes (`echo "whsec_$(openssl rand -base64 32)"`).' },
  RECON_SLACK_WEBHOOK_URL: { meaning: 'secret. A Slack incoming-webhook URL (the URL is the credential).' },
  RECON_SMTP_URL: { meaning: 'secret. `smtps://user:password@smtp.example.com:465` (or `smtp://…:587`, which must offer STARTTLS unless the host is loopback); needs `RECON_MAIL_FROM` and `RECON_MAIL_TO`.' },
  RECON_MAIL_FROM: { meaning: 'Sender, `recon@example.com` or `Recon <recon@example.com>`.' },
  RECON_MAIL_TO: { meaning: 'Recipients, comma-separated.' },
  RECON_NOTIFY_MAX_ATTEMPTS: { meaning: 'Delivery attempts per notification and channel before it is marked `failed`.' },
  RECON_NOTIFY_LEASE: { meaning: 'How long a deliverer\'s claim on one notification lasts, from `300ms` to `1h`; renewed every third of it while the row is sent, so it runs out only when its sender stopped (see [the outbox](notifications-outbox.md)).' },
  RECON_RENOTIFY_CHANGE: { meaning: 'How far an open problem\'s amount must move (from what was last announced) to be announced again as `problem.changed`: an amount in major units (`5.00`), a percentage (`10%`), or both (`5.00,10%`: beyond either). `RECON_RENOTIFY_CHANGE_<CODE>` overrides it for one currency (see [quiet nights](notifications-and-metrics.md#quiet-nights)).' },
  RECON_MATERIALITY: { meaning: 'A difference beyond tolerance but within materiality is `immaterial`: recorded, listed and counted, no case, no alert, exit 0. An amount in major units (`1.00`), a share of the balance (`0.1%`), or both (immaterial within either); `RECON_MATERIALITY_<CODE>` for one currency wins; an account\'s `materiality:` in the accounts file wins over both. Unset: none.' },
  RECON_NOTIFY_MAX_PER_NIGHT: { meaning: 'Problem messages per channel and business date; the rest are folded into one `problem.folded` (the outbox keeps every event).' },
  RECON_QUIET_HOURS: { meaning: '`HH:MM-HH:MM` in `RECON_TIMEZONE` (`22:00-07:00`): messages to `RECON_QUIET_HOURS_CHANNELS` are held and delivered folded, one per channel, when the quiet ends. Unset: none.' },
  RECON_AUTO_PREPARE: { meaning: '`on` (default): a date that is settled and whose every result is matched, explained or immaterial with no open case is prepared for sign-off by `wallet-recon` (and approved by rule where every account has `certify: auto`). `off`: every sign-off is prepared by a person.' },
  RECON_QUIET_HOURS_CHANNELS: { meaning: 'The channels quiet hours hold (signed webhooks are machine-to-machine and go at once unless listed).' },
  RECON_METRICS_PORT: { meaning: 'The worker serves `/metrics` and `/healthz` on this port (unset: not served).' },
  RECON_METRICS_HOST: { meaning: 'Address those endpoints bind to (`0.0.0.0` in a container that Prometheus scrapes).' },
  RECON_METRICS_PER_ACCOUNT: { meaning: 'Label per-account series with `account`; `false` for large fleets (see [notifications and metrics](notifications-and-metrics.md#metrics-and-health)).' },
  RECON_PUSHGATEWAY_URL: { meaning: 'secret when it carries a password. `snapshot`, `reconcile` and `backfill` push their metrics there (`pushAdd`).' },
  RECON_BOOKS_DATABASE_URL: { meaning: 'secret. The merchant\'s own ledger database (`postgres://`), which books queries read in a read-only transaction; give it a role that may only read (see [books](books.md)).' },
  RECON_BOOKS_SQL_FILE: { meaning: 'The books query for accounts without their own `books.sqlFile`: gets `$1` the business date (text, write `$1::date`) and `$2` the account, returns `currency` and `balance` (numeric, major units). Needs `RECON_BOOKS_DATABASE_URL`.' },
  RECON_BOOKS_ENTRIES_SQL_FILE: { meaning: 'The books entries query for accounts without their own `books.entriesSqlFile`: gets `$1` the business date and `$2` the account like the books query, returns the columns of `ledger import --entries` (`booking_date`, `currency`, `amount` in major units; optionally `account`, `value_date`, `reference`, `description`, `entry_id`). `books pull` runs it beside the books query. Needs `RECON_BOOKS_DATABASE_URL`.' },
  RECON_BOOKS_STATEMENT_TIMEOUT: { meaning: 'The longest a books query may run, 1s to 1h: set as a connection option the query cannot lift, and the query is cancelled on the ledger server when it is over.' },
  RECON_BOOKS_PULL_EVERY: { meaning: 'How often the worker asks the ledger database again for a date whose books have not arrived, 1m to 24h.' },
  RECON_CONSOLE_URL: { meaning: 'The address people open the review console at (`https://recon.example.com/`): only its origin may post forms, its host is answered besides loopback names (others get 421), and `https://` makes the session cookie `Secure` and `__Host-` prefixed (see [the console](console.md#behind-a-tls-reverse-proxy)).' },
  RECON_CONSOLE_TRUST_PROXY: { defaultText: 'false', meaning: 'Whose `X-Forwarded-For/-Proto/-Host` headers the console believes: `true`, a number of hops, or proxy addresses/CIDR ranges (`127.0.0.1,10.0.0.0/8`). The forwarded address is the one the sign-in limits count per client.' },
  RECON_OIDC_ISSUER: { meaning: 'Single sign-on for the console: the OpenID provider\'s issuer URL; needs `RECON_OIDC_CLIENT_ID` and `RECON_OIDC_CLIENT_SECRET`.' },
  RECON_OIDC_CLIENT_ID: { meaning: 'The console\'s client id at the OpenID provider.' },
  RECON_OIDC_CLIENT_SECRET: { meaning: 'secret. The console\'s client secret at the OpenID provider.' },
  RECON_OIDC_ROLE_CLAIM: { meaning: 'The claim that holds a person\'s console roles.' },
  RECON_OIDC_ROLE_MAP: { meaning: '`VALUE=ROLE,...` from claim values to console roles (`viewer`, `preparer`, `approver`, `admin`); unset: the values must be the role names.' },
};
