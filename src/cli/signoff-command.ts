import { formatLocalTime } from '../business-date/local-time.js';
import type { Command } from 'commander';
import { authenticateForCli } from '../console/sign-in.js';
import { approveSignoff, detectSignoffChanges, prepareSignoff, requireDate, signoffStateOf } from '../signoff/signoff-service.js';
import { UsageError } from '../errors.js';
import { formatTable } from '../text-table.js';
import { summaryOf } from './command-catalog.js';
import { readPasswordFromStdin } from './read-stdin.js';
import type { CliRuntime } from './runtime.js';

interface SignoffOptions {
  date: string;
  as?: string;
  passwordStdin?: boolean;
  json?: boolean;
}

/** `wallet-recon signoff`: the maker-checker sign-off of a business date, as in the console. */
export function registerSignoffCommand(program: Command, runtime: CliRuntime): void {
  const signoff = program
    .command('signoff')
    .description(summaryOf('signoff'))
    .addHelpText(
      'after',
      `
Examples:
  printf '%s' "$PASSWORD" | wallet-recon signoff prepare --date 2026-11-20 --as anna --password-stdin
  printf '%s' "$PASSWORD" | wallet-recon signoff approve --date 2026-11-20 --as ben --password-stdin
  wallet-recon signoff show --date 2026-11-20

A preparer (or admin) prepares a date once none of its cases is open; an approver (or admin) who
did not prepare it approves it. The HTML report is sealed at preparation (its SHA-256 is printed);
when the date's books, snapshot or cases change afterwards it must be signed again.

Exit codes: 0 done, 1 refused (role, open cases, the preparer approving) or error, 2 usage error, 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.`,
    );

  const step = (name: 'prepare' | 'approve', description: string) =>
    signoff
      .command(name)
      .description(description)
      .requiredOption('--date <date>', 'business date YYYY-MM-DD')
      .requiredOption('--as <name>', 'the console user who signs')
      .option('--password-stdin', "read that user's password from standard input")
      .action(async (opts: SignoffOptions) => {
        const date = requireDate(opts.date, '--date');
        if (!opts.passwordStdin) throw new UsageError(`signoff ${name} needs --password-stdin: the password of "${opts.as}" is read from standard input, never from the command line.`);
        const password = await readPasswordFromStdin();
        await runtime.withContext(`wallet-recon signoff ${name}`, {}, async (ctx) => {
          const user = await authenticateForCli(ctx, opts.as!, password);
          const result = name === 'prepare' ? await prepareSignoff(ctx, user, date, 'cli') : await approveSignoff(ctx, user, date, 'cli');
          runtime.output.out(
            name === 'prepare'
              ? `Sign-off #${result.id} of ${date} prepared by ${user.name} (report SHA-256 ${result.reportSha256}); it needs an approver now.`
              : `Sign-off #${result.id} of ${date} approved by ${user.name} (prepared by ${result.preparedBy}, report SHA-256 ${result.reportSha256}).`,
          );
          return 0;
        });
      });
  step('prepare', "the maker's step: seal the date's report and sign it (preparer or admin; no open case)");
  step('approve', "the checker's step: approve a prepared date (approver or admin, never its preparer)");

  signoff
    .command('show')
    .description("a date's sign-off state and history, and what changed after sign-off")
    .requiredOption('--date <date>', 'business date YYYY-MM-DD')
    .option('--json', 'print JSON')
    .action(async (opts: SignoffOptions) => {
      const date = requireDate(opts.date, '--date');
      await runtime.withContext('wallet-recon signoff show', {}, async (ctx) => {
        await detectSignoffChanges(ctx);
        const { state, history } = await signoffStateOf(ctx, date);
        if (opts.json) {
          runtime.output.out(
            JSON.stringify(
              {
                business_date: date,
                state,
                signoffs: history.map((s) => ({
                  id: s.id,
                  account_set: s.accountSet,
                  prepared_by: s.preparedBy,
                  prepared_at: s.preparedAt.toISOString(),
                  approved_by: s.approvedBy,
                  approved_at: s.approvedAt?.toISOString() ?? null,
                  report_sha256: s.reportSha256,
                  invalidated_at: s.invalidatedAt?.toISOString() ?? null,
                  changes: s.invalidation,
                })),
              },
              null,
              2,
            ),
          );
          return 0;
        }
        const lines = [`${date}: ${state}`];
        if (history.length > 0) {
          lines.push(
            formatTable(
              ['sign-off', 'prepared by', 'prepared at', 'approved by', 'approved at', 'report SHA-256', 'state'],
              history.map((s) => [
                `#${s.id}`,
                s.preparedBy,
                formatLocalTime(s.preparedAt, ctx.config.timezone, { seconds: true }),
                s.approvedBy ?? '',
                s.approvedAt === null ? '' : formatLocalTime(s.approvedAt, ctx.config.timezone, { seconds: true }),
                s.reportSha256,
                s.invalidatedAt === null ? (s.approvedBy === null ? 'prepared' : 'approved') : 'changed after sign-off',
              ]),
            ),
          );
          const latest = history[0]!;
          if (latest.invalidation !== null) lines.push('Changed after sign-off:', ...latest.invalidation.map((c) => `  ${c}`));
        }
        runtime.output.out(lines.join('\n'));
        return 0;
      });
    });
}
