import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, NotificationChannel, NotificationRow } from '../db/database.types.js';
import {
  claimDueNotifications,
  findNextDueAt,
  markNotificationFailed,
  markNotificationSent,
  releaseNotifications,
  scheduleNotificationRetry,
} from '../db/notification.repository.js';
import { describeError, NotificationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/metrics.js';
import type { Channel } from './channels/channel.js';
import type { NotificationEvent } from './events.js';

export interface DelivererOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  channels: ReadonlyMap<NotificationChannel, Channel>;
  /** Attempts per row before it is marked failed. */
  maxAttempts: number;
  metrics?: MetricsRecorder;
  /** How long a claimed row stays this deliverer's; a sender that dies frees it after this. */
  leaseMs?: number;
  /** How often the outbox is looked at when nothing is due sooner (rows written by other replicas). */
  pollMs?: number;
  batchSize?: number;
}

export interface DeliveryPass {
  sent: number;
  retried: number;
  failed: number;
}

/** Backoff between attempts: 30 s, 1, 2, 4 … minutes, at most an hour. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempt - 1), 3_600_000);
}

// A Retry-After longer than this is taken as this: a row must not sleep for days.
const MAX_RETRY_AFTER_MS = 6 * 3_600_000;

const CHANNEL_VARIABLES: Record<NotificationChannel, string> = { webhook: 'RECON_WEBHOOK_URL', slack: 'RECON_SLACK_WEBHOOK_URL', email: 'RECON_SMTP_URL' };

/**
 * Sends what the outbox holds. Each pass claims due rows (a lease under `for update skip
 * locked`), sends them outside any transaction (a slow receiver never holds a database
 * connection, so capture and reconciliation go on), and records the outcome: sent, tried again
 * later (backoff, or the receiver's Retry-After), or failed after `maxAttempts` or a refusal.
 */
export class Deliverer {
  readonly #o: Required<Omit<DelivererOptions, 'metrics'>> & Pick<DelivererOptions, 'metrics'>;
  #wake: AbortController | undefined;

  constructor(options: DelivererOptions) {
    this.#o = { leaseMs: 120_000, pollMs: 15_000, batchSize: 20, ...options };
  }

  /** One pass: every row due now, claimed in batches until none is left (or `signal` aborts). */
  async deliverDue(signal?: AbortSignal): Promise<DeliveryPass> {
    const pass: DeliveryPass = { sent: 0, retried: 0, failed: 0 };
    for (;;) {
      const now = this.#o.clock.now();
      const rows = await claimDueNotifications(this.#o.db, now, new Date(now.getTime() + this.#o.leaseMs), this.#o.batchSize);
      if (rows.length === 0) return pass;
      const untried: string[] = [];
      for (const row of rows) {
        if (signal?.aborted) untried.push(row.id);
        else pass[await this.#deliver(row, signal)]++;
      }
      if (untried.length > 0) await releaseNotifications(this.#o.db, untried);
      if (signal?.aborted) return pass;
    }
  }

  /** Runs passes until `signal` aborts: after each, sleeps until the next row is due (at most pollMs) or `wake()`. */
  async run(signal: AbortSignal): Promise<void> {
    const { clock, logger, db, pollMs } = this.#o;
    while (!signal.aborted) {
      let waitMs = pollMs;
      try {
        await this.deliverDue(signal);
        const due = await findNextDueAt(db);
        if (due !== undefined) waitMs = Math.max(0, Math.min(pollMs, due.getTime() - clock.now().getTime()));
      } catch (error) {
        // The database may be down for a while; the rows wait in it.
        logger.warn({ err: error }, 'the notification deliverer could not read the outbox; it will try again');
      }
      if (signal.aborted) return;
      this.#wake = new AbortController();
      await clock.sleep(waitMs, AbortSignal.any([signal, this.#wake.signal])).catch(() => undefined);
    }
  }

  /** Ends the current wait: something was just written to the outbox. */
  wake(): void {
    this.#wake?.abort();
  }

  async #deliver(row: NotificationRow, signal?: AbortSignal): Promise<'sent' | 'retried' | 'failed'> {
    const { db, clock, logger, channels, maxAttempts, metrics } = this.#o;
    const event = row.payload as NotificationEvent;
    const log = logger.child({ notificationId: row.id, eventId: row.event_id, eventType: row.event_type, channel: row.channel, attempt: row.attempts });
    const channel = channels.get(row.channel);
    if (!channel) {
      const reason = `the ${row.channel} channel is no longer configured (${CHANNEL_VARIABLES[row.channel]})`;
      await markNotificationFailed(db, row.id, reason);
      metrics?.recordNotification(row.channel, 'failed');
      log.error({ reason }, `notification ${row.id} (${row.event_type}) failed: ${reason}`);
      return 'failed';
    }
    try {
      await channel.send(event, clock.now(), signal);
    } catch (error) {
      const reason = describeError(error);
      const retryable = !(error instanceof NotificationError) || error.retryable;
      if (!retryable || row.attempts >= maxAttempts) {
        const why = retryable ? `gave up after ${row.attempts} attempts: ${reason}` : reason;
        await markNotificationFailed(db, row.id, why);
        metrics?.recordNotification(row.channel, 'failed');
        log.error({ reason: why }, `notification ${row.id} (${row.event_type}) to ${channel.target} failed: ${why}`);
        return 'failed';
      }
      const retryAfter = error instanceof NotificationError ? error.retryAfterMs : undefined;
      const delay = retryAfter === undefined ? retryDelayMs(row.attempts) : Math.min(Math.max(retryAfter, 1000), MAX_RETRY_AFTER_MS);
      const next = new Date(clock.now().getTime() + delay);
      await scheduleNotificationRetry(db, row.id, next, reason);
      metrics?.recordNotification(row.channel, 'retry');
      log.warn({ reason, nextAttemptAt: next.toISOString() }, `notification ${row.id} (${row.event_type}) to ${channel.target} not delivered (attempt ${row.attempts} of ${maxAttempts}); next attempt at ${next.toISOString()}`);
      return 'retried';
    }
    await markNotificationSent(db, row.id, clock.now());
    metrics?.recordNotification(row.channel, 'sent');
    log.info(`notification ${row.id} (${row.event_type}) sent to ${channel.target}`);
    return 'sent';
  }
}
