import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import type { CaptureWindow } from '../business-date/business-calendar.js';
import type { Config } from '../config/index.js';
import { countConsecutiveMissedDates, recordMissedDate, type MissedDate } from '../db/capture-day.repository.js';
import type { Database } from '../db/database.types.js';
import { configuredChannels, quietUntil, recordDecision } from './decisions.js';
import { foldedReason, foldScopeFor } from './fold-scope.js';
import { insertRow } from './problems/problem-outbox.js';
import { createEvent, type DateMissedData, type EventData, type EventType } from './events.js';
import { buildNightDigest } from './night-digest.js';

type Db = Kysely<Database> | Transaction<Database>;

export { configuredChannels } from './decisions.js';

/** Asked for by a person now (`notify test`): never held for quiet hours. */
const NEVER_HELD: ReadonlySet<string> = new Set(['notification.test']);

/**
 * Writes an event into the outbox, one row per configured channel, inside the caller's
 * transaction. `dedupeKey` names the outcome: a second writer of the same outcome adds nothing.
 * Inside a backfill's fold scope a past date's event is `folded` into the backfill's summary;
 * inside RECON_QUIET_HOURS a row for a quiet channel (RECON_QUIET_HOURS_CHANNELS) is `held` until
 * they end. What became of it on each channel is recorded for `notify log`.
 */
export async function enqueueEvent(db: Db, config: Pick<Config, 'notifications' | 'quiet' | 'timezone'>, type: EventType, data: EventData, dedupeKey: string, at: Date): Promise<number> {
  const channels = configuredChannels(config);
  if (channels.length === 0) return 0;
  const event = createEvent(type, at, data);
  const scope = foldScopeFor(type);
  const quietEnd = NEVER_HELD.has(type) ? undefined : quietUntil(config, at);
  const d = data as Partial<Record<'businessDate' | 'account' | 'currency', unknown>>;
  const subject = {
    businessDate: typeof d.businessDate === 'string' ? d.businessDate : null,
    account: typeof d.account === 'string' ? d.account : null,
    currency: typeof d.currency === 'string' && d.currency !== '' ? d.currency : null,
    fingerprint: null,
  };
  let written = 0;
  for (const channel of channels) {
    const held = scope === undefined && quietEnd !== undefined && config.quiet.quietChannels.includes(channel);
    const status = scope !== undefined ? 'folded' : held ? 'held' : 'pending';
    if (!(await insertRow(db, event, channel, dedupeKey, status, held ? quietEnd : at, at, scope?.group ?? null))) continue;
    written++;
    const decision = scope !== undefined ? 'folded' : held ? 'quiet' : 'sent';
    const why = scope !== undefined ? foldedReason(scope) : held ? `held for quiet hours (RECON_QUIET_HOURS ${config.quiet.quietHours!.text}) until ${quietEnd.toISOString()}` : 'queued for delivery';
    await recordDecision(db, config, type, subject, decision, why, dedupeKey, at, [channel]);
  }
  return written;
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
