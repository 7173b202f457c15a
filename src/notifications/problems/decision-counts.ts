import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.types.js';

/**
 * The decisions about problem events so far, per channel and decision (sent, folded, repeat,
 * snoozed, quiet, immaterial), read from `notification_decisions` whoever made them (a reconcile
 * command, the worker, another replica): what wallet_recon_notifications_total{channel,decision}
 * counts. Decisions without a channel (none configured) are left out.
 */
export async function countDecisions(db: Kysely<Database>): Promise<Array<{ channel: string; decision: string; n: number }>> {
  const rows = await db
    .selectFrom('notification_decisions')
    .select(['channel', 'decision', (eb) => eb.fn.countAll<string>().as('n')])
    .where('channel', '<>', '')
    .groupBy(['channel', 'decision'])
    .execute();
  return rows.map((r) => ({ channel: r.channel, decision: r.decision, n: Number(r.n) }));
}
