import { Option, type Command } from 'commander';
import { describeError, InterruptedError, ReconError, UsageError } from '../errors.js';
import { numberStyleOf } from '../money/number-style.js';
import { LONG_RANGE_DAYS, renderHtml, renderHtmlChunks } from '../reports/render-html.js';
import { streamJsonReport } from '../reports/json-report.js';
import { sizeHeapForMemory } from '../process-heap.js';
import { renderTable } from '../reports/render-table.js';
import { latestClosedDateOf, parseBusinessDate, parseDateRange, todayOf } from '../reconciliation/business-dates.js';
import { resolveAccountNames } from '../reconciliation/reconciliation-service.js';
import { loadCurrencyHistories, loadReport, type Report, type ReportRange, type ReportSummary } from '../reports/report-data.js';
import { withReportSnapshot } from '../db/report-stream.repository.js';
import { loadRangeReport } from '../reports/range-report.js';
import { datesBetween } from '../clock.js';
import { countOwedDates } from '../db/reconciliation-owed.repository.js';
import { loadReportFacts } from '../reports/report-facts.js';
import { streamCsv } from '../reports/stream-csv.js';
import { writeFileAtomically } from '../reports/write-file-atomically.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';

export const REPORT_FORMATS = ['table', 'csv', 'json', 'html'] as const;
type ReportFormat = (typeof REPORT_FORMATS)[number];

interface ReportOptions {
  date?: string;
  from?: string;
  to?: string;
  account?: string;
  format: ReportFormat;
  out?: string;
  allRows?: boolean;
}

/** The date range the flags ask for; contradictory or incomplete flags are a UsageError naming them. */
export function rangeFromFlags(opts: Pick<ReportOptions, 'date' | 'from' | 'to' | 'account'>): ReportRange {
  if (opts.date !== undefined && (opts.from !== undefined || opts.to !== undefined)) {
    throw new UsageError(`--date and ${opts.from !== undefined ? '--from' : '--to'} contradict each other: give one business date with --date, or a range with --from and --to.`);
  }
  if (opts.date !== undefined) {
    const date = parseBusinessDate(opts.date, '--date');
    return { from: date, to: date, account: opts.account };
  }
  if (opts.from === undefined || opts.to === undefined) {
    throw new UsageError(opts.from === undefined && opts.to === undefined ? 'Give --date D, or --from D1 --to D2.' : `${opts.from === undefined ? '--to' : '--from'} needs ${opts.from === undefined ? '--from' : '--to'} as well.`);
  }
  // Later dates are allowed: a month's report is read before the month ends.
  return { ...parseDateRange(opts.from, opts.to), account: opts.account };
}

/** `wallet-recon report`: the stored results as a table, CSV, JSON or a self-contained HTML page. */
export function registerReportCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('report')
    .description(summaryOf('report'))
    .option('--date <date>', 'one business date YYYY-MM-DD')
    .option('--from <date>', 'first business date of a range')
    .option('--to <date>', 'last business date of a range')
    .option('--account <name>', 'only this account')
    .addOption(new Option('--format <format>', 'output format').choices(REPORT_FORMATS).default('table'))
    .option('--out <file>', 'write to this file (mode 0600, replaced atomically) instead of stdout')
    .option('--all-rows', `html: list every matched result and every account-date of a range longer than ${LONG_RANGE_DAYS} days too (by default such a range is summarised: every result that did not match, a line per date, charts)`)
    .addHelpText(
      'after',
      '\nExamples:\n  wallet-recon report --date 2026-11-20\n  wallet-recon report --from 2026-11-01 --to 2026-11-30 --format html --out november.html\n  wallet-recon report --date 2026-11-20 --format csv > results.csv\n\nA csv report is written as it is read (any range in bounded memory) and always lists every result.\n\nDates of the range up to the latest one whose cut-off has passed, with no stored result for an account are listed as not reconciled\n(JSON: summary.unreconciledDates, and summary.exitCode is then 3).\n\nExit codes: 0 written, 3 written but some results are owed (an input changed since they were computed; the worker or the next command recomputes them), 1 error, 2 usage error (also an account that is not configured, or a --date or --from after the current business date), 130 stopped by Ctrl-C (SIGINT), 143 stopped by SIGTERM.',
    )
    .action(async (opts: ReportOptions) => {
      const range = rangeFromFlags(opts);
      // A range streams thousands of results through memory: keep the heap near what is live.
      if (range.from !== range.to) sizeHeapForMemory();
      // A mistyped account would otherwise read as an account without results.
      const accounts = resolveAccountNames(runtime.config(), opts.account);
      await runtime.withContext('wallet-recon report', {}, async (ctx) => {
        const { db } = ctx.database;
        // A report of a day that has not begun is a mistake, as for reconcile; a range may run past
        // today (a month's report is read before the month ends), but must not start after it.
        const today = todayOf(ctx);
        if (opts.date !== undefined) parseBusinessDate(range.from, '--date', today);
        else parseBusinessDate(range.from, '--from', today);
        const style = numberStyleOf(ctx.config.locale);
        const bankAccounts = ctx.config.bankAccounts.map((b) => b.name);
        const latestClosedDate = latestClosedDateOf(ctx);
        if (opts.format === 'csv') {
          // Streamed page by page from the database: a range of years fits in the memory of a day.
          const counted = { results: 0 };
          const chunks = streamCsv(db, range, { accounts, today: today.date, latestClosedDate, bankAccounts, style, counted, signal: runtime.signal });
          if (opts.out === undefined) {
            // stdout to a file or a pipe is written synchronously on Linux and macOS: nothing piles up.
            for await (const chunk of chunks) runtime.output.out(chunk);
          } else {
            await writeReport(opts.out, 'csv', chunks, runtime.signal);
            runtime.output.err(`Wrote the csv report (${counted.results} results) to ${opts.out}.`);
          }
          // Owed results are not the answer yet: the report is written, and its exit code says so.
          return (await countOwedDates(db, range, accounts)) > 0 ? 3 : 0;
        }
        const summaryOptions = { accounts, today: today.date, latestClosedDate, bankAccounts };
        if (opts.format === 'json') {
          // Two passes over a cursor in one snapshot, a batch in memory whatever the range.
          let summary: ReportSummary | undefined;
          const chunks = streamJsonReport(db, range, summaryOptions, { tolerance: ctx.config.tolerance, signal: runtime.signal, onSummary: (s) => (summary = s) });
          if (opts.out === undefined) {
            for await (const chunk of chunks) runtime.output.out(chunk);
          } else {
            await writeReport(opts.out, 'json', chunks, runtime.signal);
          }
          const written = summary!;
          if (opts.out !== undefined) {
            const resultCount = written.accounts.reduce((sum, a) => sum + a.accepted + Object.values(a.counts).reduce((x, y) => x + y, 0), 0);
            runtime.output.err(`Wrote the json report (${resultCount} results) to ${opts.out}.`);
          }
          // Owed results are not the answer yet: the report is written, and its exit code says so.
          return written.accounts.some((a) => a.owedDates.length > 0) ? 3 : 0;
        }
        let report: Report;
        let chunks: Iterable<string>;
        let resultCount: number;
        if (opts.format === 'html' && range.from !== range.to) {
          // A range in one pass over a cursor, in one snapshot with the charts' balances and the
          // facts: tallies of every result, the results the page lists kept, the charts downsampled.
          const long = datesBetween(range.from, range.to).length > LONG_RANGE_DAYS;
          const now = ctx.clock.now();
          const read = await withReportSnapshot(db, async (trx) => {
            const loaded = await loadRangeReport(trx, range, { ...summaryOptions, keepMatched: opts.allRows === true || !long, signal: runtime.signal });
            return { loaded, histories: await loadCurrencyHistories(trx, range), facts: await loadReportFacts(trx, loaded.report.results, ctx.config, now) };
          });
          report = read.loaded.report;
          resultCount = read.loaded.tallies.resultCount;
          chunks = renderHtmlChunks(report, read.histories, now, read.facts, { allRows: opts.allRows, streamed: read.loaded.tallies });
        } else {
          report = await loadReport(db, range, summaryOptions);
          resultCount = report.results.length;
          chunks = [
            opts.format === 'html'
              ? renderHtml(report, await loadCurrencyHistories(db, range), ctx.clock.now(), await loadReportFacts(db, report.results, ctx.config, ctx.clock.now()), { allRows: opts.allRows })
              : renderTable(report, { tolerance: ctx.config.tolerance, style }),
          ];
        }
        // Owed results are not the answer yet: the report is written, and its exit code says so.
        const exitCode = report.summary.accounts.some((a) => a.owedDates.length > 0) ? 3 : 0;
        if (opts.out === undefined) {
          runtime.output.out([...chunks].join(''));
          return exitCode;
        }
        await writeReport(opts.out, opts.format, chunks, runtime.signal);
        runtime.output.err(`Wrote the ${opts.format} report (${resultCount} results) to ${opts.out}.`);
        return exitCode;
      });
    });
}

/**
 * Writes a report's chunks to `out` atomically. A stop signal ends the writing and leaves no
 * file (neither the temporary one nor a report under its final name): said as such, not as a
 * failure to write.
 */
async function writeReport(out: string, format: ReportFormat, chunks: Iterable<string> | AsyncIterable<string>, signal: AbortSignal): Promise<void> {
  try {
    await writeFileAtomically(out, chunks, { signal });
  } catch (error) {
    if (error instanceof InterruptedError || signal.aborted) {
      throw new InterruptedError(`Stopped by ${stopName(signal)} before the ${format} report was complete: ${out} was not written.`, { cause: error });
    }
    throw new ReconError(`Could not write the ${format} report: ${describeError(error)}.`, { cause: error });
  }
}

function stopName(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : 'a stop signal';
}
