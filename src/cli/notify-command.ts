import { Option, type Command } from 'commander';
import type { NotificationStatus } from '../db/database.types.js';
import { listNotifications, requeueFailedNotification } from '../db/notification.repository.js';
import { ConfigError, describeError, UsageError } from '../errors.js';
import { createEvent } from '../notifications/events.js';
import { createChannels } from '../notifications/create-channels.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';
import { formatLocalTime } from '../business-date/local-time.js';
import { registerNotifyLogCommand } from './notify-log-command.js';

const STATUSES: readonly NotificationStatus[] = ['pending', 'sent', 'failed'];

/** `wallet-recon notify test | list | retry`: try the channels, read the outbox, queue a failed row again. */
export function registerNotifyCommand(program: Command, runtime: CliRuntime): void {
  const notify = program
    .command('notify')
    .description(summaryOf('notify'))
    .addHelpText(
      'after',
      '\nChannels: RECON_WEBHOOK_URL + RECON_WEBHOOK_SECRET (signed webhook), RECON_SLACK_WEBHOOK_URL (Slack),\n' +
        'RECON_SMTP_URL + RECON_MAIL_FROM + RECON_MAIL_TO (e-mail). The worker sends night.completed and date.missed events.\n\n' +
        'Examples:\n  wallet-recon notify test\n  wallet-recon notify list --status failed\n  wallet-recon notify retry 42',
    );

  notify
    .command('test')
    .description('send one test event to every configured channel now and report each outcome')
    .addHelpText('after', '\nExit codes: 0 every channel took it, 1 a channel failed, 2 no channel is configured, 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.')
    .action(async () => {
      const config = runtime.config();
      const now = runtime.clock.now();
      const channels = createChannels(config, undefined, () => runtime.clock.now());
      if (channels.size === 0) {
        throw new ConfigError('No notification channel is configured: set RECON_WEBHOOK_URL (with RECON_WEBHOOK_SECRET), RECON_SLACK_WEBHOOK_URL, or RECON_SMTP_URL (with RECON_MAIL_FROM and RECON_MAIL_TO).');
      }
      const event = createEvent('notification.test', now, { message: 'This is a test from wallet-recon: this channel works.' });
      let failed = 0;
      for (const channel of channels.values()) {
        try {
          await channel.send(event, runtime.clock.now());
          runtime.output.out(`ok      ${channel.target}`);
        } catch (error) {
          failed++;
          runtime.output.out(`FAILED  ${channel.target}: ${describeError(error)}`);
        } finally {
          channel.close?.();
        }
      }
      runtime.output.err(
        `${channels.size - failed} of ${channels.size} channel(s) took the test event ${event.id}.` +
          (failed > 0 ? ' A test event is sent once and never queued: fix the failed channel and run notify test again.' : ''),
      );
      runtime.exitCode = failed > 0 ? 1 : 0;
    });

  notify
    .command('list')
    .description('show the notifications outbox, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(STATUSES))
    .option('--limit <n>', 'at most this many rows', '50')
    .option('--json', 'one JSON object per line instead of a table')
    .addHelpText('after', '\nExample:\n  wallet-recon notify list --status failed')
    .action(async (opts: { status?: NotificationStatus; limit: string; json?: boolean }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError(`--limit must be a whole number from 1 to 10000 (got "${opts.limit}").`);
      await runtime.withContext('wallet-recon notify list', {}, async (ctx) => {
        const rows = await listNotifications(ctx.database.db, { status: opts.status, limit });
        if (opts.json) {
          for (const r of rows) {
            runtime.output.out(
              JSON.stringify({
                id: r.id,
                eventId: r.event_id,
                type: r.event_type,
                channel: r.channel,
                status: r.status,
                attempts: r.attempts,
                nextAttemptAt: r.status === 'pending' ? r.next_attempt_at.toISOString() : null,
                lastError: r.last_error,
                createdAt: r.created_at.toISOString(),
                sentAt: r.sent_at?.toISOString() ?? null,
              }),
            );
          }
          return 0;
        }
        if (rows.length === 0) {
          runtime.output.err(opts.status === undefined ? 'The outbox is empty.' : `No ${opts.status} notifications.`);
          return 0;
        }
        const table = [
          ['id', 'created', 'type', 'channel', 'status', 'attempts', 'next attempt / sent', 'last error'],
          ...rows.map((r) => [
            r.id,
            formatLocalTime(r.created_at, ctx.config.timezone, { seconds: true }),
            r.event_type,
            r.channel,
            r.status,
            String(r.attempts),
            r.status === 'sent' ? (r.sent_at === null ? '' : formatLocalTime(r.sent_at, ctx.config.timezone, { seconds: true })) : r.status === 'pending' ? formatLocalTime(r.next_attempt_at, ctx.config.timezone, { seconds: true }) : '',
            r.last_error ?? '',
          ]),
        ];
        const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => Math.min(row[i]!.length, i === 7 ? 200 : 40))));
        for (const row of table) runtime.output.out(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd());
        return 0;
      });
    });

  registerNotifyLogCommand(notify, runtime);

  notify
    .command('retry')
    .description('queue a failed notification again: the worker sends it on its next pass, with a fresh count of attempts')
    .argument('<id>', 'the id of a failed notification (see: notify list --status failed)')
    .addHelpText('after', '\nExit codes: 0 queued again, 2 no such notification or it is not failed, 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.\n\nExample:\n  wallet-recon notify list --status failed\n  wallet-recon notify retry 42')
    .action(async (id: string) => {
      if (!/^[1-9]\d{0,17}$/.test(id)) throw new UsageError(`notify retry needs the id of a notification, a whole number such as 42 (got "${id}"); "wallet-recon notify list --status failed" lists them.`);
      await runtime.withContext('wallet-recon notify retry', {}, async (ctx) => {
        const done = await requeueFailedNotification(ctx.database.db, id, ctx.clock.now());
        if (done === undefined) throw new UsageError(`There is no notification ${id}. "wallet-recon notify list --status failed" lists the failed ones.`);
        const r = done.before;
        const what = `Notification ${id} (${r.event_type} to ${r.channel})`;
        if (!done.requeued) {
          const state = r.status === 'sent' ? `was already sent${r.sent_at === null ? '' : ` at ${formatLocalTime(r.sent_at, ctx.config.timezone)}`}` : 'is still pending: the worker is already trying it';
          throw new UsageError(`${what} is not failed: it ${state}. Only a failed notification can be retried; nothing was changed.`);
        }
        runtime.output.out(`${what} queued again: it had failed after ${r.attempts} attempt${r.attempts === 1 ? '' : 's'}${r.last_error === null ? '' : ` (${r.last_error})`}. The worker sends it on its next pass.`);
        return 0;
      });
    });
}
