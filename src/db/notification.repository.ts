import { sql, type ExpressionBuilder, type Kysely, type Transaction } from 'kysely';
import type { Database, NotificationChannel, NotificationRow, NotificationStatus } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface NewNotification {
  eventId: string;
  eventType: string;
  dedupeKey: string;
  channel: NotificationChannel;
  payload: unknown;
  status: NotificationStatus;
  nextAttemptAt: Date;
  createdAt: Date;
  /** The summary a folded row belongs to (a backfill's); null otherwise. */
  foldGroup: string | null;
}

/**
 * Adds an event's row for one channel to the outbox. A row whose outcome and channel are already
 * there (another replica settled the same night) is left alone. Returns whether it was added.
 */
export async function insertNotification(db: Db, row: NewNotification): Promise<boolean> {
  const inserted = await db
    .insertInto('notifications')
    .values({
      event_id: row.eventId,
      event_type: row.eventType,
      dedupe_key: row.dedupeKey,
      channel: row.channel,
      payload: JSON.stringify(row.payload),
      status: row.status,
      next_attempt_at: row.nextAttemptAt,
      created_at: row.createdAt,
      fold_group: row.foldGroup,
    })
    .onConflict((oc) => oc.constraint('notifications_once').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * Claims the next pending row that is due and not leased, under a fresh `token`, counting the
 * attempt now (a sender that dies mid-send has still used one). One row per claim: the lease
 * then covers only the delivery its holder is making, never rows waiting behind it. `skip
 * locked` lets replicas claim side by side without waiting on or taking each other's rows.
 */
export async function claimNextNotification(db: Kysely<Database>, now: Date, leaseUntil: Date, token: string): Promise<NotificationRow | undefined> {
  const result = await sql<NotificationRow>`
    update notifications set attempts = attempts + 1, locked_until = ${leaseUntil}, lease_token = ${token}
    where id = (
      select id from notifications
      where status = 'pending' and next_attempt_at <= ${now} and (locked_until is null or locked_until <= ${now})
      order by next_attempt_at, id
      limit 1
      for update skip locked
    )
    returning *`.execute(db);
  return result.rows[0];
}

/** The lease a sender holds on one row: every write below changes the row only while it is still this claim's. */
export interface NotificationLease {
  id: string;
  token: string;
}

const held = (lease: NotificationLease) => (eb: ExpressionBuilder<Database, 'notifications'>) =>
  eb.and([eb('id', '=', lease.id), eb('lease_token', '=', lease.token), eb('status', '=', 'pending')]);

/** Extends a held lease to `leaseUntil`; false when the row is no longer this claim's (its lease ran out and another sender took it). */
export async function renewNotificationLease(db: Db, lease: NotificationLease, leaseUntil: Date): Promise<boolean> {
  const result = await db.updateTable('notifications').set({ locked_until: leaseUntil }).where(held(lease)).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Gives back a claimed row that was not tried (a shutdown came first): unleased, its attempt not counted. */
export async function releaseNotification(db: Db, lease: NotificationLease): Promise<void> {
  await db
    .updateTable('notifications')
    .set((eb) => ({ locked_until: null, lease_token: null, attempts: eb('attempts', '-', 1) }))
    .where(held(lease))
    .execute();
}

// The outcomes are fenced by the lease: a sender whose lease ran out (frozen, or slower than the
// lease) and whose row another sender then claimed changes nothing, so its late "failed" can never
// overwrite the other's "sent". Each returns whether it was written.

/** The row reached its channel. */
export async function markNotificationSent(db: Db, lease: NotificationLease, at: Date): Promise<boolean> {
  const result = await db.updateTable('notifications').set({ status: 'sent', sent_at: at, locked_until: null, lease_token: null, last_error: null }).where(held(lease)).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The attempt failed; the row is tried again at `nextAttemptAt`. */
export async function scheduleNotificationRetry(db: Db, lease: NotificationLease, nextAttemptAt: Date, error: string): Promise<boolean> {
  const result = await db.updateTable('notifications').set({ next_attempt_at: nextAttemptAt, locked_until: null, lease_token: null, last_error: error }).where(held(lease)).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The row will not be sent: refused for good, or out of attempts. */
export async function markNotificationFailed(db: Db, lease: NotificationLease, error: string): Promise<boolean> {
  const result = await db.updateTable('notifications').set({ status: 'failed', locked_until: null, lease_token: null, last_error: error }).where(held(lease)).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Queues a failed row again, due at `at` with a fresh count of attempts (its last error kept
 * until the next attempt replaces it). Returns the row as it was, or undefined when there is no
 * such row; a row that is not failed is left as it is.
 */
export async function requeueFailedNotification(db: Kysely<Database>, id: string, at: Date): Promise<{ before: NotificationRow; requeued: boolean } | undefined> {
  return db.transaction().execute(async (trx) => {
    const before = await trx.selectFrom('notifications').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (before === undefined) return undefined;
    if (before.status !== 'failed') return { before, requeued: false };
    await trx.updateTable('notifications').set({ status: 'pending', attempts: 0, next_attempt_at: at, locked_until: null, lease_token: null }).where('id', '=', id).execute();
    return { before, requeued: true };
  });
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

/** Whether an outcome was already queued (on any channel) under its dedupe key. */
export async function hasQueuedOutcome(db: Db, dedupeKey: string): Promise<boolean> {
  const row = await db.selectFrom('notifications').select('id').where('dedupe_key', '=', dedupeKey).limit(1).executeTakeFirst();
  return row !== undefined;
}
