import { sql, type Kysely, type Transaction } from 'kysely';
import type { Config } from '../../config/index.js';
import type { Database, NotificationChannel, NotificationDecision, NotificationStatus } from '../../db/database.types.js';
import { insertNotification } from '../../db/notification.repository.js';
import { createEvent, headlineOf, type EventData, type EventType, type NotificationEvent } from '../events.js';
import { configuredChannels, quietUntil, recordDecision, type DecisionSubject } from '../decisions.js';
import { foldedReason, foldScopeFor, type FoldScope } from '../fold-scope.js';

type Db = Kysely<Database> | Transaction<Database>;

export { quietUntil, recordDecision, type DecisionSubject } from '../decisions.js';

/** Problem messages of a channel and business date that go (or went) out on their own: what the cap counts. */
async function countUncapped(db: Db, channel: NotificationChannel, businessDate: string): Promise<number> {
  const row = await sql<{ n: string }>`
    select count(*)::text as n from notifications
    where channel = ${channel} and event_type like 'problem.%' and event_type <> 'problem.folded'
      and status <> 'folded' and payload->'data'->>'businessDate' = ${businessDate}`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

/** Writes one outbox row; false when the same outcome was written before (its dedupe key). */
export function insertRow(
  db: Db,
  event: NotificationEvent,
  channel: NotificationChannel,
  dedupeKey: string,
  status: NotificationStatus,
  nextAttemptAt: Date,
  at: Date,
  foldGroup: string | null = null,
): Promise<boolean> {
  return insertNotification(db, { eventId: event.id, eventType: event.type, dedupeKey, channel, payload: event, status, nextAttemptAt, createdAt: at, foldGroup });
}

/**
 * Writes a problem event to the outbox, one row per configured channel, deciding per channel:
 * inside a backfill (or an import of several past dates) it is `folded` into that work's one
 * summary; past RECON_NOTIFY_MAX_PER_NIGHT problem messages for its business date it is `folded`
 * (kept, sent only inside the date's problem.folded summary); inside quiet hours on a quiet
 * channel it is `held` until they end; else it is queued (`sent` in the log). Each decision is
 * logged. The same outcome written twice (dedupeKey) adds nothing.
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
  const scope = foldScopeFor(type);
  const quietEnd = quietUntil(config, at);
  for (const channel of channels) {
    let status: NotificationStatus = 'pending';
    let decision: NotificationDecision = 'sent';
    let why = reason;
    let next = at;
    if (scope !== undefined) {
      status = 'folded';
      decision = 'folded';
      why = `${reason}; ${foldedReason(scope)}`;
    } else if ((await countUncapped(db, channel, subject.businessDate)) >= config.quiet.maxPerNight) {
      status = 'folded';
      decision = 'folded';
      why = `${reason}; folded: ${config.quiet.maxPerNight} problem messages already went to ${channel} for ${subject.businessDate} (RECON_NOTIFY_MAX_PER_NIGHT)`;
    } else if (quietEnd !== undefined && config.quiet.quietChannels.includes(channel)) {
      status = 'held';
      decision = 'quiet';
      next = quietEnd;
      why = `${reason}; held for quiet hours (RECON_QUIET_HOURS ${config.quiet.quietHours!.text}) until ${quietEnd.toISOString()}`;
    }
    if (await insertRow(db, event, channel, dedupeKey, status, next, at, scope?.group ?? null)) await recordDecision(db, config, type, subject, decision, why, dedupeKey, at, [channel]);
  }
}

/** One message in a folded summary: a problem, or another event held for quiet hours. */
export interface FoldedProblem {
  type: string;
  account: string;
  currency: string;
  kind: string;
  fingerprint: string;
  amount: string | null;
  businessDate?: string | null;
  /** The message's own headline, as it would have been sent alone. */
  headline?: string;
}

export interface ProblemFoldedData {
  /** Messages folded into this one. */
  count: number;
  channel: string;
  businessDate: string | null;
  /** The folded messages (a backfill's: the first 200, `more` counts the rest). */
  problems: FoldedProblem[];
  /** Why they were folded: RECON_NOTIFY_MAX_PER_NIGHT, RECON_QUIET_HOURS, or the work that folded them ("backfill"). */
  reason: string;
  /** A backfill's or an import's range of business dates. */
  range?: { from: string; to: string };
  /** A backfill's or an import's folded messages per event type ("problem.new": 3, "books.missing": 30). */
  counts?: Record<string, number>;
  /** Folded messages beyond those listed in `problems`. */
  more?: number;
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
    businessDate: typeof d.businessDate === 'string' ? d.businessDate : null,
    headline: headlineOf(payload as NotificationEvent),
  };
}

/**
 * After a date's reconciliation: per channel, the problem messages the cap folded become one
 * `problem.folded` summary, queued at once (never capped). Its key counts what it carries, so a
 * later reconciliation that folds more sends one more summary of them all, and a re-run nothing.
 * Rows a backfill folded belong to its own summary and are left out.
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
        .where('fold_group', 'is', null)
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

/** Problems a backfill's summary lists by name; the rest are counted. */
const SCOPE_LISTED = 200;

/**
 * Ends a backfill (or an import of several past dates): per channel, one `problem.folded` with its
 * range and its folded messages counted per type, the most material first, queued at once (it
 * is itself held during quiet hours on a quiet channel). Nothing folded, nothing sent.
 */
export async function summarizeFoldScope(db: Db, config: Pick<Config, 'notifications' | 'quiet' | 'timezone'>, scope: FoldScope, at: Date): Promise<number> {
  let written = 0;
  const quietEnd = quietUntil(config, at);
  for (const channel of configuredChannels(config)) {
    const rows = await db.selectFrom('notifications').select(['event_type', 'payload']).where('channel', '=', channel).where('fold_group', '=', scope.group).orderBy('id').execute();
    if (rows.length === 0) continue;
    const counts: Record<string, number> = {};
    for (const r of rows) counts[r.event_type] = (counts[r.event_type] ?? 0) + 1;
    const all = rows.map((r) => foldedOf(r.payload));
    // New and changed problems first, then the rest, each by size of amount.
    const rank = (p: FoldedProblem) => ['problem.new', 'problem.changed', 'books.missing', 'problem.aging', 'item.overdue', 'problem.cleared'].indexOf(p.type);
    const size = (p: FoldedProblem) => (p.amount === null ? 0 : Math.abs(Number(p.amount)));
    all.sort((a, b) => rank(a) - rank(b) || size(b) - size(a));
    const data: ProblemFoldedData = {
      count: rows.length,
      channel,
      businessDate: null,
      problems: all.slice(0, SCOPE_LISTED),
      reason: scope.label,
      range: { from: scope.from, to: scope.to },
      counts,
      more: Math.max(0, all.length - SCOPE_LISTED),
    };
    const event = createEvent('problem.folded', at, data);
    const held = quietEnd !== undefined && config.quiet.quietChannels.includes(channel);
    const key = `problem.folded:${scope.group}`;
    if (!(await insertRow(db, event, channel, key, held ? 'held' : 'pending', held ? quietEnd : at, at))) continue;
    written++;
    const summary = `${rows.length} message${rows.length === 1 ? '' : 's'} of the ${scope.label} of ${scope.from} to ${scope.to} in one summary`;
    await recordDecision(db, config, 'problem.folded', { businessDate: null, account: null, currency: null, fingerprint: null }, held ? 'quiet' : 'sent', held ? `${summary}; held for quiet hours until ${quietEnd.toISOString()}` : summary, key, at, [channel]);
  }
  return written;
}

/**
 * Ends quiet hours: held rows whose time came are sent, one per channel — a single one as it is,
 * several (problems, a digest, any other message) folded into one `problem.folded` listing each.
 * Called by the deliverer before each pass.
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
      // Named as this summary's: the per-night cap's summary of their date must not send them again.
      await trx.updateTable('notifications').set({ status: 'folded', fold_group: `quiet:${held[0]!.id}` }).where('id', 'in', held.map((h) => h.id)).execute();
      const data: ProblemFoldedData = { count: held.length, channel, businessDate: null, problems: held.map((h) => foldedOf(h.payload)), reason: 'RECON_QUIET_HOURS' };
      const event = createEvent('problem.folded', now, data);
      await insertRow(trx, event, channel, `problem.folded:quiet:${held[0]!.id}:${held.length}`, 'pending', now, now);
    }
    return rows.length;
  });
}
