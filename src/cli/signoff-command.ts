import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { authenticateForCli } from '../console/sign-in.js';
import { formatLocalTime } from '../business-date/local-time.js';
import { approveSignoff, detectSignoffChanges, prepareSignoff, requireDate, signoffStateOf, type Signoff } from '../signoff/signoff-service.js';
import { reopenSignoff } from '../signoff/reopen.js';
import { readSealedReport, sealHolds, SEAL_MISMATCH } from '../signoff/seal.js';
import { verifySeals, type SealVerification } from '../signoff/verify-seals.js';
import { problemsToShow } from '../signoff/signoff-integrity.js';
import { UsageError } from '../errors.js';
import { formatTable } from '../text-table.js';
import { summaryOf } from './command-summaries.js';
import { readPasswordFromStdin } from './read-stdin.js';
import type { CliRuntime } from './runtime.js';
import { registerSignoffExport } from './signoff-export-command.js';

interface SignoffOptions {
  date: string;
  as?: string;
  passwordStdin?: boolean;
  json?: boolean;
  note?: string;
  report?: string;
}

const stateOf = (s: Signoff) => (s.reopenedAt !== null ? 'reopened' : s.invalidatedAt !== null ? 'changed after sign-off' : s.approvedBy === null ? 'prepared' : 'approved');

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
  wallet-recon signoff show --date 2026-11-20 [--json] [--report signed-2026-11-20.html]
  printf '%s' "$PASSWORD" | wallet-recon signoff reopen --date 2026-11-20 --as ben --password-stdin --note "bank fee booked late"
  wallet-recon signoff verify [--date 2026-11-20]

A preparer (or admin) prepares a date once every account of it is settled (not owed, books not
awaited, capture window over) and none of its cases is open or acknowledged without a note; an
approver (or admin) who did not prepare it approves it. The HTML report is sealed at preparation
(its SHA-256 is printed). An approved date is locked: books, results and captures of it are refused
until an approver reopens it with a note. A prepared date whose inputs change must be signed again.
Sign-offs, case events and console audit rows are hash-chained; "verify" recomputes every seal.
See docs/cases-and-signoff.md.

Exit codes: 0 done (verify: every seal holds), 1 refused (role, open cases, the preparer approving), an error, or (verify) a seal that does not hold, 2 usage error or a date not settled yet, 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.`,
    );

  const step = (name: 'prepare' | 'approve' | 'reopen', description: string) => {
    const command = signoff
      .command(name)
      .description(description)
      .requiredOption('--date <date>', 'business date YYYY-MM-DD')
      .requiredOption('--as <name>', 'the console user who signs')
      .option('--password-stdin', "read that user's password from standard input");
    if (name === 'reopen') command.requiredOption('--note <text>', 'why the closed day must change (recorded and sent with the signoff.reopened event)');
    command.action(async (opts: SignoffOptions) => {
      const date = requireDate(opts.date, '--date');
      if (!opts.passwordStdin) throw new UsageError(`signoff ${name} needs --password-stdin: the password of "${opts.as}" is read from standard input, never from the command line.`);
      if (name === 'reopen' && (opts.note ?? '').trim() === '') throw new UsageError('signoff reopen needs --note TEXT saying why the closed day must change; an empty note is not accepted.');
      const password = await readPasswordFromStdin(runtime.output.input);
      await runtime.withContext(`wallet-recon signoff ${name}`, {}, async (ctx) => {
        const user = await authenticateForCli(ctx, opts.as!, password);
        if (name === 'prepare') {
          const result = await prepareSignoff(ctx, user, date, 'cli');
          runtime.output.out(`Sign-off #${result.id} of ${date} prepared by ${user.name} (report SHA-256 ${result.reportSha256}); it needs an approver now.`);
        } else if (name === 'approve') {
          const result = await approveSignoff(ctx, user, date, 'cli');
          runtime.output.out(`Sign-off #${result.id} of ${date} approved by ${user.name} (prepared by ${result.preparedBy}, report SHA-256 ${result.reportSha256}); ${date} is now locked for ${result.accountSet.join(', ')}.`);
        } else {
          const result = await reopenSignoff(ctx, user, date, opts.note, 'cli');
          runtime.output.out(`Sign-off #${result.id} of ${date} reopened by ${user.name}: ${date} is unlocked and must be prepared and approved again.`);
        }
        return 0;
      });
    });
  };
  step('prepare', "the maker's step: seal the date's report and sign it (preparer or admin; every account settled, no open case)");
  step('approve', "the checker's step: approve a prepared date, which locks it (approver or admin, never its preparer)");
  step('reopen', 'unlock an approved date with a note saying why (approver or admin); it must then be signed again');
  registerSignoffExport(signoff, runtime);

  signoff
    .command('show')
    .description("a date's sign-off state and history, what each was sealed on, and what changed after sign-off")
    .requiredOption('--date <date>', 'business date YYYY-MM-DD')
    .option('--json', 'print JSON')
    .option('--report <file>', "write the current sign-off's sealed report to this file (after checking it against its seal)")
    .action(async (opts: SignoffOptions) => {
      const date = requireDate(opts.date, '--date');
      await runtime.withContext('wallet-recon signoff show', {}, async (ctx) => {
        // People read times in RECON_TIMEZONE, with the zone; the JSON keeps UTC.
        const local = (d: Date | null) => (d === null ? '' : formatLocalTime(d, ctx.config.timezone, { seconds: true }));
        await detectSignoffChanges(ctx);
        const signed = await signoffStateOf(ctx, date);
        const { current, history } = signed;
        // A sign-off whose steps, signatures or sealed day do not verify is shown as such, not as what it claims.
        const broken = await problemsToShow(ctx.database.db, ctx.config, history.map((s) => s.id));
        const currentBroken = current === undefined ? undefined : broken.get(current.id);
        const state = currentBroken === undefined ? signed.state : 'broken seal';
        // Each sealed report is hashed again: an altered one is named, never shown as sealed.
        const altered: number[] = [];
        for (const s of history) if (!(await sealHolds(ctx.database.db, s.id))) altered.push(s.id);
        if (opts.report !== undefined && current !== undefined) {
          const report = await readSealedReport(ctx.database.db, current.id);
          writeFileSync(opts.report, report!.html);
        }
        if (opts.json) {
          runtime.output.out(
            JSON.stringify(
              {
                business_date: date,
                state,
                signoffs: history.map((s) => ({
                  id: s.id,
                  state: stateOf(s),
                  account_set: s.accountSet,
                  prepared_by: s.preparedBy,
                  prepared_at: s.preparedAt.toISOString(),
                  approved_by: s.approvedBy,
                  approved_at: s.approvedAt?.toISOString() ?? null,
                  report_sha256: s.reportSha256,
                  report_matches_seal: !altered.includes(s.id),
                  does_not_verify: broken.get(s.id) ?? null,
                  inputs: s.inputs,
                  invalidated_at: s.invalidatedAt?.toISOString() ?? null,
                  changes: s.invalidation,
                  reopened_by: s.reopenedBy,
                  reopened_at: s.reopenedAt?.toISOString() ?? null,
                  reopen_note: s.reopenNote,
                })),
              },
              null,
              2,
            ),
          );
        } else {
          const lines = [`${date}: ${state}`];
          if (currentBroken !== undefined) lines.push(`This sign-off does not verify: ${currentBroken}. Run "wallet-recon signoff verify".`);
          if (history.length > 0) {
            lines.push(
              formatTable(
                ['sign-off', 'prepared by', 'prepared at', 'approved by', 'approved at', 'report SHA-256', 'state'],
                history.map((s) => [
                  `#${s.id}`,
                  s.preparedBy,
                  local(s.preparedAt),
                  s.approvedBy ?? '',
                  local(s.approvedAt),
                  s.reportSha256,
                  // A reopening says who, when and why in its own row, not only for the latest sign-off.
                  s.reopenedAt !== null ? `reopened by ${s.reopenedBy ?? ''}, ${local(s.reopenedAt)}: ${s.reopenNote ?? ''}` : stateOf(s),
                ]),
              ),
            );
            const latest = history[0]!;
            if (latest.reopenedAt !== null) lines.push(`Reopened by ${latest.reopenedBy} at ${local(latest.reopenedAt)}: ${latest.reopenNote}`);
            if (latest.invalidation !== null) lines.push('Changed after sign-off:', ...latest.invalidation.map((c) => `  ${c}`));
            if (current !== undefined) {
              lines.push('Sealed on:');
              for (const a of current.inputs.accounts) {
                lines.push(
                  `  ${a.account}: run ${a.runId ?? 'none'}, books import ${(a.booksImportIds ?? (a.booksImportId === null ? [] : [a.booksImportId])).join(', ') || 'none'}, previous date's run ${a.previousRunId ?? 'none'}, cases ${Object.entries(a.cases).map(([id, st]) => `#${id} ${st}`).join(', ') || 'none'}`,
                );
              }
            }
            if (opts.report !== undefined && current !== undefined) {
              lines.push(`Wrote the sealed report of sign-off #${current.id} to ${opts.report} (SHA-256 ${current.reportSha256}; prepared by ${current.preparedBy} at ${local(current.preparedAt)}; ${current.approvedBy === null ? 'not approved' : `approved by ${current.approvedBy} at ${local(current.approvedAt)}`}).`);
            }
          }
          runtime.output.out(lines.join('\n'));
        }
        if (altered.length > 0) {
          runtime.output.err(`${SEAL_MISMATCH}: sign-off${altered.length === 1 ? '' : 's'} ${altered.map((id) => `#${id}`).join(', ')} of ${date}. Run "wallet-recon signoff verify".`);
          return 1;
        }
        if (currentBroken !== undefined) {
          runtime.output.err(`This sign-off does not verify: ${currentBroken}. Run "wallet-recon signoff verify" and restore the database from a backup.`);
          return 1;
        }
        return 0;
      });
    });

  signoff
    .command('verify')
    .description('recompute every sealed report hash, hash chain and signature; exit 1 naming the first row that does not hold')
    .option('--date <date>', "only that date's sign-offs (and the chain up to them)")
    .action(async (opts: { date?: string }) => {
      const date = opts.date === undefined ? undefined : requireDate(opts.date, '--date');
      await runtime.withContext('wallet-recon signoff verify', {}, async (ctx) => {
        const verified = await verifySeals(ctx, { date });
        const { checked } = verified;
        const counts = `${checked.signoffs} sign-off(s), ${checked.reports} sealed report(s), ${checked.caseEvents} case event(s), ${checked.auditRows} audit row(s), ${checked.signatures} signature(s)${verified.key === undefined || verified.key.pinned ? '' : ' against RECON_SIGNING_KEY_FILE'}`;
        if (verified.problem !== undefined) {
          runtime.output.err(`Seal broken: ${verified.problem.problem}. Checked before it: ${counts}.`);
          if (verified.key === undefined || !verified.key.pinned) runtime.output.err(notPinned(verified.key));
          return 1;
        }
        runtime.output.out(`Every seal holds: ${counts}.`);
        runtime.output.out(describeStepCheck(verified));
        return 0;
      });
    });
}

/** What the step log check covered, and against which key: a key not pinned is said so. */
function describeStepCheck(verified: SealVerification): string {
  const { steps, signedSteps } = verified.checked;
  const key = verified.key;
  const counted = `Sign-off steps: ${steps} step(s) chained, ${signedSteps} signed`;
  if (key?.pinned === true) return `${counted}; every step since ${key.since.toISOString()} is signed by the pinned key ${key.file}.`;
  return `${counted}. ${notPinned(key)}`;
}

function notPinned(key: SealVerification['key']): string {
  return key === undefined
    ? 'No signing key is configured and none is pinned: whoever can write to the database can recompute every hash; set RECON_SIGNING_PUBLIC_KEY_FILE and RECON_SIGNING_SINCE to pin one.'
    : 'The key is not pinned: signatures were checked against RECON_SIGNING_KEY_FILE, a key the database does not hold, but steps from before its first signature are not owed one; set RECON_SIGNING_PUBLIC_KEY_FILE and RECON_SIGNING_SINCE to pin it.';
}
