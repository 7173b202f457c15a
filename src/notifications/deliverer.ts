import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database, NotificationChannel, NotificationRow } from '../db/database.types.js';
import { randomUUID } from 'node:crypto';
import {
  claimNextNotification,
  findNextDueAt,
  markNotificationFailed,
  markNotificationSent,
  releaseNotification,
  renewNotificationLease,
  scheduleNotificationRetry,
  type NotificationLease,
} from '../db/notification.repository.js';
import { describeError, NotificationError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/metrics.js';
import type { Channel } from './channels/channel.js';
import type { NotificationEvent } from './events.js';
import { releaseHeld } from './problems/problem-outbox.js';

export interface DelivererOptions {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  channels: ReadonlyMap<NotificationChannel, Channel>;
  /** Attempts per row before it is marked failed. */
  maxAttempts: number;
  metrics?: MetricsRecorder;
  /**
   * How long a claimed row stays this deliverer's (RECON_NOTIFY_LEASE). It is renewed every third
   * of itself while the row is sent, so it runs out only when the sender stopped (died, frozen).
   */
  leaseMs?: number;
  /** How often the outbox is looked at when nothing is due sooner (rows written by other replicas). */
  pollMs?: number;
}

export interface DeliveryPass {
  sent: number;
  retried: number;
  failed: number;
  /** Rows whose lease ran out while this deliverer sent them and another sender claimed: their outcome was not written here. */
  lost?: number;
}

/** Backoff between attempts: 30 s, 1, 2, 4 … minutes, at most an hour. */
export function retryDelayMs(attempt: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempt - 1), 3_600_000);
}

type Outcome = 'sent' | 'retried' | 'failed' | 'lost';

// A Retry-After longer than this is taken as this: a row must not sleep for days.
const MAX_RETRY_AFTER_MS = 6 * 3_600_000;

const CHANNEL_VARIABLES: Record<NotificationChannel, string> = { webhook: 'RECON_WEBHOOK_URL', slack: 'RECON_SLACK_WEBHOOK_URL', email: 'RECON_SMTP_URL' };

/**
 * Sends what the outbox holds. Each step claims one due row (a lease under `for update skip
 * locked`, with a token of its own), sends it outside any transaction (a slow receiver never
 * holds a database connection, so capture and reconciliation go on) while renewing the lease,
 * and records the outcome — sent, tried again later (backoff, or the receiver's Retry-After), or
 * failed after `maxAttempts` or a refusal — only where the row still holds that token. Claiming
 * one row at a time keeps a lease from covering rows queued behind a slow send, which another
 * replica would otherwise claim again once it ran out.
 */
export class Deliverer {
  readonly #o: Required<Omit<DelivererOptions, 'metrics'>> & Pick<DelivererOptions, 'metrics'>;
  #wake: AbortController | undefined;

  constructor(options: DelivererOptions) {
    this.#o = { leaseMs: 120_000, pollMs: 15_000, ...options };
  }

  /** One pass: every row due now, claimed one by one until none is left (or `signal` aborts). */
  async deliverDue(signal?: AbortSignal): Promise<DeliveryPass> {
    const pass: DeliveryPass = { sent: 0, retried: 0, failed: 0 };
    // Messages held for quiet hours that have ended go now, folded per channel.
    await releaseHeld(this.#o.db, this.#o.clock.now());
    while (!signal?.aborted) {
      const now = this.#o.clock.now();
      const token = randomUUID();
      const row = await claimNextNotification(this.#o.db, now, new Date(now.getTime() + this.#o.leaseMs), token);
      if (row === undefined) return pass;
      const lease: NotificationLease = { id: row.id, token };
      if (signal?.aborted) {
        await releaseNotification(this.#o.db, lease);
        return pass;
      }
      const outcome = await this.#deliverLeased(row, lease, signal);
      if (outcome === 'lost') pass.lost = (pass.lost ?? 0) + 1;
      else pass[outcome]++;
    }
    return pass;
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

  /**
   * Delivers a claimed row while renewing its lease. The renewal runs on a real timer: it keeps
   * the claim alive for as long as this process really sends, whatever the injected clock does.
   * A renewal that finds the row claimed by another sender ends the send.
   */
  async #deliverLeased(row: NotificationRow, lease: NotificationLease, signal?: AbortSignal): Promise<Outcome> {
    const { db, clock, leaseMs, logger } = this.#o;
    const lost = new AbortController();
    let renewing: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      renewing = renewing.then(async () => {
        try {
          if (!(await renewNotificationLease(db, lease, new Date(clock.now().getTime() + leaseMs)))) lost.abort(new Error('its lease ran out and another sender claimed it'));
        } catch (error) {
          // A renewal missed for a database hiccup is made good by the next one, within the lease.
          logger.warn({ err: error, notificationId: row.id }, `could not renew the lease of notification ${row.id}; trying again`);
        }
      });
    }, Math.max(100, Math.floor(leaseMs / 3)));
    timer.unref();
    try {
      return await this.#deliver(row, lease, signal === undefined ? lost.signal : AbortSignal.any([signal, lost.signal]));
    } finally {
      clearInterval(timer);
      await renewing;
    }
  }

  async #deliver(row: NotificationRow, lease: NotificationLease, signal: AbortSignal): Promise<Outcome> {
    const { db, clock, logger, channels, maxAttempts, metrics } = this.#o;
    const event = row.payload as NotificationEvent;
    const log = logger.child({ notificationId: row.id, eventId: row.event_id, eventType: row.event_type, channel: row.channel, attempt: row.attempts });
    const lostLease = (outcome: string): Outcome => {
      log.warn(`notification ${row.id} (${row.event_type}): its lease ran out while it was being sent and another sender claimed it; this sender's outcome (${outcome}) was not recorded`);
      return 'lost';
    };
    const channel = channels.get(row.channel);
    if (!channel) {
      const reason = `the ${row.channel} channel is no longer configured (${CHANNEL_VARIABLES[row.channel]})`;
      if (!(await markNotificationFailed(db, lease, reason))) return lostLease('failed');
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
        if (!(await markNotificationFailed(db, lease, why))) return lostLease('failed');
        metrics?.recordNotification(row.channel, 'failed');
        log.error({ reason: why }, `notification ${row.id} (${row.event_type}) to ${channel.target} failed: ${why}`);
        return 'failed';
      }
      const retryAfter = error instanceof NotificationError ? error.retryAfterMs : undefined;
      const delay = retryAfter === undefined ? retryDelayMs(row.attempts) : Math.min(Math.max(retryAfter, 1000), MAX_RETRY_AFTER_MS);
      const next = new Date(clock.now().getTime() + delay);
      if (!(await scheduleNotificationRetry(db, lease, next, reason))) return lostLease('tried again later');
      metrics?.recordNotification(row.channel, 'retry');
      log.warn({ reason, nextAttemptAt: next.toISOString() }, `notification ${row.id} (${row.event_type}) to ${channel.target} not delivered (attempt ${row.attempts} of ${maxAttempts}); next attempt at ${next.toISOString()}`);
      return 'retried';
    }
    if (!(await markNotificationSent(db, lease, clock.now()))) return lostLease('sent');
    metrics?.recordNotification(row.channel, 'sent');
    log.info(`notification ${row.id} (${row.event_type}) sent to ${channel.target}`);
    return 'sent';
  }
}
