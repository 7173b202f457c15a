import { describeCaptureTiming } from '../business-date/business-calendar.js';
import { formatLocalTime } from '../business-date/local-time.js';
import { DEFAULT_NUMBER_STYLE, numberStyleOf, type NumberStyle } from '../money/number-style.js';
import { currencyDecimals, formatAmount, formatOptionalAmount } from '../money/format-amount.js';
import { renderBalanceChartSvg } from './balance-chart-svg.js';
import { CHART_COLUMNS } from './chart-series.js';
import { escapeHtml } from '../escape-html.js';
import type { StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import type { CurrencyHistory, Report } from './report-data.js';
import { describeTolerance, type ItemKindFact, type ReportFacts } from './report-facts.js';
import { buildReportView, totalsOf, type CurrencySection, type CurrencyTally } from './report-view.js';
import { countByStatus, type StatusCounts } from '../reconciliation/reconciliation-result.js';
import { datesBetween } from '../clock.js';
import { balanceHeaderOf, caseCells, coversBank, describeCases, describeUnreconciled, summaryColumnsOf } from './render-table.js';

// Inline only: the file is mailed and archived, so it must open with no network at all. Laid out
// for a 1280 px screen (tables take the page's width; long amounts may wrap, never overflow) and
// for A4 paper (each section on its own page, table headers repeated, rows never split).
const STYLE = `
* { box-sizing: border-box; }
body { font-family: system-ui, sans-serif; margin: 1.5rem auto; padding: 0 1.5rem; max-width: 1280px; color: #222; font-size: 14px; }
h1 { font-size: 1.5rem; margin: 0 0 0.5rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; border-bottom: 1px solid #ccc; }
dl#facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; margin: 0.5rem 0 1rem; }
dl#facts dt { font-weight: 600; }
dl#facts dd { margin: 0; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; width: 100%; font-size: 12.5px; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.45rem; text-align: left; vertical-align: top; }
thead th { background: #f3f3f3; word-break: normal; overflow-wrap: normal; hyphens: none; }
thead th.amount { overflow-wrap: normal; }
q.note { white-space: pre-wrap; }
td.date, td.nowrap { white-space: nowrap; }
td.amount, th.amount { text-align: right; font-variant-numeric: tabular-nums; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
tr.status-break td, tr.status-endpoint_mismatch td { background: #fde8e8; }
tr.status-missing_in_ledger td, tr.status-missing_in_gateway td, tr.status-no_snapshot td, tr.status-no_books td, tr.status-disappeared td { background: #fff6db; }
tfoot th, tfoot td { background: #f7f7f7; font-weight: 600; }
details.matched-rows > summary { cursor: pointer; color: #555; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(380px, 1fr)); gap: 0.5rem 1rem; }
.charts figure { margin: 0; }
.charts svg { max-width: 100%; height: auto; }
.chart-title { font-weight: bold; font-size: 14px; }
.x-label, .y-label, .legend { font-size: 11px; fill: #333; }
.ok { color: #1a7f37; }
.warn { color: #9a6700; }
tr.case-accepted td { background: #eef3fb; }
#sign-off table { width: auto; min-width: 60%; }
#sign-off td { height: 2.6rem; min-width: 14rem; }
@page { size: A4; margin: 12mm; }
@media print {
  body { margin: 0; padding: 0; max-width: none; font-size: 9pt; }
  table { font-size: 8pt; }
  section.page { break-before: page; }
  thead { display: table-header-group; }
  tr, figure, #sign-off { break-inside: avoid; }
  .charts { grid-template-columns: 1fr 1fr; }
  details.matched-rows > summary { list-style: none; }
}`;

const statusLabel = (status: string) => status.replaceAll('_', ' ');

/** An instant as read in the business time zone, with the zone's abbreviation: "2026-11-20 23:55 CET". */
function localTime(instant: Date, timezone: string): string {
  return formatLocalTime(instant, timezone);
}

/** "EUR 2 decimals, JPY none, KWD 3": the decimals of the currencies the report shows. */
function describeDecimals(currencies: readonly string[]): string {
  const shown = [...new Set(currencies)].sort().map((c) => {
    const decimals = currencyDecimals(c);
    return decimals === null ? `${c} minor units` : `${c} ${decimals === 0 ? 'no decimals' : `${decimals} decimal${decimals === 1 ? '' : 's'}`}`;
  });
  return shown.length === 0 ? '' : ` (${shown.join(', ')})`;
}

function resultRow(r: StoredReconciliationResult, withCurrency: boolean, style: NumberStyle): string {
  const currency = r.currency;
  const amounts = [r.gatewayBalance, r.expectedBalance, r.difference, r.movement].map((v) => `<td class="amount">${escapeHtml(formatOptionalAmount(v, currency, r.scale, style))}</td>`).join('');
  const single =
    r.status === 'endpoint_mismatch' && r.singleBalance !== null ? ` (single-wallet read ${escapeHtml(formatAmount(r.singleBalance, currency, r.scale, style))})` : '';
  return (
    `<tr class="status-${escapeHtml(r.status)}${r.case?.state === 'accepted' ? ' case-accepted' : ''}"><td class="date">${escapeHtml(r.businessDate)}</td><td>${escapeHtml(r.account)}</td>` +
    (withCurrency ? `<td>${escapeHtml(currency ?? '')}</td>` : '') +
    `<td class="nowrap">${escapeHtml(statusLabel(r.status))}${single}</td>${amounts}<td>${r.runId ?? ''}</td><td class="nowrap">${escapeHtml(caseText(r))}</td></tr>`
  );
}

/** The result's case in one cell ("#12 open, 3 d"): id, state now, age in days; empty when matched. */
function caseText(r: StoredReconciliationResult): string {
  const [id, state, age] = caseCells(r);
  return id === '' ? '' : `#${id} ${state}, ${age} d`;
}

const RESULT_HEAD = (withCurrency: boolean, rows: readonly Pick<StoredReconciliationResult, 'source'>[]) =>
  `<thead><tr><th>business date</th><th>account</th>${withCurrency ? '<th>currency</th>' : ''}<th>status</th><th class="amount">${escapeHtml(balanceHeaderOf(rows.map((r) => r.source)))}</th><th class="amount">books</th><th class="amount">difference</th><th class="amount">movement</th><th>run</th><th>case</th></tr></thead>`;

function currencySection(section: CurrencySection<StoredReconciliationResult>, allRows: boolean, style: NumberStyle): string {
  const { currency } = section;
  const shownMatched = section.collapseMatched || !allRows ? [] : section.matched;
  // Date order: a break sits among its neighbouring dates, not above them.
  const rows = [...section.exceptions, ...shownMatched]
    .sort((a, b) => a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account))
    .map((r) => resultRow(r, false, style))
    .join('\n');
  const totals = section.totals
    .map((t) => `<tr class="total"><th colspan="3">${escapeHtml(statusLabel(t.status))}: ${t.count} result${t.count === 1 ? '' : 's'}</th><td class="amount"></td><td class="amount"></td><td class="amount">${escapeHtml(formatOptionalAmount(t.difference, currency, undefined, style))}</td><td colspan="3"></td></tr>`)
    .join('\n');
  const collapsed = !allRows
    ? section.matchedCount === 0
      ? ''
      : `\n<p class="matched-rows">${section.matchedCount} matched result${section.matchedCount === 1 ? '' : 's'} not listed (report --all-rows lists them; the CSV report has every row).</p>`
    : section.collapseMatched
    ? `\n<details class="matched-rows"><summary>${section.matched.length} matched results (select to show)</summary>\n<table class="results matched">\n${RESULT_HEAD(false, section.matched)}\n<tbody>\n${section.matched.map((r) => resultRow(r, false, style)).join('\n')}\n</tbody>\n</table>\n</details>`
    : '';
  return `<section class="currency" data-currency="${escapeHtml(currency)}">
<h3>${escapeHtml(currency)}</h3>
<table class="results">
${RESULT_HEAD(false, [...section.exceptions, ...shownMatched])}
<tbody>
${rows}
</tbody>
<tfoot>
${totals}
</tfoot>
</table>${collapsed}
</section>`;
}

/**
 * What a range report read from a cursor counted besides the results it kept (the exceptions,
 * and the matched ones only when they are listed): see loadRangeReport.
 */
export interface RangeTallies {
  currencies: ReadonlyMap<string, CurrencyTally>;
  perDate: ReadonlyArray<{ date: string; counts: StatusCounts }>;
  resultCount: number;
  reconciledAccountDates: number;
}

/** Ranges longer than this are summarised: exceptions, a line per date and charts; matched rows only with --all-rows. */
export const LONG_RANGE_DAYS = 31;

/** A one-date report: one table of every currency, by account and currency, with counts per status. */
function oneDateTable(results: readonly StoredReconciliationResult[], style: NumberStyle): string {
  const rows = [...results]
    .sort((a, b) => a.account.localeCompare(b.account) || (a.currency ?? '').localeCompare(b.currency ?? ''))
    .map((r) => resultRow(r, true, style))
    .join('\n');
  // Differences of several currencies do not add up: the footer counts.
  const totals = totalsOf(results)
    .map((t) => `<tr class="total"><th colspan="11">${escapeHtml(statusLabel(t.status))}: ${t.count} result${t.count === 1 ? '' : 's'}</th></tr>`)
    .join('\n');
  return `<table class="results" id="results">
${RESULT_HEAD(true, results)}
<tbody>
${rows}
</tbody>
<tfoot>
${totals}
</tfoot>
</table>`;
}

/** A long range: one line per business date with its counts per status, in one pass over the results. */
function perDateTable(perDate: ReadonlyArray<{ date: string; counts: StatusCounts }>, columns: ReadonlyArray<{ header: string; count: (c: StatusCounts) => number }>): string {
  const rows = [...perDate]
    .sort((a, b) => a.date.localeCompare(b.date))
    .map(({ date, counts }) => {
      return `<tr><td class="date">${escapeHtml(date)}</td>${columns.map((c) => `<td class="amount">${c.count(counts)}</td>`).join('')}</tr>`;
    });
  return `<table id="per-date">
<thead><tr><th>business date</th>${columns.map((c) => `<th class="amount">${escapeHtml(c.header)}</th>`).join('')}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

/** Counts per status of each business date of a set of results, in one pass. */
export function countPerDate(results: readonly StoredReconciliationResult[]): Array<{ date: string; counts: StatusCounts }> {
  const byDate = new Map<string, StatusCounts>();
  for (const r of results) {
    let counts = byDate.get(r.businessDate);
    if (counts === undefined) {
      counts = countByStatus([]);
      byDate.set(r.businessDate, counts);
    }
    counts[r.status]++;
  }
  return [...byDate.entries()].map(([date, counts]) => ({ date, counts }));
}

/** Rows by business date and account, in their order. */
function groupByDay<T extends { account: string; businessDate: string }>(rows: readonly T[]): Map<string, T[]> {
  const byDay = new Map<string, T[]>();
  for (const row of rows) {
    const key = `${row.businessDate}\u0000${row.account}`;
    const day = byDay.get(key);
    if (day === undefined) byDay.set(key, [row]);
    else day.push(row);
  }
  return byDay;
}

/**
 * Each account-date of the report and what it was compared from. A date reconciled with neither
 * snapshot nor books, and a date never reconciled, are listed too: a row left out would read as
 * a date the report does not cover.
 */
function sourcesTable(
  facts: ReportFacts,
  reconciled: ReadonlyArray<{ account: string; businessDate: string; source?: string | null }>,
  unreconciled: ReadonlyArray<{ account: string; businessDate: string }>,
  only?: ReadonlySet<string>,
  unkeptAccountDates = 0,
): string {
  const keys = new Map<string, { account: string; businessDate: string }>();
  const statements = facts.statements ?? [];
  const bankKeys = new Set([...statements, ...reconciled.filter((r) => 'source' in r && r.source === 'bank')].map((f) => `${f.businessDate}\u0000${f.account}`));
  for (const f of [...facts.captures, ...facts.books, ...statements, ...reconciled]) keys.set(`${f.businessDate}\u0000${f.account}`, { account: f.account, businessDate: f.businessDate });
  const never = new Set<string>();
  for (const d of unreconciled) {
    const key = `${d.businessDate}\u0000${d.account}`;
    if (keys.has(key)) continue;
    keys.set(key, d);
    never.add(key);
  }
  if (keys.size === 0 && unkeptAccountDates === 0) return '<p>No snapshot or books file was used in this period.</p>';
  // A long range lists the account-dates that need attention; the others only with --all-rows.
  const left = (only === undefined ? 0 : [...keys.keys()].filter((k) => !only.has(k) && !never.has(k)).length) + unkeptAccountDates;
  if (only !== undefined) for (const k of [...keys.keys()]) if (!only.has(k) && !never.has(k)) keys.delete(k);
  const leftNote = left === 0 ? '' : `\n<p>${left} other account-date${left === 1 ? '' : 's'}, all matched, ${left === 1 ? 'is' : 'are'} listed with report --all-rows.</p>`;
  // Keyed once: a filter over every capture and books row per account-date was quadratic.
  const capturesOf = groupByDay(facts.captures);
  const statementsOf = groupByDay(statements);
  const booksOf = groupByDay(facts.books);
  const rows = [...keys.values()]
    .sort((a, b) => a.businessDate.localeCompare(b.businessDate) || a.account.localeCompare(b.account))
    .map(({ account, businessDate }) => {
      if (never.has(`${businessDate}\u0000${account}`)) {
        return `<tr><td class="date">${escapeHtml(businessDate)}</td><td>${escapeHtml(account)}</td><td colspan="2">not reconciled</td></tr>`;
      }
      const books = booksOf.get(`${businessDate}\u0000${account}`) ?? [];
      const file = books.map((b) => `${escapeHtml(b.source)} (import ${b.importId}, ${escapeHtml(localTime(b.importedAt, facts.timezone))})`).join('<br>') || 'no books';
      if (bankKeys.has(`${businessDate}\u0000${account}`)) {
        // A bank account is never captured: its balance is its statement's, proved on its own.
        const stated =
          (statementsOf.get(`${businessDate}\u0000${account}`) ?? [])
            .map((st) => `bank statement ${escapeHtml(st.statementId)} (${escapeHtml(st.format)}, ${escapeHtml(st.sourceFile)}), proof ${escapeHtml(st.proof.replaceAll('_', ' '))}`)
            .join('<br>') || 'no bank statement for this date';
        return `<tr><td class="date">${escapeHtml(businessDate)}</td><td>${escapeHtml(account)}</td><td>${stated}</td><td>${file}</td></tr>`;
      }
      const captures = capturesOf.get(`${businessDate}\u0000${account}`) ?? [];
      // A day imported from a statement was not captured at its cut-off: it says which file it came from.
      const snapshot =
        captures
          .map((c) =>
            c.source !== null && c.source !== undefined
              ? `run ${c.runId} (${escapeHtml(c.trigger)}), from the statement file ${escapeHtml(c.source)}, imported ${escapeHtml(localTime(c.capturedAt, facts.timezone))}`
              : `run ${c.runId} (${escapeHtml(c.trigger)}), ${escapeHtml(localTime(c.capturedAt, facts.timezone))}, ${escapeHtml(describeCaptureTiming(c.businessDate, c.endOfDay, c.driftSeconds).replace(/^[\d-]+, /, ''))}${c.capturedUnder === undefined ? '' : ` (${escapeHtml(c.capturedUnder)})`}`,
          )
          .join('<br>') || 'no snapshot';
      return `<tr><td class="date">${escapeHtml(businessDate)}</td><td>${escapeHtml(account)}</td><td>${snapshot}</td><td>${file}</td></tr>`;
    });
  if (rows.length === 0) return `<p>Every account-date matched.</p>${leftNote}`;
  return `<table id="sources">
<thead><tr><th>business date</th><th>account</th><th>${escapeHtml(bankKeys.size === 0 ? 'gateway snapshot (captured, distance to cut-off)' : bankKeys.size === keys.size ? 'bank statement (proof)' : 'gateway snapshot (captured, distance to cut-off) or bank statement (proof)')}</th><th>books file (imported)</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>${leftNote}`;
}

/**
 * What people said of the cases of the results needing attention: each case's state, its latest
 * note in full with its author and time, an acceptance with its reason and end date.
 */
function caseStory(breaks: readonly StoredReconciliationResult[], facts: ReportFacts): string {
  const seen = new Set<number>();
  const latest = new Map((facts.caseNotes?.latest ?? []).map((n) => [n.caseId, n]));
  const accepted = new Map((facts.caseNotes?.acceptances ?? []).map((n) => [n.caseId, n]));
  const lines: string[] = [];
  for (const r of breaks) {
    const c = r.case;
    if (c === null || c === undefined || seen.has(c.id)) continue;
    seen.add(c.id);
    const head = `#${c.id} ${r.account}${r.currency === null ? '' : ` ${r.currency}`} ${statusLabel(r.status)}: ${c.state.replaceAll('_', ' ')}, ${c.ageDays} day${c.ageDays === 1 ? '' : 's'}`;
    const acceptance = accepted.get(c.id);
    const note = latest.get(c.id);
    const parts = [`<strong>${escapeHtml(head)}</strong>`];
    if (c.state === 'accepted') {
      parts.push(
        escapeHtml(`accepted until ${c.acceptedUntil ?? 'further notice'}${acceptance === undefined ? '' : ` by ${acceptance.actor}, ${localTime(acceptance.at, facts.timezone)}`}`) +
          (acceptance === undefined ? '' : `, reason: <q class="note">${escapeHtml(acceptance.note)}</q>`),
      );
    }
    if (note !== undefined && note !== acceptance) {
      parts.push(`latest note by ${escapeHtml(note.actor)}, ${escapeHtml(localTime(note.at, facts.timezone))} (${escapeHtml(note.action)}): <q class="note">${escapeHtml(note.note)}</q>`);
    } else if (note === undefined) {
      parts.push('no note yet');
    }
    lines.push(`<li>${parts.join('; ')}</li>`);
  }
  return lines.length === 0 ? '' : `\n<h3>Cases</h3>\n<ul id="case-story">\n${lines.join('\n')}\n</ul>`;
}

/** The sign-offs of the date, oldest first: who prepared, approved, and why each stopped standing (invalidated, reopened). */
function signoffStory(facts: ReportFacts): string {
  const signoffs = facts.signoffs ?? [];
  if (signoffs.length === 0) return '';
  const at = (d: Date) => escapeHtml(localTime(d, facts.timezone));
  const lines = signoffs.map((s) => {
    const steps = [`prepared by ${escapeHtml(s.preparedBy)}, ${at(s.preparedAt)}`];
    if (s.approvedBy !== null && s.approvedAt !== null) steps.push(`approved by ${escapeHtml(s.approvedBy)}, ${at(s.approvedAt)}`);
    if (s.invalidatedAt !== null) steps.push(`invalidated ${at(s.invalidatedAt)}${s.invalidation === null || s.invalidation.length === 0 ? '' : `: ${escapeHtml(s.invalidation.join(' '))}`}`);
    if (s.reopenedAt !== null) steps.push(`reopened by ${escapeHtml(s.reopenedBy ?? '')}, ${at(s.reopenedAt)}, why: <q class="note">${escapeHtml(s.reopenNote ?? '')}</q>`);
    return `<li>Sign-off #${s.id}: ${steps.join('; ')}</li>`;
  });
  return `\n<h3>History of this date's sign-offs</h3>\n<ul id="signoff-history">\n${lines.join('\n')}\n</ul>`;
}

/** The sign-off block of an ordinary report: the approved sign-off's preparer and approver with their times, else blank lines to sign on. */
function approvedBlock(facts: ReportFacts): string {
  const approved = standingApproval(facts);
  if (approved === undefined) return '<tr><th>Prepared by</th><td></td><th>Date</th><td></td></tr>\n<tr><th>Reviewed by</th><td></td><th>Date</th><td></td></tr>';
  const at = (d: Date) => `${escapeHtml(localTime(d, facts.timezone))} (${escapeHtml(d.toISOString())})`;
  return `<tr><th>Prepared by</th><td>${escapeHtml(approved.preparedBy)}</td><th>Date</th><td>${at(approved.preparedAt)}</td></tr>
<tr><th>Approved by</th><td>${escapeHtml(approved.approvedBy!)}</td><th>Date</th><td>${at(approved.approvedAt!)}</td></tr>`;
}

/** "1 result needs attention, 1 accepted": the same counts as the table report. */
function attentionSentence(breaks: readonly StoredReconciliationResult[]): string {
  const accepted = breaks.filter((r) => r.case?.state === 'accepted').length;
  const needing = breaks.length - accepted;
  return `${needing === 1 ? '1 result needs' : `${needing} results need`} attention${accepted === 0 ? '' : `, ${accepted} accepted`}`;
}

/** The standing approved sign-off of an ordinary report's date, for its sign-off block. */
function standingApproval(facts: ReportFacts) {
  return (facts.signoffs ?? []).find((s) => s.approvedBy !== null && s.approvedAt !== null && s.invalidatedAt === null && s.reopenedAt === null);
}

/**
 * One self-contained HTML page an accountant can sign: the header facts (accounts, dates, what
 * was compared with what, tolerance, generation time), totals per account, every exception
 * (largest absolute difference first), a table per currency with the matched rows too, charts
 * of the currencies that moved or broke (small multiples over the same dates), and a sign-off block.
 */
/**
 * The waterfall of each account, currency and date that has open reconciling items or a break:
 * books + open items = adjusted books; the gateway or bank balance minus that is unexplained.
 */
function waterfallSection(results: readonly StoredReconciliationResult[], itemKinds: readonly ItemKindFact[] = []): string {
  const shown = results.filter((r) => r.currency !== null && r.expectedBalance !== null && r.gatewayBalance !== null && (r.status === 'break' || (r.itemsTotal ?? 0n) !== 0n || r.status === 'explained'));
  if (shown.length === 0) return '';
  const money = (v: bigint | null | undefined, r: StoredReconciliationResult) => (v === null || v === undefined ? '' : escapeHtml(formatAmount(v, r.currency, r.scale)));
  const rows = shown.map((r) => {
    const items = r.itemsTotal ?? 0n;
    const unexplained = r.unexplained ?? r.difference;
    // The open items by kind: "in transit (1) 123.45; fee (2) -5.00".
    const kinds = itemKinds
      .filter((k) => k.account === r.account && k.businessDate === r.businessDate && k.currency === r.currency)
      .map((k) => `${k.kind.replaceAll('_', ' ')} (${k.count}) ${formatAmount(k.total, k.currency, k.scale)}`)
      .join('; ');
    return `<tr data-account="${escapeHtml(r.account)}" data-currency="${escapeHtml(r.currency!)}"><td>${escapeHtml(r.businessDate)}</td><td>${escapeHtml(r.account)}</td><td>${escapeHtml(r.currency!)}</td><td class="amount">${money(r.expectedBalance, r)}</td><td class="amount">${money(items, r)}</td><td class="amount">${money(r.expectedBalance! + items, r)}</td><td class="amount">${money(r.gatewayBalance, r)}</td><td class="amount">${money(unexplained, r)}</td><td>${escapeHtml(r.status)}</td><td class="item-kinds">${escapeHtml(kinds)}</td></tr>`;
  });
  return `
<h2>Waterfall</h2>
<p>Books + open reconciling items = adjusted books; the gateway or bank balance minus the adjusted books is unexplained. Only an unexplained part beyond the tolerance is a break.</p>
<table id="waterfall">
<thead><tr><th>business date</th><th>account</th><th>currency</th><th class="amount">books</th><th class="amount">open items</th><th class="amount">adjusted books</th><th class="amount">gateway / bank</th><th class="amount">unexplained</th><th>status</th><th>open items by kind</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

export function renderHtml(
  report: Report<StoredReconciliationResult>,
  histories: readonly CurrencyHistory[],
  generatedAt: Date,
  facts?: ReportFacts,
  options: { allRows?: boolean; streamed?: RangeTallies } = {},
): string {
  return [...renderHtmlChunks(report, histories, generatedAt, facts, options)].join('');
}

/**
 * The page of renderHtml in pieces, each chart rendered only when its piece is asked for: a
 * writer that takes them one by one never holds the page, nor more than one chart's SVG.
 */
export function* renderHtmlChunks(
  report: Report<StoredReconciliationResult>,
  histories: readonly CurrencyHistory[],
  generatedAt: Date,
  facts: ReportFacts = { generatedAt, timezone: 'UTC', cutoff: '00:00', tolerance: { default: '0', byCurrency: {}, bps: 0 }, captures: [], books: [] },
  options: { allRows?: boolean; streamed?: RangeTallies } = {},
): Generator<string> {
  const { summary, results } = report;
  const style = facts.locale === undefined ? DEFAULT_NUMBER_STYLE : numberStyleOf(facts.locale);
  const streamed = options.streamed;
  const resultCount = streamed?.resultCount ?? results.length;
  const oneDate = summary.from === summary.to;
  const long = datesBetween(summary.from, summary.to).length > LONG_RANGE_DAYS;
  const allRows = options.allRows === true || !long;
  // Account-dates with a result that is not matched: what a summarised range still details.
  const exceptional = allRows ? undefined : new Set(results.filter((r) => r.status !== 'matched').map((r) => `${r.businessDate}\u0000${r.account}`));
  const view = buildReportView(report, histories, streamed?.currencies);
  // A streamed summarised range kept only its exceptions: the account-dates it did not keep are counted, not listed.
  const unkept = streamed === undefined || exceptional === undefined ? 0 : streamed.reconciledAccountDates - exceptional.size;
  const period = summary.from === summary.to ? summary.from : `${summary.from} to ${summary.to}`;
  const accounts = summary.account === null ? summary.accounts.map((a) => a.account) : [summary.account];
  const title = `Reconciliation ${period}${summary.account === null ? '' : ` — ${summary.account}`}`;

  const bank = coversBank(summary);
  // The statuses that occur (matched always): a column of zeros for each of fifteen statuses hid the one that mattered.
  const summaryColumns = summaryColumnsOf(summary).filter((c, i) => i === 0 || summary.accounts.some((a) => c.count(a.counts) > 0));
  const summaryRows = summary.accounts
    .map((a) => `<tr><td>${escapeHtml(a.account)}</td>${bank ? `<td>${escapeHtml(a.source)}</td>` : ''}${summaryColumns.map((c) => `<td class="amount">${c.count(a.counts)}</td>`).join('')}</tr>`)
    .join('\n');
  const unreconciled = describeUnreconciled(summary);
  const unreconciledList =
    unreconciled.length === 0 ? '' : `\n<ul id="unreconciled" class="warn">\n${unreconciled.map((line) => `<li>${escapeHtml(line)}</li>`).join('\n')}\n</ul>`;
  const caseLines = describeCases(summary);
  const caseList = caseLines.length === 0 ? '' : `\n<ul id="cases">\n${caseLines.map((line) => `<li>${escapeHtml(line)}</li>`).join('\n')}\n</ul>`;
  const downsampled = view.charts.some((h) => h.downsampled === true);
  const unchanged = view.sections.filter((s) => !s.moved).map((s) => s.currency);

  yield `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${escapeHtml(title)}</h1>
<dl id="facts">
<dt>Accounts</dt><dd>${escapeHtml(accounts.join(', ') || 'none')}</dd>
<dt>Business dates</dt><dd>${escapeHtml(period)} (each ends at ${escapeHtml(facts.cutoff)} ${escapeHtml(facts.timezone)})</dd>
<dt>Compared</dt><dd>${bank ? "the gateway's end-of-day balances and the bank statements' closing booked balances" : "the gateway's end-of-day balances"} with the merchant's books (per date below)</dd>
<dt>Tolerance</dt><dd>${escapeHtml(describeTolerance(facts.tolerance, view.sections.map((s) => s.currency)))}</dd>
<dt>Amounts</dt><dd>in each currency's major units${escapeHtml(describeDecimals(view.sections.map((s) => s.currency)))}; differences are ${escapeHtml(balanceHeaderOf(summary.accounts.map((a) => a.source)))} minus books</dd>
<dt>Generated</dt><dd>${escapeHtml(localTime(facts.generatedAt, facts.timezone))} (${escapeHtml(facts.generatedAt.toISOString())})</dd>
</dl>
<h2>What was compared</h2>
${sourcesTable(
  facts,
  results,
  summary.accounts.flatMap((a) => a.unreconciledDates.map((businessDate) => ({ account: a.account, businessDate }))),
  exceptional,
  unkept,
)}
</header>
<section id="summary-section">
<h2>Summary</h2>
${
  resultCount === 0
    ? '<p>No reconciliation results are stored for this period.</p>'
    : `<table id="summary">
<thead><tr><th>account</th>${bank ? '<th>source</th>' : ''}${summaryColumns.map((c) => `<th class="amount">${escapeHtml(c.header)}</th>`).join('')}</tr></thead>
<tbody>
${summaryRows}
</tbody>
</table>`
}${caseList}${unreconciledList}
<h2>Breaks and missing balances</h2>
${
  view.breaks.length === 0
    ? `<p class="ok">${resultCount === 0 ? 'Nothing to show.' : unreconciled.length === 0 ? 'Every result matched.' : 'Every stored result matched, but not every date was reconciled.'}</p>`
    : `<p>${attentionSentence(view.breaks)}, the largest absolute difference first.</p>
<table id="breaks">
${RESULT_HEAD(true, view.breaks)}
<tbody>
${view.breaks.map((r) => resultRow(r, true, style)).join('\n')}
</tbody>
</table>${caseStory(view.breaks, facts)}`
}${waterfallSection(results, facts.itemKinds)}
</section>
${
  oneDate
    ? `<section id="currencies" class="page">
<h2>Results</h2>
${results.length === 0 ? '<p>No results.</p>' : oneDateTable(results, style)}
</section>`
    : `${
        long && resultCount > 0
          ? `<section id="per-date-section" class="page">
<h2>Per business date</h2>
${perDateTable(streamed?.perDate ?? countPerDate(results), summaryColumns)}
</section>
`
          : ''
      }<section id="currencies" class="page">
<h2>Results per currency</h2>
${view.sections.length === 0 ? '<p>No results per currency.</p>' : view.sections.map((section) => currencySection(section, allRows, style)).join('\n')}
</section>`
}
<section id="charts-section" class="page">
<h2>Balance history</h2>
${
  view.charts.length === 0
    ? `<p>${oneDate ? 'A chart needs two business dates or more: this report is of one.' : histories.length === 0 ? 'No snapshots in this period.' : 'No currency moved or broke in this period.'}</p>`
    : `<p>Currencies that moved or broke, over the same dates; solid lines are the gateway, dashed lines the books.${unchanged.length === 0 ? '' : ` Unchanged and matched: ${escapeHtml(unchanged.join(', '))}.`}${
        downsampled
          ? ` The period has more dates than a chart has room for: each line runs through the lowest and the highest balance of each of ${CHART_COLUMNS} stretches of dates, so every spike shows; a line's tooltip gives its lowest and highest balance, and the CSV report every date's balances.`
          : ''
      }</p>
<div class="charts">
`
}`;
  // One chart at a time: the charts are most of a long range's page.
  for (const [i, h] of view.charts.entries()) yield `${i === 0 ? '' : '\n'}<figure>\n${renderBalanceChartSvg(h, { width: 460, height: 250 })}\n</figure>`;
  yield `${view.charts.length === 0 ? '' : '\n</div>'}
</section>
<section id="sign-off">
<h2>Sign-off</h2>
<table>
<tbody>
${
  facts.preparer === undefined
    ? approvedBlock(facts)
    : `<tr><th>Prepared by</th><td>${escapeHtml(facts.preparer.name)}</td><th>Date</th><td>${escapeHtml(localTime(facts.preparer.at, facts.timezone))} (${escapeHtml(facts.preparer.at.toISOString())})</td></tr>
<tr><th>Approved by</th><td colspan="3">Sealed before approval: the approval (approver and time) is recorded with the sign-off and shown beside this report wherever it is downloaded.</td></tr>`
}
</tbody>
</table>${signoffStory(facts)}
</section>
</body>
</html>
`;
}
