import type { Kysely } from 'kysely';
import { datesBetween } from '../clock.js';
import { addDays } from '../business-date/zoned-time.js';
import type { Database } from '../db/database.types.js';
import { findFirstTrackedDates } from '../db/capture-day.repository.js';
import { DEFAULT_NUMBER_STYLE, type NumberStyle } from '../money/number-style.js';
import { CSV_COLUMNS, csvRecord, neutralizeFormula, notReconciledCells, resultCells } from './render-csv.js';
import { streamReportResults, type ReportRange } from './report-data.js';

export interface StreamCsvOptions {
  accounts: readonly string[];
  today: string;
  /** The latest date whose cut-off has passed: later dates of the range list no not_reconciled line. */
  latestClosedDate?: string;
  /** Configured bank accounts (their empty dates are not listed). */
  bankAccounts?: readonly string[];
  /** RECON_LOCALE's separator and decimal mark. */
  style?: NumberStyle;
  counted?: { results: number };
  /** Aborted: the reading stops (InterruptedError). */
  signal?: AbortSignal;
}

/**
 * The CSV report of a range (the lines and order of renderCsv: by date and account, results in
 * their stored order, a `not_reconciled` line per expected account-date without any result), as
 * chunks of text read batch by batch from a cursor: memory holds one batch of results, never a
 * date nor the range. `counted.results` counts the results written so far.
 */
export async function* streamCsv(db: Kysely<Database>, range: ReportRange, options: StreamCsvOptions): AsyncGenerator<string> {
  const style = options.style ?? DEFAULT_NUMBER_STYLE;
  const delimiter = style.csvDelimiter;
  yield csvRecord([...CSV_COLUMNS], delimiter);
  // A bank account has a date to reconcile only when a statement or books arrived (banks send no
  // statement for the days they are closed): an empty date of it is no not_reconciled line.
  const bank = new Set(options.bankAccounts ?? []);
  const expected = [...new Set(options.accounts)].filter((a) => !bank.has(a)).sort();
  const firstTracked = await findFirstTrackedDates(db, expected);
  // Dates whose cut-off is still ahead have nothing to reconcile yet.
  const last = [options.today, options.latestClosedDate].reduce<string>((end, limit) => (limit !== undefined && limit < end ? limit : end), range.to);
  const line = (cells: string[]) => csvRecord(cells.map(neutralizeFormula), delimiter);
  // The expected accounts of the current date are walked in step with its results (both by
  // account): each one passed without a result gets its not_reconciled line in its place.
  let date: string | undefined;
  let nextExpected = 0;
  const absentBefore = (account: string | undefined): string => {
    let text = '';
    if (date === undefined || date > last) return text;
    for (; nextExpected < expected.length && (account === undefined || expected[nextExpected]! <= account); nextExpected++) {
      const candidate = expected[nextExpected]!;
      const first = firstTracked.get(candidate);
      if (candidate !== account && (first === undefined || date >= first)) text += line(notReconciledCells(candidate, date));
    }
    return text;
  };
  // Dates of the range with no result at all still carry their not_reconciled lines.
  const gap = (from: string, to: string): string => {
    let text = '';
    if (from > to) return text;
    for (const d of datesBetween(from, to)) {
      date = d;
      nextExpected = 0;
      text += absentBefore(undefined);
    }
    return text;
  };
  let next = range.from;
  for await (const batch of streamReportResults(db, range, options.today, undefined, options.signal)) {
    let text = '';
    for (const r of batch) {
      if (r.businessDate !== date) {
        text += absentBefore(undefined);
        text += gap(next, addDays(r.businessDate, -1));
        date = r.businessDate;
        nextExpected = 0;
        next = addDays(r.businessDate, 1);
      }
      text += absentBefore(r.account);
      text += line(resultCells(r, style));
    }
    if (options.counted !== undefined) options.counted.results += batch.length;
    yield text;
  }
  let tail = absentBefore(undefined);
  tail += gap(next, range.to);
  if (tail !== '') yield tail;
}
