import type { Kysely } from 'kysely';
import { caseAgeDays } from '../cases/case-model.js';
import { datesBetween } from '../clock.js';
import { addDays } from '../business-date/zoned-time.js';
import type { Database } from '../db/database.types.js';
import { findFirstTrackedDates } from '../db/capture-day.repository.js';
import { listCasesByIds } from '../db/reconciliation-case.repository.js';
import { pageResults } from '../db/reconciliation-result.repository.js';
import { DEFAULT_NUMBER_STYLE, type NumberStyle } from '../money/number-style.js';
import type { StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import { CSV_COLUMNS, csvRecord, neutralizeFormula, notReconciledCells, resultCells } from './render-csv.js';
import type { ReportRange } from './report-data.js';

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
}

/**
 * The CSV report of a range (the lines and order of renderCsv: by date and account, results in
 * their stored order, a `not_reconciled` line per expected account-date without any result), as
 * chunks of text read page by page: memory holds one page and one date, never the range.
 * `counted.results` counts the results written so far.
 */
export async function* streamCsv(db: Kysely<Database>, range: ReportRange, options: StreamCsvOptions): AsyncGenerator<string> {
  const style = options.style ?? DEFAULT_NUMBER_STYLE;
  const csv = (rows: string[][]) => rows.map((cells) => csvRecord(cells, style.csvDelimiter)).join('');
  yield csv([[...CSV_COLUMNS]]);
  // A bank account has a date to reconcile only when a statement or books arrived (banks send no
  // statement for the days they are closed): an empty date of it is no not_reconciled line.
  const bank = new Set(options.bankAccounts ?? []);
  const expected = [...new Set(options.accounts)].filter((a) => !bank.has(a));
  const firstTracked = await findFirstTrackedDates(db, expected);
  // Dates whose cut-off is still ahead have nothing to reconcile yet.
  const last = [options.today, options.latestClosedDate].reduce<string>((end, limit) => (limit !== undefined && limit < end ? limit : end), range.to);
  // One date's lines: results as read, then the accounts expected but absent, merged by account.
  const dateLines = (date: string, results: StoredReconciliationResult[]): string[][] => {
    const lines = results.map((r) => ({ account: r.account, cells: resultCells(r, style) }));
    if (date <= last) {
      const seen = new Set(results.map((r) => r.account));
      for (const account of expected) {
        const first = firstTracked.get(account);
        if (!seen.has(account) && (first === undefined || date >= first)) lines.push({ account, cells: notReconciledCells(account, date) });
      }
    }
    // Stable: a date's results keep their order within an account.
    return lines.sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0)).map((l) => l.cells.map(neutralizeFormula));
  };
  // Dates of the range with no result at all still carry their not_reconciled lines.
  const gapLines = function* (from: string, to: string): Generator<string> {
    if (from > to) return;
    for (const date of datesBetween(from, to)) {
      const lines = dateLines(date, []);
      if (lines.length > 0) yield csv(lines);
    }
  };
  let next = range.from;
  let current: { date: string; results: StoredReconciliationResult[] } | undefined;
  for await (const page of pageResults(db, range)) {
    const ids = [...new Set(page.flatMap((r) => (r.caseId === null ? [] : [r.caseId])))];
    const cases = new Map((await listCasesByIds(db, ids)).map((c) => [c.id, c]));
    const out: string[] = [];
    for (const r of page) {
      const c = r.caseId === null ? undefined : cases.get(r.caseId);
      const result: StoredReconciliationResult = { ...r, case: c === undefined ? null : { id: c.id, state: c.state, ageDays: caseAgeDays(c, options.today), acceptedUntil: c.acceptedUntil } };
      if (current !== undefined && current.date !== r.businessDate) {
        out.push(csv(dateLines(current.date, current.results)));
        current = undefined;
      }
      if (current === undefined) {
        out.push(...gapLines(next, addDays(r.businessDate, -1)));
        current = { date: r.businessDate, results: [] };
        next = addDays(r.businessDate, 1);
      }
      current.results.push(result);
      if (options.counted !== undefined) options.counted.results++;
    }
    if (out.length > 0) yield out.join('');
  }
  if (current !== undefined) yield csv(dateLines(current.date, current.results));
  yield* gapLines(next, range.to);
}
