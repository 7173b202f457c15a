import { formatLocalTime } from '../business-date/local-time.js';
import { InvalidArgumentError, type Command } from 'commander';
import { capturedDriftSeconds, capturedUnderOtherRules } from '../business-date/capture-drift.js';
import { businessCalendarOf } from '../config/index.js';
import { listSnapshotRows } from '../db/balance-snapshot.repository.js';
import { hasRunsOfAccount, listAuthorityOfRuns, listRecentRuns, listRunsByIds } from '../db/snapshot-run.repository.js';
import type { AppContext } from '../app-context.js';
import { dataDirHolder, WORKER_COMMAND } from '../db/embedded-lock.js';
import { UsageError } from '../errors.js';
import { formatOptionalAmount } from '../money/format-amount.js';
import { formatTable } from '../text-table.js';
import type { CliRuntime } from './runtime.js';
import { checkHistoryAccount } from './history-account.js';
import { formatCapturedBalances, formatRunDuration } from './snapshot-output.js';
import { formatDuration } from '../business-date/duration.js';
import { summaryOf } from './command-summaries.js';

function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new InvalidArgumentError('must be a whole number from 1 to 10000');
  return n;
}

function parseRunId(value: string): number {
  const n = Number(value);
  if (!/^\d{1,9}$/.test(value) || n < 1) throw new InvalidArgumentError('must be a run id, a whole number from 1 (see "wallet-recon runs")');
  return n;
}

/**
 * What to do about an empty run ledger, fitting the lock state: while a worker holds the embedded
 * database a manual `snapshot` is refused (exit 4), so the advice is the worker's next slot.
 */
function noRunsYetAdvice(ctx: AppContext): string {
  const holder = ctx.database.shared ? dataDirHolder(ctx.config.dataDir) : undefined;
  if (holder?.command === WORKER_COMMAND) {
    return `No snapshot runs yet. The worker holding this database (pid ${holder.pid} on ${holder.host}) captures at its next slot (RECON_SCHEDULE); "wallet-recon snapshot" can run once it has stopped.`;
  }
  if (holder !== undefined) return `No snapshot runs yet. "wallet-recon snapshot" can run once "${holder.command}" (pid ${holder.pid}) has finished.`;
  return 'No snapshot runs yet. Run "wallet-recon snapshot" to capture one.';
}

/** `wallet-recon runs`: the run ledger, newest first. */
export function registerRunsCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('runs')
    .description(summaryOf('runs'))
    .option('--account <name>', 'only this account')
    .option('--limit <n>', 'how many runs', parseLimit, 20)
    .option('--json', 'print JSON')
    .option('--run <id>', 'print the balances this run captured, each in the scale it was captured in', parseRunId)
    .addHelpText('after', '\nExample:\n  wallet-recon runs --account eu-main --limit 5\n  wallet-recon runs --run 42')
    .action(async (opts: { account?: string; limit: number; json?: boolean; run?: number }) => {
      await runtime.withContext('wallet-recon runs', {}, async (ctx) => {
        if (opts.run !== undefined) {
          const [run] = await listRunsByIds(ctx.database.db, [opts.run]);
          if (run === undefined) throw new UsageError(`There is no run ${opts.run}. "wallet-recon runs" lists the recent ones.`);
          const rows = await listSnapshotRows(ctx.database.db, run.id);
          if (opts.json) {
            runtime.output.out(
              JSON.stringify(
                rows.map((r) => ({ currency: r.currency, balance: r.balance.toString(), single_balance: r.singleBalance?.toString() ?? null, scale: r.scale, formatted: formatOptionalAmount(r.balance, r.currency, r.scale) })),
                null,
                2,
              ),
            );
            return 0;
          }
          const text = await formatCapturedBalances(ctx, { account: run.account, status: run.status === 'succeeded' ? 'succeeded' : 'failed', runId: run.id, businessDate: run.business_date, durationMs: 0 });
          runtime.output.out(text ?? `Run ${run.id} of ${run.account} ${run.status}: it captured no balances.`);
          return 0;
        }
        // A mistyped account would otherwise read as an account without runs; exit 2 as elsewhere.
        const { note } = opts.account === undefined ? {} : await checkHistoryAccount(ctx.config, opts.account, 'runs', () => hasRunsOfAccount(ctx.database.db, opts.account!));
        if (note !== undefined) runtime.output.err(note);
        const runs = await listRecentRuns(ctx.database.db, { account: opts.account, limit: opts.limit });
        // Which run is each date's snapshot, and why: the one rule of authoritative_runs.
        const authority = await listAuthorityOfRuns(ctx.database.db, runs.filter((r) => r.status === 'succeeded'));
        const authorityOf = (r: (typeof runs)[number]): string => {
          if (r.status !== 'succeeded') return '';
          const chosen = authority.get(`${r.account}|${r.business_date}`);
          if (chosen === undefined) return '';
          return chosen.runId === r.id ? 'yes' : `no (run ${chosen.runId})`;
        };
        // Cut-off and drift as the run was captured against them, whatever the calendar says now.
        const calendar = businessCalendarOf(ctx.config);
        const driftOf = (r: (typeof runs)[number]) =>
          capturedDriftSeconds(calendar, r.business_date, { readsFinishedAt: r.reads_finished_at, startedAt: r.started_at, source: r.source, cutoffAt: r.cutoff_at });
        if (opts.json) {
          runtime.output.out(
            JSON.stringify(
              runs.map((r) => {
                const chosen = authority.get(`${r.account}|${r.business_date}`);
                return {
                  ...r,
                  cutoff_at: r.cutoff_at ?? calendar.cutoffOf(r.business_date),
                  cutoff_timezone: r.cutoff_timezone ?? calendar.rulesFor(r.business_date).timezone,
                  cutoff_drift_seconds: driftOf(r),
                  authoritative: r.status === 'succeeded' && chosen?.runId === r.id,
                  authoritative_reason: chosen?.runId === r.id ? chosen.reason : null,
                };
              }),
              null,
              2,
            ),
          );
          return 0;
        }
        if (runs.length === 0) {
          runtime.output.out(noRunsYetAdvice(ctx));
          return 0;
        }
        // One short line per run fits a terminal; errors and warnings are sentences, so each
        // follows the table on its own line (pages, requests and the reasons are in --json).
        const rows = runs.map((r) => [
          String(r.id),
          r.account,
          r.business_date,
          endOfDayCell(r.end_of_day, driftOf(r)),
          r.trigger,
          r.status,
          formatLocalTime(r.started_at, ctx.config.timezone),
          String(r.wallets_fetched ?? ''),
          r.finished_at ? formatRunDuration(r.finished_at.getTime() - r.started_at.getTime()) : '',
          authorityOf(r),
        ]);
        const notes = runs.flatMap((r) => {
          const other = capturedUnderOtherRules(calendar, r.business_date, { cutoffAt: r.cutoff_at, cutoffTimezone: r.cutoff_timezone });
          return [
            ...(r.error !== null ? [`run ${r.id}: ${r.error}`] : r.warning ? [`run ${r.id} (warning): ${r.warning}`] : []),
            ...(other === undefined ? [] : [`run ${r.id}: read by the ${other}`]),
          ];
        });
        const table = formatTable(['run', 'account', 'business date', 'end of day (vs cut-off)', 'trigger', 'status', 'started', 'wallets', 'duration', "date's snapshot"], rows);
        runtime.output.out(notes.length === 0 ? table : `${table}\n\n${notes.join('\n')}`);
        return 0;
      });
    });
}

/**
 * Whether a run is its date's end-of-day capture and how far from the cut-off its reads finished,
 * in a column of its own: a sentence such as "2026-11-20, end of day, 9 min 38 s before cut-off"
 * in the date's column made a run's line wider than a wide terminal (132 columns).
 */
function endOfDayCell(endOfDay: boolean | null, driftSeconds: number | null): string {
  if (!endOfDay) return 'no (intraday)';
  if (driftSeconds === null) return 'yes';
  if (driftSeconds === 0) return 'yes, at the cut-off';
  return `yes, ${formatDuration(driftSeconds * 1000)} ${driftSeconds < 0 ? 'before' : 'after'}`;
}
