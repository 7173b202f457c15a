import type { Kysely } from 'kysely';
import { allAccountNames, businessCalendarOf, type Config } from '../config/index.js';
import type { Database, NotificationChannel } from '../db/database.types.js';
import { numberStyleOf } from '../money/number-style.js';
import { loadCurrencyHistories, loadReport } from '../reports/report-data.js';
import { renderHtml } from '../reports/render-html.js';
import type { Channel } from './channels/channel.js';
import { createEmailChannel } from './channels/email-channel.js';
import { createSlackChannel } from './channels/slack-channel.js';
import { createWebhookChannel } from './channels/webhook-channel.js';

// Apart from the outbox: every command that writes results queues events (outbox.ts), only the
// worker and `notify` send them, and the senders bring the mailer, the HTTP client and the HTML
// report with them.

/** Builds the senders for the configured channels; with `db`, the e-mail one attaches the day's report read from it. */
export function createChannels(config: Config, db: Kysely<Database> | undefined, now: () => Date): Map<NotificationChannel, Channel> {
  const n = config.notifications;
  const channels = new Map<NotificationChannel, Channel>();
  // People read Slack and e-mail in the business's zone and locale; webhooks get the event's JSON as it is.
  const render = { timezone: config.timezone, style: numberStyleOf(config.locale) };
  if (n.webhook) channels.set('webhook', createWebhookChannel(n.webhook));
  if (n.slack) channels.set('slack', createSlackChannel(n.slack, render));
  if (n.email) {
    const accounts = allAccountNames(config);
    channels.set(
      'email',
      createEmailChannel(
        n.email,
        db &&
          (async (date) => {
            const range = { from: date, to: date };
            // Case ages to today's business date, as `cases` and the console count them, not to the report's date.
            const today = businessCalendarOf(config).businessDateOf(now());
            return renderHtml(await loadReport(db, range, { accounts, today, bankAccounts: config.bankAccounts.map((b) => b.name) }), await loadCurrencyHistories(db, range), now());
          }),
        render,
      ),
    );
  }
  return channels;
}
