import type { Command } from 'commander';
import { parseBusinessDate } from '../reconciliation/business-dates.js';
import type { CliRuntime } from './runtime.js';

/** `wallet-recon notify log [--date D] [--json]`: what became of each event on each channel, and why (issue 45). */
export function registerNotifyLogCommand(notify: Command, runtime: CliRuntime): void {
  notify
    .command('log')
    .description('list per event and channel whether it was sent, folded, suppressed as a repeat, snoozed, held for quiet hours or immaterial, and why')
    .option('--date <date>', 'only this business date, YYYY-MM-DD')
    .option('--json', 'a JSON array of { event, business_date, account, currency, fingerprint, channel, decision, reason }')
    .addHelpText('after', '\nExamples:\n  wallet-recon notify log --date 2026-11-20\n  wallet-recon notify log --json\n\nExit codes: 0 listed, 2 a bad date.')
    .action(async (opts: { date?: string; json?: boolean }) => {
      const date = opts.date === undefined ? undefined : parseBusinessDate(opts.date, '--date');
      await runtime.withContext('wallet-recon notify log', {}, async (ctx) => {
        let query = ctx.database.db
          .selectFrom('notification_decisions')
          .select(['event_type', 'business_date', 'account', 'currency', 'fingerprint', 'channel', 'decision', 'reason'])
          .orderBy('business_date')
          .orderBy('id');
        if (date !== undefined) query = query.where('business_date', '=', date);
        const rows = (await query.execute()).map((r) => ({
          event: r.event_type,
          business_date: r.business_date,
          account: r.account,
          currency: r.currency,
          fingerprint: r.fingerprint,
          channel: r.channel === '' ? null : r.channel,
          decision: r.decision,
          reason: r.reason,
        }));
        if (opts.json) {
          runtime.output.out(JSON.stringify(rows, null, 2));
          return 0;
        }
        if (rows.length === 0) {
          runtime.output.err(date === undefined ? 'No notification decisions yet.' : `No notification decisions for ${date}.`);
          return 0;
        }
        const table = [
          ['date', 'event', 'account', 'currency', 'channel', 'decision', 'reason'],
          ...rows.map((r) => [r.business_date ?? '', r.event, r.account ?? '', r.currency ?? '', r.channel ?? '-', r.decision, r.reason]),
        ];
        const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
        for (const row of table) runtime.output.out(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd());
        return 0;
      });
    });
}
