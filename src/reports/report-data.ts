import type { Kysely } from 'kysely';
import { ageBucketOf, AGE_BUCKETS, caseAgeDays, caseKindOf, type AgeBucket, type CaseKind } from '../cases/case-model.js';
import { datesBetween } from '../clock.js';
import type { Database } from '../db/database.types.js';
import { findFirstTrackedDates } from '../db/capture-day.repository.js';
import { listCasesByIds } from '../db/reconciliation-case.repository.js';
import { listOwedOrBankDays } from '../db/reconciliation-owed.repository.js';
import { listResults } from '../db/reconciliation-result.repository.js';
import { streamBalanceHistory, streamBankBalances, streamBooksBalances, streamResultBatches, streamResultTallyRows, type StreamedResult } from '../db/report-stream.repository.js';
import { CHART_COLUMNS, SeriesDownsampler, type ChartPoint } from './chart-series.js';
import { addCounts, countByStatus, isAccepted, reconciliationExitCode, type ReconciliationResult, type StatusCounts, type StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';

/** The business dates (inclusive) and, optionally, the one account a report covers. */
export interface ReportRange {
  from: string;
  to: string;
  account?: string;
}

export interface ReportSummary {
  from: string;
  to: string;
  /** The account asked for, or null for all. */
  account: string | null;
  /** Results per status; a discrepancy whose case is accepted is counted in `accepted`, not under its status. */
  total: StatusCounts;
  /** Results whose case is accepted: shown, but no break for the exit code. */
  accepted: number;
  /** Per account: its counts and the dates of the range (up to today) without any stored result. */
  accounts: Array<{
    account: string;
    counts: StatusCounts;
    accepted: number;
    unreconciledDates: string[];
    /** Dates whose inputs changed since their results were computed: the worker or the next command recomputes them. */
    owedDates: string[];
    /** Dates whose books have not arrived yet: their results are no verdict. */
    awaitingBooksDates: string[];
    /** Where the account's balances come from: the gateway's wallets, or a bank account's statements. */
    source: 'gateway' | 'bank';
    /** A bank account's dates whose statement has not arrived yet (before its deadline): no verdict. */
    awaitingStatementDates: string[];
  }>;
  /** The cases the results name: active ones (open, acknowledged) counted by age, accepted ones listed. */
  cases: CasesSummary;
  /** Dates of the range (up to today) on which some account has no stored result: never reconciled. */
  unreconciledDates: string[];
  /** 0 when every result matched, every date was reconciled and none is owed, 3 otherwise (what `reconcile` would exit with). */
  exitCode: 0 | 3;
}

/** Active cases by age bucket and the accepted ones, among the cases a report's results name. */
export interface CasesSummary {
  activeByAge: Record<AgeBucket, number>;
  accepted: Array<{ caseId: number; account: string; currency: string | null; kind: CaseKind | null; acceptedUntil: string | null; ageDays: number }>;
}

/** Counts the distinct cases of a set of results: active ones by age, accepted ones listed by case id. */
export function summarizeCases(results: ReadonlyArray<Pick<ReconciliationResult, 'account' | 'currency' | 'status' | 'case'>>): CasesSummary {
  const activeByAge = Object.fromEntries(AGE_BUCKETS.map((b) => [b, 0])) as Record<AgeBucket, number>;
  const accepted: CasesSummary['accepted'] = [];
  const seen = new Set<number>();
  for (const r of results) {
    const c = r.case;
    if (c === undefined || c === null || seen.has(c.id)) continue;
    seen.add(c.id);
    if (c.state === 'open' || c.state === 'acknowledged') activeByAge[ageBucketOf(c.ageDays)]++;
    else if (c.state === 'accepted') accepted.push({ caseId: c.id, account: r.account, currency: r.currency, kind: caseKindOf(r.status) ?? null, acceptedUntil: c.acceptedUntil, ageDays: c.ageDays });
  }
  accepted.sort((a, b) => a.caseId - b.caseId);
  return { activeByAge, accepted };
}

/** What a summary needs beyond the results to tell which dates were never reconciled. */
export interface SummaryOptions {
  /** The accounts the report covers; without them no date is reported as not reconciled. */
  accounts?: readonly string[];
  /** Today's business date: later dates of the range cannot have been reconciled yet. */
  today?: string;
  /**
   * The latest business date whose cut-off has passed: a later one (today's, before its cut-off)
   * cannot be reconciled yet, so it is not listed as left unreconciled (nor advised to reconcile).
   */
  latestClosedDate?: string;
  /** The account-dates of the range that are owed or a bank statement's (listOwedOrBankDays). */
  states?: ReadonlyArray<{ account: string; businessDate: string; state: string; source?: 'gateway' | 'bank' }>;
  /** The configured bank accounts: their source is `bank` even on a range without results. */
  bankAccounts?: readonly string[];
  /**
   * Each account's first tracked date (first run or books): earlier dates are history from before
   * the account was tracked, not dates left unreconciled. An account absent here has every date.
   */
  firstTrackedDates?: ReadonlyMap<string, string>;
}

/** A summary and the results it summarises. */
export interface Report<R extends ReconciliationResult = StoredReconciliationResult> {
  summary: ReportSummary;
  results: R[];
}

/** One line of a chart: an account's gateway balances, a bank account's stated balances, or its books, by business date. */
export interface BalanceSeries {
  account: string;
  kind: 'gateway' | 'bank' | 'books';
  /** By date; in a downsampled history, a column's lowest and highest balances (see SeriesDownsampler). */
  points: ChartPoint[];
}

/** Every series of one currency over the report's dates. */
export interface CurrencyHistory {
  currency: string;
  dates: string[];
  /** More dates than a chart has columns: each series keeps its lowest and highest balance per column. */
  downsampled?: boolean;
  series: BalanceSeries[];
}

/**
 * Builds the summary of a set of results, per account (sorted) and in total. With `accounts`,
 * a date of the range (up to `today`) on which one of them has no result at all is listed as
 * not reconciled: an empty day must never read as a clean one.
 */
export function summarizeResults<R extends ReconciliationResult>(range: ReportRange, results: R[], options: SummaryOptions = {}): Report<R> {
  const tally = new SummaryTally();
  for (const r of results) tally.add(r);
  return { summary: tally.summary(range, options), results };
}

/** What the summary keeps of one account's results: counts and the dates it needs, never the results. */
interface AccountTally {
  counts: StatusCounts;
  accepted: number;
  reconciled: Set<string>;
  bank: boolean;
  awaitingBooks: Set<string>;
  awaitingStatement: Set<string>;
}

/**
 * A report's summary built one result at a time (`add`), in memory that grows with the accounts,
 * dates and cases of the range, never with its results: a streamed report summarises a year of
 * 200 accounts × 50 currencies without holding its millions of results.
 */
export class SummaryTally {
  private readonly byAccount = new Map<string, AccountTally>();
  // The first result naming each case: what the summary says of the case.
  private readonly cases = new Map<number, { account: string; currency: string | null; status: ReconciliationResult['status']; case: NonNullable<ReconciliationResult['case']> }>();
  /** How many results were added. */
  count = 0;

  add(r: Pick<ReconciliationResult, 'account' | 'businessDate' | 'currency' | 'status' | 'source' | 'case'>): void {
    this.count++;
    let own = this.byAccount.get(r.account);
    if (own === undefined) {
      own = { counts: countByStatus([]), accepted: 0, reconciled: new Set(), bank: false, awaitingBooks: new Set(), awaitingStatement: new Set() };
      this.byAccount.set(r.account, own);
    }
    if (isAccepted(r)) own.accepted++;
    else own.counts[r.status]++;
    own.reconciled.add(r.businessDate);
    if (r.source === 'bank') own.bank = true;
    if (r.status === 'awaiting_books') own.awaitingBooks.add(r.businessDate);
    if (r.status === 'awaiting_statement') own.awaitingStatement.add(r.businessDate);
    const c = r.case;
    if (c !== undefined && c !== null && !this.cases.has(c.id)) this.cases.set(c.id, { account: r.account, currency: r.currency, status: r.status, case: c });
  }

  /** Account-dates with at least one result. */
  get reconciledAccountDates(): number {
    let n = 0;
    for (const a of this.byAccount.values()) n += a.reconciled.size;
    return n;
  }

  /** The summary of what was added (see summarizeResults). */
  summary(range: ReportRange, options: SummaryOptions = {}): ReportSummary {
    const expected = options.accounts ?? [];
    const names = [...new Set([...(range.account === undefined ? [] : [range.account]), ...expected, ...this.byAccount.keys()])].sort();
    const last = [options.today, options.latestClosedDate].reduce<string>((end, limit) => (limit !== undefined && limit < end ? limit : end), range.to);
    const dates = range.from <= last ? datesBetween(range.from, last) : [];
    const owedByAccount = new Map<string, string[]>();
    for (const s of options.states ?? []) {
      if (s.state !== 'owed') continue;
      const owed = owedByAccount.get(s.account);
      if (owed === undefined) owedByAccount.set(s.account, [s.businessDate]);
      else owed.push(s.businessDate);
    }
    const expectedSet = new Set(expected);
    const bankNames = new Set([...(options.bankAccounts ?? []), ...(options.states ?? []).filter((s) => s.source === 'bank').map((s) => s.account)]);
    const accounts = names.map((account) => {
      const own = this.byAccount.get(account);
      const reconciled = own?.reconciled ?? new Set<string>();
      const first = options.firstTrackedDates?.get(account);
      // Bank accounts: configured, or seen as such in results or states.
      const bank = bankNames.has(account) || own?.bank === true;
      // A bank account has a date to reconcile only when a statement or books arrived for it (banks
      // send no statement for days they are closed); such a date not reconciled yet is owed.
      const unreconciledDates = expectedSet.has(account) && !bank ? dates.filter((d) => !reconciled.has(d) && (first === undefined || d >= first)) : [];
      return {
        account,
        counts: own?.counts ?? countByStatus([]),
        accepted: own?.accepted ?? 0,
        unreconciledDates,
        owedDates: (owedByAccount.get(account) ?? []).sort(),
        awaitingBooksDates: [...(own?.awaitingBooks ?? [])].sort(),
        source: bank ? ('bank' as const) : ('gateway' as const),
        awaitingStatementDates: [...(own?.awaitingStatement ?? [])].sort(),
      };
    });
    const total = accounts.reduce((sum, a) => addCounts(sum, a.counts), countByStatus([]));
    const accepted = accounts.reduce((sum, a) => sum + a.accepted, 0);
    const unreconciled = new Set(accounts.flatMap((a) => a.unreconciledDates));
    const unreconciledDates = dates.filter((d) => unreconciled.has(d));
    // Owed results are not the answer yet (an input changed since): not clean, whatever they say.
    const owed = accounts.some((a) => a.owedDates.length > 0);
    const exitCode = unreconciledDates.length > 0 || owed ? 3 : reconciliationExitCode(total);
    const cases = summarizeCases([...this.cases.values()]);
    return { from: range.from, to: range.to, account: range.account ?? null, total, accepted, accounts, cases, unreconciledDates, exitCode };
  }
}

/**
 * Reads the stored results over a range with their cases (state now, age to `today`, the
 * business date of the injected clock) and
 * summarises them, listing the dates never reconciled (from each account's first tracked date on).
 */
export async function loadReport(db: Kysely<Database>, range: ReportRange, options: SummaryOptions & { today: string }): Promise<Report> {
  const results = await listResults(db, range);
  const ids = [...new Set(results.flatMap((r) => (r.caseId === null ? [] : [r.caseId])))];
  const cases = new Map((await listCasesByIds(db, ids)).map((c) => [c.id, c]));
  // Ages count to today's business date (from the injected clock), never to the report's last
  // date: one case has one age in every report, e-mail, `cases` list and the console.
  const today = options.today;
  const withCases = results.map((r) => {
    const c = r.caseId === null ? undefined : cases.get(r.caseId);
    return { ...r, case: c === undefined ? null : { id: c.id, state: c.state, ageDays: caseAgeDays(c, today), acceptedUntil: c.acceptedUntil } };
  });
  return summarizeResults(range, withCases, await loadSummaryOptions(db, range, options));
}

/** The summary's options completed from the database: where each account-date stands, each account's first tracked date. */
export async function loadSummaryOptions(db: Kysely<Database>, range: ReportRange, options: SummaryOptions): Promise<SummaryOptions> {
  const states = await listOwedOrBankDays(db, { from: range.from, to: range.to, accounts: range.account === undefined ? options.accounts : [range.account] });
  const firstTrackedDates = options.firstTrackedDates ?? (options.accounts === undefined ? undefined : await findFirstTrackedDates(db, options.accounts));
  return { ...options, states, firstTrackedDates };
}

/**
 * The summary of a range read from a cursor of what it counts (streamResultTallyRows), a batch in memory at a
 * time: what a streamed report writes before its results.
 */
export async function streamSummary(db: Kysely<Database>, range: ReportRange, options: SummaryOptions & { today: string; signal?: AbortSignal }): Promise<ReportSummary> {
  const { signal, ...summaryOptions } = options;
  const tally = new SummaryTally();
  for await (const batch of streamResultTallyRows(db, range, (c) => caseAgeDays(c, options.today), undefined, signal)) for (const r of batch) tally.add(r);
  return tally.summary(range, await loadSummaryOptions(db, range, summaryOptions));
}

/**
 * Per currency, each account's gateway balances (`balance_history`) and books over the range,
 * read from cursors. A range of more dates than a chart has columns (CHART_COLUMNS) keeps, per
 * series and column, the lowest and the highest balance (SeriesDownsampler): the charts of a year
 * or of ten take the same memory, and every spike is still drawn. A chart needs two dates, so a
 * one-date range has none to draw and nothing is read (at 200 accounts × 50 currencies that was
 * 20,000 rows to draw nothing).
 */
export async function loadCurrencyHistories(db: Kysely<Database>, range: ReportRange): Promise<CurrencyHistory[]> {
  const dates = datesBetween(range.from, range.to);
  if (dates.length < 2) return [];
  const downsampled = dates.length > CHART_COLUMNS;
  const indexOf = new Map(dates.map((d, i) => [d, i]));
  const byCurrency = new Map<string, Map<string, { line: BalanceSeries; sampler?: SeriesDownsampler }>>();
  const add = (currency: string, account: string, kind: BalanceSeries['kind'], date: string, balance: bigint) => {
    const index = indexOf.get(date);
    if (index === undefined) return;
    let series = byCurrency.get(currency);
    if (series === undefined) {
      series = new Map();
      byCurrency.set(currency, series);
    }
    const key = `${account}\u0000${kind}`;
    let own = series.get(key);
    if (own === undefined) {
      own = { line: { account, kind, points: [] }, sampler: downsampled ? new SeriesDownsampler(dates.length) : undefined };
      series.set(key, own);
    }
    if (own.sampler === undefined) own.line.points.push({ date, balance });
    else own.sampler.add(index, date, balance);
  };
  for await (const rows of streamBalanceHistory(db, range)) for (const h of rows) add(h.currency, h.account, 'gateway', h.businessDate, h.balance);
  // A bank account is never captured: its line is the closing balance its statements state.
  for await (const rows of streamBankBalances(db, range)) for (const b of rows) add(b.currency, b.account, 'bank', b.businessDate, b.balance);
  for await (const rows of streamBooksBalances(db, range)) for (const b of rows) add(b.currency, b.account, 'books', b.businessDate, b.balance);
  return [...byCurrency.keys()].sort().map((currency) => ({
    currency,
    dates,
    ...(downsampled ? { downsampled } : {}),
    series: [...byCurrency.get(currency)!.values()]
      .map(({ line, sampler }) => (sampler === undefined ? line : { ...line, points: sampler.finish() }))
      .sort((a, b) => a.account.localeCompare(b.account) || (a.kind === b.kind ? 0 : a.kind === 'books' ? 1 : b.kind === 'books' ? -1 : 0)),
  }));
}

/** The stored results of a range with their cases (ages to `today`), in batches from a cursor: see streamResultBatches. */
export function streamReportResults(db: Kysely<Database>, range: ReportRange, today: string, batchRows?: number, signal?: AbortSignal): AsyncGenerator<StreamedResult[]> {
  return streamResultBatches(db, range, (c) => caseAgeDays(c, today), batchRows, signal);
}
