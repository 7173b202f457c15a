import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, NotificationChannel, NotificationRow, NotificationStatus } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewNotification {
  eventId: string;
  eventType: string;
  dedupeKey: string;
  channel: NotificationChannel;
  payload: unknown;
  createdAt: Date;
}

/**
 * Adds events to the outbox, one row per channel. A row whose event and channel are already
 * there (another replica settled the same night) is left alone. Returns how many rows were added.
 */
export async function insertNotifications(db: Db, rows: readonly NewNotification[]): Promise<number> {
  if (rows.length === 0) return 0;
  const inserted = await db
    .insertInto('notifications')
    .values(
      rows.map((r) => ({
        event_id: r.eventId,
        event_type: r.eventType,
        dedupe_key: r.dedupeKey,
        channel: r.channel,
        payload: JSON.stringify(r.payload),
        next_attempt_at: r.createdAt,
        created_at: r.createdAt,
      })),
    )
    .onConflict((oc) => oc.constraint('notifications_once').doNothing())
    .returning('id')
    .execute();
  return inserted.length;
}

/**
 * Claims up to `limit` pending rows that are due and not leased, counting the attempt now (a
 * sender that dies mid-send has still used one). `skip locked` lets replicas claim side by side
 * without waiting on or taking each other's rows; the lease keeps a row theirs after commit.
 */
export async function claimDueNotifications(db: Kysely<Database>, now: Date, leaseUntil: Date, limit: number): Promise<NotificationRow[]> {
  const result = await sql<NotificationRow>`
    update notifications set attempts = attempts + 1, locked_until = ${leaseUntil}
    where id in (
      select id from notifications
      where status = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until <= ${now})
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked
    )
    returning *`.execute(db);
  return [...result.rows].sort((a, b) => Number(a.id) - Number(b.id));
}

/** Gives back claimed rows that were not tried (a shutdown came first): unleased, their attempt not counted. */
export async function releaseNotifications(db: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('notifications')
    .set((eb) => ({ locked_until: null, attempts: eb('attempts', '-', 1) }))
    .where('id', 'in', [...ids])
    .where('status', '=', 'pending')
    .execute();
}

/** The row reached its channel. */
export async function markNotificationSent(db: Db, id: string, at: Date): Promise<void> {
  await db.updateTable('notifications').set({ status: 'sent', sent_at: at, locked_until: null, last_error: null }).where('id', '=', id).execute();
}

/** The attempt failed; the row is tried again at `nextAttemptAt`. */
export async function scheduleNotificationRetry(db: Db, id: string, nextAttemptAt: Date, error: string): Promise<void> {
  await db.updateTable('notifications').set({ next_attempt_at: nextAttemptAt, locked_until: null, last_error: error }).where('id', '=', id).execute();
}

/** The row will not be sent: refused for good, or out of attempts. */
export async function markNotificationFailed(db: Db, id: string, error: string): Promise<void> {
  await db.updateTable('notifications').set({ status: 'failed', locked_until: null, last_error: error }).where('id', '=', id).execute();
}

/** The outbox, newest first. */
export async function listNotifications(db: Db, options: { status?: NotificationStatus; limit: number }): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications').selectAll().orderBy('id', 'desc').limit(options.limit);
  if (options.status !== undefined) query = query.where('status', '=', options.status);
  return query.execute();
}

/** Rows still to be sent. */
export async function countPendingNotifications(db: Db): Promise<number> {
  const row = await db.selectFrom('notifications').select((eb) => eb.fn.countAll<string>().as('n')).where('status', '=', 'pending').executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** When the next pending row falls due (its lease end, if later), or undefined when none is pending. */
export async function findNextDueAt(db: Db): Promise<Date | undefined> {
  const row = await db
    .selectFrom('notifications')
    .select(sql<Date>`min(greatest(next_attempt_at, coalesce(locked_until, next_attempt_at)))`.as('due'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return row?.due ?? undefined;
}
