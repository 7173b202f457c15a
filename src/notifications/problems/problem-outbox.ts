import { sql, type Kysely, type Transaction } from 'kysely';
import type { Config } from '../../config/index.js';
import type { Database, NotificationChannel, NotificationDecision, NotificationStatus } from '../../db/database.types.js';
import { instantOfWall, wallClockOf } from '../../business-date/zoned-time.js';
import { createEvent, type EventData, type EventType, type NotificationEvent } from '../events.js';
import { configuredChannels } from '../outbox.js';

type Db = Kysely<Database> | Transaction<Database>;

const DAY_MS = 86_400_000;

/** When the quiet hours around `now` end, or undefined when `now` is not inside them. */
export function quietUntil(config: Pick<Config, 'quiet' | 'timezone'>, now: Date): Date | undefined {
  const quiet = config.quiet.quietHours;
  if (quiet === undefined) return undefined;
  const wall = wallClockOf(now.getTime(), config.timezone);
  const minute = Math.floor((((wall % DAY_MS) + DAY_MS) % DAY_MS) / 60_000);
  const inside = quiet.start < quiet.end ? minute >= quiet.start && minute < quiet.end : minute >= quiet.start || minute < quiet.end;
  if (!inside) return undefined;
  const dayStart = wall - (((wall % DAY_MS) + DAY_MS) % DAY_MS);
  let end = dayStart + quiet.end * 60_000;
  if (end <= wall) end += DAY_MS;
  return new Date(instantOfWall(end, config.timezone));
}

/** Who and what a decision is about, for `notify log`. */
export interface DecisionSubject {
  businessDate: string | null;
  account: string | null;
  currency: string | null;
  fingerprint: string | null;
}

/** Records what became of an event on each configured channel (or on none: channel ''). */
export async function recordDecision(
  db: Db,
  config: Pick<Config, 'notifications'>,
  eventType: string,
  subject: DecisionSubject,
  decision: NotificationDecision,
  reason: string,
  dedupeKey: string,
  at: Date,
  channels: readonly string[] = configuredChannels(config),
): Promise<void> {
  const rows = (channels.length === 0 ? [''] : channels).map((channel) => ({
    event_type: eventType,
    business_date: subject.businessDate,
    account: subject.account,
    currency: subject.currency,
    fingerprint: subject.fingerprint,
    channel,
    decision,
    reason,
    dedupe_key: dedupeKey,
    created_at: at,
  }));
  await db.insertInto('notification_decisions').values(rows).onConflict((oc) => oc.constraint('notification_decisions_once').doNothing()).execute();
}

/** Problem messages of a channel and business date that go (or went) out on their own: what the cap counts. */
async function countUncapped(db: Db, channel: NotificationChannel, businessDate: string): Promise<number> {
  const row = await sql<{ n: string }>`
    select count(*)::text as n from notifications
    where channel = ${channel} and event_type like 'problem.%' and event_type <> 'problem.folded'
      and status <> 'folded' and payload->'data'->>'businessDate' = ${businessDate}`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

async function insertRow(db: Db, event: NotificationEvent, channel: NotificationChannel, dedupeKey: string, status: NotificationStatus, nextAttemptAt: Date, at: Date): Promise<boolean> {
  const inserted = await db
    .insertInto('notifications')
    .values({ event_id: event.id, event_type: event.type, dedupe_key: dedupeKey, channel, payload: JSON.stringify(event), status, next_attempt_at: nextAttemptAt, created_at: at })
    .onConflict((oc) => oc.constraint('notifications_once').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/**
 * Writes a problem event to the outbox, one row per configured channel, deciding per channel: past
 * RECON_NOTIFY_MAX_PER_NIGHT problem messages for its business date the row is `folded` (kept, sent
 * only inside the date's problem.folded summary); inside quiet hours on a quiet channel it is `held`
 * until they end; else it is queued (`sent` in the log). Each decision is logged. The same outcome
 * written twice (dedupeKey) adds nothing.
 */
export async function enqueueProblemEvent(
  db: Db,
  config: Pick<Config, 'notifications' | 'quiet' | 'timezone'>,
  type: EventType,
  data: EventData,
  subject: DecisionSubject & { businessDate: string },
  reason: string,
  dedupeKey: string,
  at: Date,
): Promise<void> {
  const channels = configuredChannels(config);
  if (channels.length === 0) {
    await recordDecision(db, config, type, subject, 'sent', `${reason} (no channel is configured: nothing to send)`, dedupeKey, at, []);
    return;
  }
  const event = createEvent(type, at, data);
  const quietEnd = quietUntil(config, at);
  for (const channel of channels) {
    const uncapped = await countUncapped(db, channel, subject.businessDate);
    let status: NotificationStatus = 'pending';
    let decision: NotificationDecision = 'sent';
    let why = reason;
    let next = at;
    if (uncapped >= config.quiet.maxPerNight) {
      status = 'folded';
      decision = 'folded';
      why = `${reason}; folded: ${config.quiet.maxPerNight} problem messages already went to ${channel} for ${subject.businessDate} (RECON_NOTIFY_MAX_PER_NIGHT)`;
    } else if (quietEnd !== undefined && config.quiet.quietChannels.includes(channel)) {
      status = 'held';
      decision = 'quiet';
      next = quietEnd;
      why = `${reason}; held for quiet hours (RECON_QUIET_HOURS ${config.quiet.quietHours!.text}) until ${quietEnd.toISOString()}`;
    }
    if (await insertRow(db, event, channel, dedupeKey, status, next, at)) await recordDecision(db, config, type, subject, decision, why, dedupeKey, at, [channel]);
  }
}

/** One problem in a folded summary. */
export interface FoldedProblem {
  type: string;
  account: string;
  currency: string;
  kind: string;
  fingerprint: string;
  amount: string | null;
}

export interface ProblemFoldedData {
  count: number;
  channel: string;
  businessDate: string | null;
  problems: FoldedProblem[];
  /** Why they were folded: the cap, quiet hours or a backfill. */
  reason: string;
}

function foldedOf(payload: unknown): FoldedProblem {
  const e = payload as NotificationEvent<Record<string, unknown>>;
  const d = e.data;
  return {
    type: e.type,
    account: String(d.account ?? ''),
    currency: String(d.currency ?? ''),
    kind: String(d.kind ?? ''),
    fingerprint: String(d.fingerprint ?? ''),
    amount: d.amount === undefined || d.amount === null ? null : String(d.amount),
  };
}

/**
 * After a date's reconciliation: per channel, the problem messages the cap folded become one
 * `problem.folded` summary, queued at once (never capped). Its key counts what it carries, so a
 * later reconciliation that folds more sends one more summary of them all, and a re-run nothing.
 */
export async function summarizeFolded(db: Db, config: Pick<Config, 'notifications'>, businessDates: readonly string[], at: Date): Promise<number> {
  let written = 0;
  for (const businessDate of [...new Set(businessDates)].sort()) {
    for (const channel of configuredChannels(config)) {
      const rows = await db
        .selectFrom('notifications')
        .select(['payload'])
        .where('channel', '=', channel)
        .where('status', '=', 'folded')
        .where('event_type', 'like', 'problem.%')
        .where(sql<boolean>`payload->'data'->>'businessDate' = ${businessDate}`)
        .orderBy('id')
        .execute();
      if (rows.length === 0) continue;
      const data: ProblemFoldedData = { count: rows.length, channel, businessDate, problems: rows.map((r) => foldedOf(r.payload)), reason: 'RECON_NOTIFY_MAX_PER_NIGHT' };
      const event = createEvent('problem.folded', at, data);
      if (await insertRow(db, event, channel, `problem.folded:${businessDate}:cap:${rows.length}`, 'pending', at, at)) written++;
    }
  }
  return written;
}

/**
 * Ends quiet hours: held rows whose time came are sent, one per channel — a single one as it is,
 * several folded into one `problem.folded`. Called by the deliverer before each pass.
 */
export async function releaseHeld(db: Kysely<Database>, now: Date): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx.selectFrom('notifications').select(['id', 'channel', 'payload']).where('status', '=', 'held').where('next_attempt_at', '<=', now).orderBy('id').forUpdate().skipLocked().execute();
    const byChannel = new Map<NotificationChannel, typeof rows>();
    for (const r of rows) byChannel.set(r.channel, [...(byChannel.get(r.channel) ?? []), r]);
    for (const [channel, held] of byChannel) {
      if (held.length === 1) {
        await trx.updateTable('notifications').set({ status: 'pending', next_attempt_at: now }).where('id', '=', held[0]!.id).execute();
        continue;
      }
      await trx.updateTable('notifications').set({ status: 'folded' }).where('id', 'in', held.map((h) => h.id)).execute();
      const data: ProblemFoldedData = { count: held.length, channel, businessDate: null, problems: held.map((h) => foldedOf(h.payload)), reason: 'RECON_QUIET_HOURS' };
      const event = createEvent('problem.folded', now, data);
      await insertRow(trx, event, channel, `problem.folded:quiet:${held[0]!.id}:${held.length}`, 'pending', now, now);
    }
    return rows.length;
  });
}
