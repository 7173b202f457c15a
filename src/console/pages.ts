import { ageBucketOf, caseAgeDays, describeCase, type CaseEvent, type CaseOccurrence, type ReconciliationCase } from '../cases/case-model.js';
import { actionsAllowedFrom, noteRequiredFor } from '../cases/case-actions.js';
import type { CaseSnooze } from '../db/problem.repository.js';
import type { BooksOfDate, CaptureOfDate } from '../db/console-views.repository.js';
import { describeDrift } from '../business-date/capture-drift.js';
import { formatLocalTime, formatLocalTimeText } from '../business-date/local-time.js';
import { formatOptionalAmount } from '../money/format-amount.js';
import type { NumberStyle } from '../money/number-style.js';
import { localizeAmounts } from '../money/localize-amounts.js';
import { escapeHtml as e } from '../escape-html.js';
import type { StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import { compareByAbsoluteDifference } from '../reports/report-view.js';
import type { SignoffState } from '../signoff/signoff-service.js';
import { mayActOnCases, mayApprove, mayExportEvidence, mayPrepare } from './roles.js';
import { explainSection, trailSection, type AccountExplain } from './items-panel.js';
import type { PageContext } from './page-context.js';
import type { DifferenceTrail } from '../cases/difference-trail.js';

// Server-rendered pages. No inline script or style anywhere (the Content-Security-Policy allows
// only /assets/ files); every value from the database or the request goes through escapeHtml.

export type { PageContext } from './page-context.js';

const amount = (v: bigint | null | undefined, currency: string | null, style?: NumberStyle) => `<td class="amount">${e(formatOptionalAmount(v, currency, undefined, style))}</td>`;
/** A time as people of the business read it: "2026-11-27 06:29 CET". */
const localTime = (instant: Date, page: PageContext, seconds = false) => formatLocalTime(instant, page.timezone ?? 'UTC', { seconds });
const label = (s: string) => s.replaceAll('_', ' ');

export function csrfField(page: PageContext): string {
  return page.csrfToken === undefined ? '' : `<input type="hidden" name="_csrf" value="${e(page.csrfToken)}">`;
}

export function layout(title: string, page: PageContext, body: string): string {
  const nav =
    page.user === undefined
      ? ''
      : `<nav><a href="/overview">Overview</a> <a href="/day">Day</a> <a href="/cases">Cases</a><span class="who">Signed in as <strong>${e(page.user.name)}</strong> (${e(page.user.role)})</span>` +
        (page.user.source === 'local' ? `<a href="/account/password">Change password</a>` : '') +
        `<form method="post" action="/logout" class="inline">${csrfField(page)}<button type="submit">Sign out</button></form></nav>`;
  const notice = page.notice === undefined ? '' : `<p class="notice ${page.notice.kind}" role="${page.notice.kind === 'error' ? 'alert' : 'status'}">${e(page.notice.text)}</p>`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)} · wallet-recon</title><link rel="stylesheet" href="/assets/console.css"><script src="/assets/console.js" defer></script></head>
<body><header><span class="brand">wallet-recon</span>${nav}</header><main>
<h1>${e(title)}</h1>${notice}
${body}
</main></body></html>`;
}

export function loginPage(page: PageContext & { loginCsrf: string; userName?: string; oidc: boolean }): string {
  return layout(
    'Sign in',
    page,
    `<form method="post" action="/login" class="login">
<input type="hidden" name="_csrf" value="${e(page.loginCsrf)}">
<label for="user">User name</label><input id="user" name="user" autocomplete="username" required value="${e(page.userName ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>${page.oidc ? '<p><a href="/auth/oidc" class="button">Sign in with your company account</a></p>' : ''}`,
  );
}

export interface DayView {
  date: string;
  previous: string;
  next: string | undefined;
  accounts: string[];
  captures: CaptureOfDate[];
  books: BooksOfDate[];
  results: StoredReconciliationResult[];
  cases: Map<number, ReconciliationCase>;
  /** The snoozes of those cases running on the date. */
  snoozes?: ReadonlyMap<number, CaseSnooze>;
  signoff: SignoffState;
  /** The date's sign-offs that do not verify, each with its first broken row named (src/signoff/signoff-integrity.ts). */
  signoffProblems?: ReadonlyMap<number, string>;
  today: string;
  /** While the date's cut-off or capture window has not passed: the accounts not settled for that reason yet. */
  window?: { cutoffAt: Date; closesAt: Date; now: Date; accounts: ReadonlySet<string> };
  /** On a PostgreSQL server: the date's capture and settle jobs still in the queue (waiting or running). */
  queued?: { waiting: number; active: number };
  /** Each bank account's statement closing on the date (null: none imported); gateway accounts are absent. */
  statements?: ReadonlyMap<string, { statementId: string; proof: string } | null>;
  /** Each currency's recent balance trend as inline SVG, by `${account}\u0000${currency}`. */
  trends?: Map<string, string>;
  /** Each account's open items, matches and unmatched entries of the date: the waterfall and the hand on them. */
  explain?: ReadonlyMap<string, AccountExplain>;
  /** The page of accounts shown (1-based) of `pages`, and how many accounts and results the date has in all. */
  paging?: { page: number; pages: number; first: number; totalAccounts: number; totalResults: number; needAttention: number };
}

/** How much of the date's night is still in the job queue, in one sentence. */
function queuedLine(view: DayView): string {
  const q = view.queued;
  if (q === undefined) return '';
  const text =
    q.waiting + q.active === 0
      ? `Nothing of the night of ${view.date} is still queued.`
      : `Still queued for the night of ${view.date}: ${q.waiting} job(s) waiting, ${q.active} running.`;
  return `<p id="queued">${e(text)}</p>`;
}

/** Links to the other pages of a list, keeping its query (`?date=…`, filters). */
function pagerLinks(base: string, query: Record<string, string | undefined>, page: number, pages: number): string {
  if (pages <= 1) return '';
  const href = (n: number) => `${base}?${new URLSearchParams({ ...Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== '')), page: String(n) } as Record<string, string>).toString()}`;
  const previous = page > 1 ? `<a href="${e(href(page - 1))}" rel="prev">← previous</a>` : '';
  const next = page < pages ? `<a href="${e(href(page + 1))}" rel="next">next →</a>` : '';
  return ` <span class="pager">${previous} page ${page} of ${pages} ${next}</span>`;
}

function signoffSection(view: DayView, page: PageContext): string {
  const { state, current, history } = view.signoff;
  const problems = view.signoffProblems ?? new Map<number, string>();
  const broken = current === undefined ? undefined : problems.get(current.id);
  const historyTable = () =>
    history.length === 0
      ? ''
      : `<table id="signoffs"><thead><tr><th>sign-off</th><th>prepared by</th><th>prepared at</th><th>approved by</th><th>approved at</th><th>report SHA-256</th><th>state</th></tr></thead><tbody>${history
          .map((s) =>
            problems.has(s.id)
              ? `<tr><td>#${s.id}</td><td colspan="4"></td><td><code>${e(s.reportSha256)}</code></td><td class="broken">does not verify</td></tr>`
              : `<tr><td>#${s.id}</td><td>${e(s.preparedBy)}</td><td class="nowrap">${e(localTime(s.preparedAt, page))}</td><td>${e(s.approvedBy ?? '')}</td><td class="nowrap">${e(s.approvedAt === null ? '' : localTime(s.approvedAt, page))}</td>` +
                `<td><a href="/signoffs/${s.id}/report"><code>${e(s.reportSha256)}</code></a></td><td>${s.reopenedAt !== null ? `reopened by ${e(s.reopenedBy ?? '')}, ${e(localTime(s.reopenedAt, page))}: ${e(s.reopenNote ?? '')}` : s.invalidatedAt === null ? (s.approvedBy === null ? 'prepared' : 'approved') : 'changed after sign-off'}</td></tr>`,
          )
          .join('')}</tbody></table>`;
  if (broken !== undefined) {
    // Nothing this sign-off claims (who approved it, that the date is locked) is shown: it cannot be trusted.
    return `<section id="sign-off"><h2>Sign-off</h2><p>Sign-off state: <strong class="signoff-state">broken seal</strong></p>\n<div class="changed broken"><p><strong>This sign-off does not verify: ${e(broken)}.</strong> Run "wallet-recon signoff verify" and restore the database from a backup.</p></div>\n${historyTable()}</section>`;
  }
  const lines: string[] = [`<p>Sign-off state: <strong class="signoff-state">${e(state)}</strong></p>`];
  if (state === 'changed after sign-off' && current !== undefined) {
    lines.push(`<div class="changed"><p><strong>changed after sign-off</strong>: sign-off #${current.id} (prepared by ${e(current.preparedBy)}${current.approvedBy === null ? '' : `, approved by ${e(current.approvedBy)}`}) no longer matches its inputs; it must be signed again.</p><ul>${((current.invalidation ?? []) as string[]).map((c) => `<li>${e(c)}</li>`).join('')}</ul></div>`);
  }
  if (state === 'reopened' && current !== undefined) {
    lines.push(`<div class="changed"><p><strong>reopened</strong>: sign-off #${current.id} (prepared by ${e(current.preparedBy)}, approved by ${e(current.approvedBy ?? '')}) was reopened by <strong>${e(current.reopenedBy ?? '')}</strong> at ${e(current.reopenedAt === null ? '' : localTime(current.reopenedAt, page))}: ${e(current.reopenNote ?? '')}. The date is unlocked and must be signed again.</p></div>`);
  }
  if (state === 'approved') lines.push('<p class="locked">This date is locked: its books, results and captures cannot change until an approver reopens it.</p>');
  if (state === 'approved' && page.user !== undefined && mayExportEvidence(page.user.role)) {
    lines.push(`<p class="evidence"><a href="/evidence/day?date=${e(view.date)}" download>Download evidence pack</a> (the signed zip an auditor checks offline with "wallet-recon verify-pack")</p>`);
  }
  if (state === 'prepared' || state === 'approved') {
    lines.push(`<p>Prepared by <strong>${e(current!.preparedBy)}</strong> at ${e(localTime(current!.preparedAt, page))}${current!.approvedBy === null ? ', waiting for approval' : `; approved by <strong>${e(current!.approvedBy)}</strong> at ${e(localTime(current!.approvedAt!, page))}`}.</p>`);
  }
  const form = (action: string, text: string) => `<form method="post" action="${action}" class="inline">${csrfField(page)}<input type="hidden" name="date" value="${e(view.date)}"><button type="submit">${text}</button></form>`;
  // Only the buttons this user may press: the server refuses the others all the same.
  const user = page.user;
  if (state === 'not signed' || state === 'changed after sign-off' || state === 'reopened') {
    // A date whose day or capture window is still open would be refused: no button, but when it can be.
    if (view.window !== undefined) {
      // Only bank accounts waiting: their day ends at the cut-off, and they have no capture window.
      const onlyBanks = [...view.window.accounts].every((a) => view.statements?.has(a) === true);
      const why = onlyBanks ? `The day is not over: its cut-off is at ${localTime(view.window.cutoffAt, page)}.` : windowSentence(view.window, page);
      lines.push(`<p class="hint" id="window-open">${e(why)} The sign-off can be prepared after that.</p>`);
    } else if (user !== undefined && mayPrepare(user.role)) lines.push(form('/signoffs/prepare', 'Prepare sign-off'));
    else lines.push('<p class="hint">Waiting for a preparer to prepare the sign-off.</p>');
  }
  if (state === 'prepared') {
    if (user !== undefined && mayApprove(user.role) && current!.preparedBy !== user.name) lines.push(form('/signoffs/approve', 'Approve sign-off'));
    else lines.push(`<p class="hint">Waiting for an approver other than ${e(current!.preparedBy)} to approve it.</p>`);
  }
  if (state === 'approved' && page.user !== undefined && mayApprove(page.user.role)) {
    // A note is required: the reason is the evidence of why a closed day was opened again.
    lines.push(
      `<form method="post" action="/signoffs/reopen" class="inline">${csrfField(page)}<input type="hidden" name="date" value="${e(view.date)}"><label>Why (required) <input type="text" name="note" required maxlength="4000"></label> <button type="submit">Reopen sign-off</button></form>`,
    );
  }
  if (history.length > 0) lines.push(historyTable());
  return `<section id="sign-off"><h2>Sign-off</h2>${lines.join('\n')}</section>`;
}

/** Until when a date is still open, for people: its cut-off, then its capture window, then reconciled. */
function windowSentence(window: NonNullable<DayView['window']>, page: PageContext): string {
  const until = `capture window open until ${localTime(window.closesAt, page)}`;
  return window.now < window.cutoffAt
    ? `The day is not over: its cut-off is at ${localTime(window.cutoffAt, page)}, its ${until}, then reconciled.`
    : `Capture window open until ${localTime(window.closesAt, page)} (cut-off ${localTime(window.cutoffAt, page)}), then reconciled.`;
}

export function dayPage(view: DayView, page: PageContext): string {
  const nav = `<p class="dates"><a href="/day?date=${view.previous}" rel="prev">← ${view.previous}</a> <strong>${e(view.date)}</strong> ${view.next === undefined ? '' : `<a href="/day?date=${view.next}" rel="next">${view.next} →</a>`}
<form method="get" action="/day" class="inline"><label for="date">Business date</label> <input id="date" name="date" type="date" value="${e(view.date)}"><button type="submit">Show</button></form></p>`;
  // Keyed once: the day of 200 accounts × 50 currencies is 10,000 results.
  const capturesOf = new Map(view.captures.map((c) => [c.account, c]));
  const booksOf = new Map(view.books.map((b) => [b.account, b]));
  const resultsOf = new Map<string, StoredReconciliationResult[]>();
  for (const r of view.results) {
    const own = resultsOf.get(r.account);
    if (own === undefined) resultsOf.set(r.account, [r]);
    else own.push(r);
  }
  const paging = view.paging;
  const counts =
    paging === undefined
      ? ''
      : `<p class="paging">Accounts ${paging.first}–${paging.first + view.accounts.length - 1} of ${paging.totalAccounts}; ${paging.totalResults} result${paging.totalResults === 1 ? '' : 's'} this date, ${paging.needAttention === 1 ? '1 needs' : `${paging.needAttention} need`} attention.${pagerLinks('/day', { date: view.date }, paging.page, paging.pages)}</p>`;
  const sections = view.accounts.map((account) => {
    const capture = capturesOf.get(account);
    const books = booksOf.get(account);
    const results = resultsOf.get(account) ?? [];
    const bank = view.statements?.has(account) === true;
    const statement = view.statements?.get(account) ?? null;
    const captured = bank
      ? statement === null
        ? 'no bank statement for this date'
        : `bank statement ${statement.statementId}, proof ${statement.proof}`
      : capture === undefined
        ? 'not captured (no run for this date)'
        : capture.status === 'captured'
          ? `captured: run ${capture.runId}, ${describeDrift(capture.cutoffDriftSeconds)}${capture.capturedUnder === undefined ? '' : ` (${capture.capturedUnder})`}${capture.attempts > 1 ? `, ${capture.attempts} attempts` : ''}`
          : capture.status === 'missed'
            ? `missed${capture.lastError === null ? '' : `: ${capture.lastError}`}`
            : `pending (${capture.attempts} attempt(s)${capture.runId === null ? '' : `, intraday run ${capture.runId}`})`;
    const booksText = books === undefined ? 'no books for this date' : `books arrived: ${books.currencies} currenc${books.currencies === 1 ? 'y' : 'ies'} from ${books.source} (import ${books.importId ?? '-'}, ${localTime(books.importedAt, page)})`;
    const ordered = [...results].sort((a, b) => Number(a.status === 'matched') - Number(b.status === 'matched') || compareByAbsoluteDifference(a, b));
    const rows = ordered.map((r) => {
      const c = r.caseId === null ? undefined : view.cases.get(r.caseId);
      return (
        `<tr class="status-${e(r.status)}"><td>${e(r.currency ?? '')}${r.currency === null ? '' : (view.trends?.get(`${account}\u0000${r.currency}`) ?? '')}</td><td>${e(label(r.status))}</td>${amount(r.gatewayBalance, r.currency, page.style)}${amount(r.expectedBalance, r.currency, page.style)}${amount(r.difference, r.currency, page.style)}` +
        `<td>${c === undefined ? '' : `<a href="/cases/${c.id}">case #${c.id}</a> ${e(c.state)}${snoozedText(view.snoozes?.get(c.id))}`}</td><td>${r.runId ?? ''}</td></tr>`
      );
    });
    const open = view.window?.accounts.has(account) === true ? view.window : undefined;
    const table =
      results.length === 0
        ? open === undefined
          ? '<p>Not reconciled for this date.</p>'
          : bank
            ? `<p class="window-open">The day is not over: its cut-off is at ${e(localTime(open.cutoffAt, page))}; the account is reconciled when its bank statement is imported.</p>`
            : `<p class="window-open">${e(windowSentence(open, page))}</p>`
        : `<table class="results"><thead><tr><th>currency</th><th>status</th><th class="amount">${bank ? 'bank' : 'gateway'}</th><th class="amount">books</th><th class="amount">difference</th><th>case</th><th>run</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
    const explain = view.explain?.get(account);
    const explained = explain === undefined || results.length === 0 ? '' : explainSection(explain, results, view.date, `/day?date=${view.date}`, page);
    return `<section class="account"><h2>Account ${e(account)}${bank ? ' (bank)' : ''}</h2><ul class="facts"><li>${e(captured)}</li><li>${e(booksText)}</li></ul>${table}${explained}</section>`;
  });
  return layout(`Business date ${view.date}`, page, `${nav}\n${queuedLine(view)}\n${signoffSection(view, page)}\n${counts}\n${sections.join('\n')}`);
}

export interface CasesFilter {
  state?: string;
  account?: string;
  currency?: string;
  kind?: string;
  assignee?: string;
  age?: string;
  sort: 'age' | 'size';
}

/** Cases shown per page of the inbox. */
export const CASES_PAGE_SIZE = 50;

export function casesPage(
  all: ReconciliationCase[],
  filter: CasesFilter,
  options: { today: string; accounts: string[]; kinds: readonly string[]; states: readonly string[]; ages: readonly string[]; page?: number },
  page: PageContext,
): string {
  const pages = Math.max(1, Math.ceil(all.length / CASES_PAGE_SIZE));
  const current = Math.min(Math.max(1, options.page ?? 1), pages);
  const cases = all.slice((current - 1) * CASES_PAGE_SIZE, current * CASES_PAGE_SIZE);
  const first = (current - 1) * CASES_PAGE_SIZE + 1;
  const select = (name: string, text: string, values: readonly string[], chosen: string | undefined) =>
    `<label>${text} <select name="${name}" class="auto-submit"><option value="">any</option>${values.map((v) => `<option value="${e(v)}"${v === chosen ? ' selected' : ''}>${e(label(v))}</option>`).join('')}</select></label>`;
  const form = `<form method="get" action="/cases" class="filters">
${select('state', 'State', options.states, filter.state)}
${select('account', 'Account', options.accounts, filter.account)}
<label>Currency <input name="currency" size="4" maxlength="3" value="${e(filter.currency ?? '')}"></label>
${select('kind', 'Kind', options.kinds, filter.kind)}
<label>Assignee <input name="assignee" size="10" value="${e(filter.assignee ?? '')}"></label>
${select('age', 'Age', options.ages, filter.age)}
<label>Sort <select name="sort" class="auto-submit"><option value="age"${filter.sort === 'age' ? ' selected' : ''}>age (oldest first)</option><option value="size"${filter.sort === 'size' ? ' selected' : ''}>size (largest first)</option></select></label>
<button type="submit">Filter</button></form>`;
  const rows = cases.map(
    (c) =>
      `<tr><td><a href="/cases/${c.id}">#${c.id}</a></td><td>${e(c.account)}</td><td>${e(c.currency ?? '')}</td><td>${e(label(c.kind))}</td><td>${e(c.state)}</td><td class="amount">${caseAgeDays(c, options.today)}</td>` +
      `<td>${c.occurrences}</td>${amount(c.latestDifference, c.currency, page.style)}<td>${e(c.assignee ?? '')}</td><td>${e(c.lastSeenOn)}</td></tr>`,
  );
  const table =
    cases.length === 0
      ? '<p>No cases match.</p>'
      : `<table id="cases"><thead><tr><th>case</th><th>account</th><th>currency</th><th>kind</th><th>state</th><th class="amount">age (days)</th><th>occurrences</th><th class="amount">latest difference</th><th>assignee</th><th>last seen</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  const count =
    all.length === 0
      ? 'No case.'
      : all.length <= CASES_PAGE_SIZE
        ? `${all.length} case${all.length === 1 ? '' : 's'}.`
        : `Cases ${first}–${first + cases.length - 1} of ${all.length}.${pagerLinks('/cases', { state: filter.state, account: filter.account, currency: filter.currency, kind: filter.kind, assignee: filter.assignee, age: filter.age, sort: filter.sort }, current, pages)}`;
  return layout('Cases', page, `${form}\n<p class="paging">${count}</p>${table}`);
}

/** What the case page shows of the case's account on its latest date: the waterfall and items, and for the gateway leg where the difference started. */
export interface CaseExplain {
  explain?: AccountExplain;
  /** The case's results of its latest date. */
  results?: StoredReconciliationResult[];
  trail?: DifferenceTrail;
}

/** ", snoozed until 2026-11-09": a case's running snooze beside its state. */
function snoozedText(snooze: CaseSnooze | undefined): string {
  return snooze === undefined ? '' : `, <span class="snoozed" title="${e(snooze.note)}">snoozed until ${e(snooze.untilDate)}</span>`;
}

export function casePage(
  c: ReconciliationCase,
  occurrences: CaseOccurrence[],
  events: CaseEvent[],
  evidence: Array<Record<string, unknown>>,
  today: string,
  page: PageContext,
  extra: CaseExplain = {},
  snooze?: CaseSnooze,
): string {
  const facts = `<dl class="facts"><dt>State</dt><dd>${e(c.state)}${c.state !== 'resolved' || c.resolution === null ? '' : ` (${e(c.resolution)})`}${c.acceptedUntil === null ? '' : ` until ${e(c.acceptedUntil)}`}</dd>
<dt>Opened on</dt><dd>${e(c.openedOn)}</dd><dt>Last seen on</dt><dd>${e(c.lastSeenOn)}</dd><dt>Age</dt><dd>${caseAgeDays(c, today)} day${caseAgeDays(c, today) === 1 ? '' : 's'} (${e(ageBucketOf(caseAgeDays(c, today)))})</dd>
<dt>Latest difference</dt><dd class="amount">${e(formatOptionalAmount(c.latestDifference, c.currency, undefined, page.style))} ${e(c.currency ?? '')}</dd>
<dt>Assignee</dt><dd>${e(c.assignee ?? '-')}${c.dueOn === null ? '' : `, due ${e(c.dueOn)}`}</dd>
<dt>Snoozed</dt><dd id="snooze">${snooze === undefined ? 'no' : `until ${e(snooze.untilDate)} (by ${e(snooze.snoozedBy)}): ${e(snooze.note)}. Not announced again until then unless it changes materially; it still blocks sign-off as its state says.`}</dd></dl>`;
  const occurrenceTable = `<h2>Occurrences</h2><table id="occurrences"><thead><tr><th>business date</th><th>status</th><th class="amount">gateway</th><th class="amount">single wallet</th><th class="amount">books</th><th class="amount">difference</th><th>run</th></tr></thead><tbody>${occurrences
    .map(
      (o) =>
        `<tr><td><a href="/day?date=${e(o.businessDate)}">${e(o.businessDate)}</a></td><td>${e(label(o.status))}</td>${amount(o.gatewayBalance, c.currency, page.style)}${amount(o.singleBalance, c.currency, page.style)}${amount(o.expectedBalance, c.currency, page.style)}${amount(o.difference, c.currency, page.style)}<td>${o.runId ?? ''}</td></tr>`,
    )
    .join('')}</tbody></table>`;
  const evidenceTable = `<h2>Evidence</h2><table id="evidence"><thead><tr><th>business date</th><th>status</th><th>run</th><th>books source</th><th>books imported at</th><th>computed at</th></tr></thead><tbody>${evidence
    .map((r) => `<tr><td>${e(String(r.business_date ?? ''))}</td><td>${e(label(String(r.status ?? '')))}</td><td>${e(String(r.run_id ?? ''))}</td><td>${e(String(r.books_source ?? ''))}</td><td class="nowrap">${e(formatLocalTimeText(String(r.books_imported_at ?? ''), page.timezone ?? 'UTC'))}</td><td class="nowrap">${e(formatLocalTimeText(String(r.computed_at ?? ''), page.timezone ?? 'UTC'))}</td></tr>`)
    .join('')}</tbody></table>`;
  const history = `<h2>History</h2><table id="history"><thead><tr><th>at</th><th>actor</th><th>action</th><th>state</th><th>note</th></tr></thead><tbody>${events
    .map(
      (ev) =>
        `<tr><td class="nowrap">${e(localTime(ev.at, page, true))}</td><td>${e(ev.actor)}</td><td>${e(ev.action)}</td><td>${e(ev.fromState === ev.toState || ev.fromState === null ? (ev.toState ?? '') : `${ev.fromState} → ${ev.toState ?? ''}`)}</td><td>${e(page.style === undefined ? (ev.note ?? '') : localizeAmounts(ev.note ?? '', page.style))}</td></tr>`,
    )
    .join('')}</tbody></table>`;
  const allowed = actionsAllowedFrom(c.state);
  // Only the forms of actions the state allows and the user's role may take: a viewer sees none.
  const mayAct = page.user !== undefined && mayActOnCases(page.user.role);
  const action = (name: string, button: string, fields: string) =>
    mayAct && allowed.includes(name as never) ? `<form method="post" action="/cases/${c.id}/${name}" class="action">${csrfField(page)}${fields}<button type="submit">${button}</button></form>` : '';
  const note = (required: boolean, hint: string) => `<label>Note${required ? ' (required)' : ''} <textarea name="note" rows="2" cols="40"${required ? ' required' : ''} placeholder="${e(hint)}"></textarea></label>`;
  const actions = `<h2>Actions</h2><p class="hint">From ${e(c.state)} the rules allow: ${e(allowed.join(', ') || 'nothing')}.${mayAct ? '' : ` You have the ${e(page.user?.role ?? 'viewer')} role: you can look at everything but change nothing.`}</p><div class="actions">
${action('ack', 'Acknowledge', note(noteRequiredFor('ack'), 'what you are looking into'))}
${action('assign', 'Assign', `<label>To (required) <select name="to" required><option value="">choose…</option>${(page.assignees ?? []).map((n) => `<option${n === c.assignee ? ' selected' : ''}>${e(n)}</option>`).join('')}</select></label><label>Due <input name="due" type="date"></label>${note(noteRequiredFor('assign'), 'optional')}`)}
${action('note', 'Add note', note(noteRequiredFor('note'), 'the note'))}
${action('accept', 'Accept', `${note(noteRequiredFor('accept'), 'why the difference is accepted')}<label>Until <input name="until" type="date"></label>`)}
${action('resolve', 'Resolve', note(noteRequiredFor('resolve'), 'how it was fixed (the booking)'))}
${action('reopen', 'Reopen', note(noteRequiredFor('reopen'), 'why it is reopened'))}
${mayAct && (c.state === 'open' || c.state === 'acknowledged') ? `<form method="post" action="/cases/${c.id}/snooze" class="action">${csrfField(page)}${note(true, 'why it may stay quiet')}<label>Until (required) <input name="until" type="date" required min="${e(today)}"></label><button type="submit">Snooze</button></form>` : ''}
</div>`;
  const explained =
    extra.explain === undefined
      ? ''
      : `<section id="explain"><h2>On ${e(c.lastSeenOn)}</h2>${explainSection(extra.explain, extra.results ?? [], c.lastSeenOn, `/cases/${c.id}`, page)}</section>`;
  const trail = extra.trail === undefined || c.currency === null ? '' : `<section id="difference-trail">${trailSection(extra.trail, c.currency, page)}</section>`;
  return layout(`Case ${describeCase(c)}`, page, `${facts}\n${actions}\n${explained}\n${trail}\n${occurrenceTable}\n${evidenceTable}\n${history}`);
}

export function messagePage(title: string, text: string, page: PageContext, back?: { href: string; text: string }): string {
  return layout(title, page, `<p class="message">${e(text)}</p>${back === undefined ? '' : `<p><a href="${e(back.href)}">${e(back.text)}</a></p>`}`);
}

/** A local user's own password change: the current one, the new one twice. */
export function changePasswordPage(local: boolean, page: PageContext): string {
  if (!local) return layout('Change password', page, '<p class="message">You sign in through single sign-on: your password is changed at your company\'s identity provider, not here.</p>');
  return layout(
    'Change password',
    page,
    `<form method="post" action="/account/password" class="login">${csrfField(page)}
<label for="current">Current password</label><input id="current" name="current" type="password" autocomplete="current-password" required>
<label for="next">New password</label><input id="next" name="next" type="password" autocomplete="new-password" minlength="12" required>
<label for="repeated">New password again</label><input id="repeated" name="repeated" type="password" autocomplete="new-password" minlength="12" required>
<button type="submit">Change password</button>
</form><p class="hint">At least 12 characters. Your other sessions end when it is changed.</p>`,
  );
}
