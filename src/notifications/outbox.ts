import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import type { CaptureWindow } from '../business-date/business-calendar.js';
import type { Config } from '../config/index.js';
import { countConsecutiveMissedDates, recordMissedDate, type MissedDate } from '../db/capture-day.repository.js';
import type { Database, NotificationChannel } from '../db/database.types.js';
import { insertNotifications } from '../db/notification.repository.js';
import { createEvent, type DateMissedData, type EventData, type EventType } from './events.js';
import { buildNightDigest } from './night-digest.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The channels the configuration sets up, in a fixed order. */
export function configuredChannels(config: Pick<Config, 'notifications'>): NotificationChannel[] {
  const n = config.notifications;
  return [...(n.webhook ? ['webhook' as const] : []), ...(n.slack ? ['slack' as const] : []), ...(n.email ? ['email' as const] : [])];
}

/**
 * Writes an event into the outbox, one row per configured channel, inside the caller's
 * transaction. `dedupeKey` names the outcome: a second writer of the same outcome adds nothing.
 */
export async function enqueueEvent(db: Db, config: Pick<Config, 'notifications'>, type: EventType, data: EventData, dedupeKey: string, at: Date): Promise<number> {
  const channels = configuredChannels(config);
  if (channels.length === 0) return 0;
  const event = createEvent(type, at, data);
  return insertNotifications(
    db,
    channels.map((channel) => ({ eventId: event.id, eventType: type, dedupeKey, channel, payload: event, createdAt: at })),
  );
}

/**
 * Records a missed business date and, in the same transaction, its `date.missed` event: the
 * alarm exists exactly when the miss does, and only the replica that recorded it raises it.
 * Returns false when the date was already recorded.
 */
export async function recordMissedDateAndNotify(ctx: AppContext, missed: MissedDate): Promise<boolean> {
  const recorded = await ctx.database.db.transaction().execute(async (trx) => {
    if (!(await recordMissedDate(trx, missed))) return false;
    const data: DateMissedData = {
      account: missed.account,
      businessDate: missed.businessDate,
      cutoffAt: missed.cutoffAt.toISOString(),
      windowClosedAt: missed.windowClosedAt.toISOString(),
      lastError: missed.lastError,
      consecutiveMissedDates: await countConsecutiveMissedDates(trx, missed.account),
    };
    await enqueueEvent(trx, ctx.config, 'date.missed', data, `date.missed:${missed.account}:${missed.businessDate}`, missed.recordedAt);
    return true;
  });
  if (recorded) ctx.metrics?.recordMissedDate(missed.account);
  return recorded;
}

/** What the nightly job knows when a night ends. */
export interface NightEnd {
  businessDate: string;
  slot: Date;
  accounts: ReadonlyArray<{ account: string; status: 'captured' | 'missed' | 'pending' }>;
  interrupted: boolean;
}

/**
 * Writes the `night.completed` digest once the slot's business date is settled for every
 * account (none pending, not interrupted), in one transaction. Every replica that settles the
 * same slot writes the same key, so one event goes out. Never throws: telling people must not
 * fail the night. Returns whether this call wrote it.
 */
export async function enqueueNightCompleted(ctx: AppContext, night: NightEnd, window: CaptureWindow): Promise<boolean> {
  if (night.interrupted || night.accounts.some((a) => a.status === 'pending')) return false;
  if (configuredChannels(ctx.config).length === 0) return false;
  try {
    const written = await ctx.database.db.transaction().execute(async (trx) => {
      const data = await buildNightDigest(trx, {
        businessDate: night.businessDate,
        slot: night.slot,
        cutoffAt: window.cutoffAt,
        at: ctx.clock.now(),
        accounts: night.accounts.map((a) => ({ account: a.account, status: a.status === 'missed' ? 'missed' : 'captured' })),
        bankAccounts: ctx.config.bankAccounts.map((b) => b.name),
      });
      return enqueueEvent(trx, ctx.config, 'night.completed', data, `night.completed:${night.businessDate}:${night.accounts.map((a) => a.account).sort().join(',')}`, ctx.clock.now());
    });
    if (written > 0) ctx.logger.info({ businessDate: night.businessDate, notifications: written }, `night.completed for ${night.businessDate} queued for ${written} channel(s)`);
    return written > 0;
  } catch (error) {
    ctx.logger.error({ err: error, businessDate: night.businessDate }, `could not queue the night.completed notification for ${night.businessDate}`);
    return false;
  }
}
