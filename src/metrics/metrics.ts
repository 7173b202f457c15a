import { countDecisions } from '../notifications/problems/decision-counts.js';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database.types.js';
import { readQueueDepths } from '../db/job-queue.repository.js';
import { countPendingNotifications } from '../db/notification.repository.js';
import { RECONCILIATION_STATUSES } from '../db/result-records.js';

/** What jobs report as they go; the context carries one when metrics are wanted. */
export interface MetricsRecorder {
  /** A capture run ended (succeeded or failed; skips are not runs). */
  recordRun(run: { trigger: string; status: string; durationMs: number }): void;
  /** One attempt of a gateway request: its path and status, or undefined when no answer came. */
  recordGatewayRequest(path: string, status: number | undefined): void;
  /** An account's business date was recorded missed (by this process). */
  recordMissedDate(account: string): void;
  /** One delivery attempt of a notification. */
  recordNotification(channel: string, outcome: 'sent' | 'retry' | 'failed'): void;
}

export interface MetricsOptions {
  /** Per-account series carry an `account` label; false for large fleets. */
  perAccount: boolean;
  /** The configured gateway account names: only they (and the bank accounts) appear as label values. */
  accounts: readonly string[];
  /** The configured bank accounts: their results and statements are exported, never a capture. */
  bankAccounts?: readonly string[];
  /** Process metrics (CPU, memory, event loop): for the long-running worker, not for pushes. */
  processDefaults: boolean;
  /** Where the gauges that describe stored state (last success, results, outbox) are read at scrape time. */
  db: Kysely<Database>;
  /** On a PostgreSQL server, the job queue's schema: its depth and oldest waiting job per queue are exported. */
  queueSchema?: string;
}

const PREFIX = 'wallet_recon_';

/** The queues of the night's jobs: pg-boss's own (`__pgboss__send-it`, …) are its internals, not work waiting. */
function ownQueues<T extends { queue: string }>(rows: readonly T[]): T[] {
  return rows.filter((r) => !r.queue.startsWith('__pgboss__'));
}

// A scrape while the database is unreachable keeps the last values (and /healthz says 503)
// rather than failing the whole page and losing the process metrics with it.
async function keepOnFailure(read: () => Promise<void>): Promise<void> {
  try {
    await read();
  } catch {
    return;
  }
}

/** The endpoint kind of a gateway path: a fixed set, so a gateway's paths never grow the label. */
export function endpointKind(path: string): 'token' | 'balances' | 'other' {
  if (path.endsWith('/auth/token')) return 'token';
  if (/\/wallets\/balances$|\/wallets\/[^/]+\/balance$/.test(path)) return 'balances';
  return 'other';
}

/** 2xx … 5xx, or `network` when no answer came. */
export function statusClass(status: number | undefined): string {
  return status === undefined ? 'network' : `${Math.floor(status / 100)}xx`;
}

/**
 * The worker's and the one-shot commands' metrics on their own registry. Counters and the run
 * histogram count what this process did; the gauges of stored state are read from the database
 * when scraped, so every replica shows the same last success, results and outbox.
 * Label values are bounded: trigger, status, endpoint kind, status class, channel, and the
 * configured account names (dropped with `perAccount: false`); never a currency or a run id.
 */
export class Metrics implements MetricsRecorder {
  readonly registry = new Registry();
  readonly #perAccount: boolean;
  readonly #runs: Counter<'trigger' | 'status'>;
  readonly #duration: Histogram<'trigger'>;
  readonly #gateway: Counter<'endpoint' | 'status_class'>;
  readonly #missed: Counter<string>;
  readonly #notifications: Counter<'channel' | 'outcome' | 'decision'>;

  constructor(options: MetricsOptions) {
    const registers = [this.registry];
    const { db, accounts } = options;
    const bankAccounts = options.bankAccounts ?? [];
    const reconciled = [...accounts, ...bankAccounts];
    this.#perAccount = options.perAccount;
    const accountLabel = options.perAccount ? ['account'] : [];
    // Unprefixed (process_cpu_seconds_total, nodejs_heap_size_used_bytes…), as stock Node.js dashboards expect.
    if (options.processDefaults) collectDefaultMetrics({ register: this.registry });

    this.#runs = new Counter({ name: `${PREFIX}runs_total`, help: 'Capture runs by trigger (schedule, manual, backfill) and status (succeeded, failed).', labelNames: ['trigger', 'status'], registers });
    this.#duration = new Histogram({
      name: `${PREFIX}run_duration_seconds`,
      help: 'Duration of capture runs, by trigger.',
      labelNames: ['trigger'],
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
      registers,
    });
    this.#gateway = new Counter({
      name: `${PREFIX}gateway_requests_total`,
      help: 'Gateway request attempts by endpoint kind (token, balances, other) and status class (2xx..5xx, network).',
      labelNames: ['endpoint', 'status_class'],
      registers,
    });
    this.#missed = new Counter({ name: `${PREFIX}missed_dates_total`, help: 'Business dates recorded missed by this process (window closed without an end-of-day snapshot).', labelNames: accountLabel, registers });
    // Decisions (issue 45) are made by whichever process reconciles and kept in the database: at
    // scrape time the counter is brought up to their totals (it only ever grows by the difference).
    const decided = new Map<string, number>();
    this.#notifications = new Counter({
      name: `${PREFIX}notifications_total`,
      help: 'Notification delivery attempts by channel and outcome (sent, retry, failed); and problem events by channel and decision (sent, folded, repeat, snoozed, quiet, immaterial).',
      labelNames: ['channel', 'outcome', 'decision'],
      registers,
      async collect() {
        await keepOnFailure(async () => {
          for (const { channel, decision, n } of await countDecisions(db)) {
            const key = `${channel}|${decision}`;
            const delta = n - (decided.get(key) ?? 0);
            if (delta > 0) this.inc({ channel, decision }, delta);
            decided.set(key, Math.max(n, decided.get(key) ?? 0));
          }
        });
      },
    });

    const perAccount = this.#perAccount;
    new Gauge({
      name: `${PREFIX}last_success_timestamp_seconds`,
      help: perAccount
        ? 'When each account last finished a succeeded capture from the gateway (Unix seconds); statement imports do not count.'
        : 'The oldest of the accounts\u2019 last succeeded captures from the gateway (Unix seconds): the fleet is as fresh as its stalest account.',
      labelNames: accountLabel,
      registers,
      async collect() {
        await keepOnFailure(async () => {
          // Gateway captures only (no statement `source`): an import of past statements says
          // nothing about whether the gateway can be read today, so it must not silence the alert.
          const rows = await sql<{ account: string; finished: Date | null }>`
            select account, max(finished_at) as finished from snapshot_runs where status = 'succeeded' and source is null group by account`.execute(db);
          const last = new Map(rows.rows.filter((r) => accounts.includes(r.account) && r.finished !== null).map((r) => [r.account, r.finished!.getTime() / 1000]));
          this.reset();
          if (perAccount) for (const [account, seconds] of last) this.set({ account }, seconds);
          else if (last.size > 0 && last.size === accounts.length) this.set(Math.min(...last.values()));
        });
      },
    });
    new Gauge({
      name: `${PREFIX}reconciliation_results`,
      help: 'Reconciliation results of the latest reconciled business date, by status.',
      labelNames: ['status', ...accountLabel],
      registers,
      async collect() {
        await keepOnFailure(async () => {
          const rows = await sql<{ account: string; status: string; n: string }>`
            select account, status, count(*) as n from reconciliation_results
            where business_date = (select max(business_date) from reconciliation_results)
            group by account, status`.execute(db);
          this.reset();
          const own = rows.rows.filter((r) => reconciled.includes(r.account));
          if (own.length === 0) return;
          for (const status of RECONCILIATION_STATUSES) {
            if (perAccount) {
              for (const account of new Set(own.map((r) => r.account))) {
                this.set({ status, account }, Number(own.find((r) => r.account === account && r.status === status)?.n ?? 0));
              }
            } else {
              this.set({ status }, own.filter((r) => r.status === status).reduce((sum, r) => sum + Number(r.n), 0));
            }
          }
        });
      },
    });
    if (bankAccounts.length > 0) {
      new Gauge({
        name: `${PREFIX}last_statement_business_date_seconds`,
        help: perAccount
          ? 'The latest business date each bank account has an end-of-day bank statement for (its 00:00 UTC, Unix seconds).'
          : 'The oldest of the bank accounts\u2019 latest stated business dates (00:00 UTC, Unix seconds): as current as the most behind bank account.',
        labelNames: accountLabel,
        registers,
        async collect() {
          await keepOnFailure(async () => {
            const rows = await sql<{ account: string; latest: string | null }>`
              select account, max(business_date)::text as latest from bank_statements where not intraday and account = any(${[...bankAccounts]}::text[]) group by account`.execute(db);
            const latest = new Map(rows.rows.filter((r) => r.latest !== null).map((r) => [r.account, Date.parse(`${r.latest}T00:00:00Z`) / 1000]));
            this.reset();
            if (perAccount) for (const [account, seconds] of latest) this.set({ account }, seconds);
            else if (latest.size > 0 && latest.size === bankAccounts.length) this.set(Math.min(...latest.values()));
          });
        },
      });
    }
    new Gauge({
      name: `${PREFIX}reconciliation_business_date_seconds`,
      help: 'The latest reconciled business date (its 00:00 UTC, Unix seconds): the date wallet_recon_reconciliation_results describes.',
      registers,
      async collect() {
        await keepOnFailure(async () => {
          const rows = await sql<{ latest: string | null }>`select max(business_date)::text as latest from reconciliation_results`.execute(db);
          this.reset();
          const latest = rows.rows[0]?.latest;
          if (latest) this.set(Date.parse(`${latest}T00:00:00Z`) / 1000);
        });
      },
    });
    if (options.queueSchema !== undefined) {
      const schema = options.queueSchema;
      // Both gauges from one read per scrape: whichever is collected first reads for the two.
      let reading: Promise<Awaited<ReturnType<typeof readQueueDepths>>> | undefined;
      const depths = () => (reading ??= readQueueDepths(db, schema).finally(() => setTimeout(() => (reading = undefined), 0)));
      new Gauge({
        name: `${PREFIX}queue_depth`,
        help: 'Jobs waiting in each job queue (first or later attempts, due or not).',
        labelNames: ['queue'],
        registers,
        async collect() {
          await keepOnFailure(async () => {
            const rows = await depths();
            this.reset();
            for (const row of ownQueues(rows)) this.set({ queue: row.queue }, row.waiting);
          });
        },
      });
      new Gauge({
        name: `${PREFIX}queue_oldest_waiting_seconds`,
        help: 'How long the longest-due job of each queue has waited without a worker taking it (0 when none waits).',
        labelNames: ['queue'],
        registers,
        async collect() {
          await keepOnFailure(async () => {
            const rows = await depths();
            this.reset();
            for (const row of ownQueues(rows)) this.set({ queue: row.queue }, row.oldestSeconds);
          });
        },
      });
    }
    new Gauge({
      name: `${PREFIX}notifications_pending`,
      help: 'Notifications in the outbox not yet delivered (status pending).',
      registers,
      async collect() {
        await keepOnFailure(async () => {
          this.set(await countPendingNotifications(db));
        });
      },
    });
  }

  recordRun(run: { trigger: string; status: string; durationMs: number }): void {
    this.#runs.inc({ trigger: run.trigger, status: run.status });
    this.#duration.observe({ trigger: run.trigger }, run.durationMs / 1000);
  }

  recordGatewayRequest(path: string, status: number | undefined): void {
    this.#gateway.inc({ endpoint: endpointKind(path), status_class: statusClass(status) });
  }

  recordMissedDate(account: string): void {
    if (this.#perAccount) this.#missed.inc({ account });
    else this.#missed.inc();
  }

  recordNotification(channel: string, outcome: 'sent' | 'retry' | 'failed'): void {
    this.#notifications.inc({ channel, outcome });
  }
}
