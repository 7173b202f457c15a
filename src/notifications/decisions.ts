import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../config/index.js';
import type { Database, NotificationChannel, NotificationDecision } from '../db/database.types.js';
import { instantOfWall, wallClockOf } from '../business-date/zoned-time.js';

type Db = Kysely<Database> | Transaction<Database>;

const DAY_MS = 86_400_000;

/** The channels the configuration sets up, in a fixed order. */
export function configuredChannels(config: Pick<Config, 'notifications'>): NotificationChannel[] {
  const n = config.notifications;
  return [...(n.webhook ? ['webhook' as const] : []), ...(n.slack ? ['slack' as const] : []), ...(n.email ? ['email' as const] : [])];
}

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
