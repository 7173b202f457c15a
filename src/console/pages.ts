import { ageBucketOf, caseAgeDays, describeCase, type CaseEvent, type CaseOccurrence, type ReconciliationCase } from '../cases/case-model.js';
import { actionsAllowedFrom } from '../cases/case-actions.js';
import type { BooksOfDate, CaptureOfDate } from '../db/console-views.repository.js';
import type { ConsoleUser } from '../db/console.repository.js';
import { formatOptionalAmount } from '../money/format-amount.js';
import { escapeHtml as e } from '../escape-html.js';
import type { StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import { compareByAbsoluteDifference } from '../reports/report-view.js';
import type { SignoffState } from '../signoff/signoff-service.js';
import { mayApprove } from './roles.js';

// Server-rendered pages. No inline script or style anywhere (the Content-Security-Policy allows
// only /assets/ files); every value from the database or the request goes through escapeHtml.

export interface PageContext {
  user?: ConsoleUser;
  csrfToken?: string;
  /** A message shown on top: what was just done, or why it was refused. */
  notice?: { kind: 'ok' | 'error'; text: string };
}

const amount = (v: bigint | null | undefined, currency: string | null) => `<td class="amount">${e(formatOptionalAmount(v, currency))}</td>`;
const label = (s: string) => s.replaceAll('_', ' ');

export function csrfField(page: PageContext): string {
  return page.csrfToken === undefined ? '' : `<input type="hidden" name="_csrf" value="${e(page.csrfToken)}">`;
}

export function layout(title: string, page: PageContext, body: string): string {
  const nav =
    page.user === undefined
      ? ''
      : `<nav><a href="/day">Day</a> <a href="/cases">Cases</a><span class="who">Signed in as <strong>${e(page.user.name)}</strong> (${e(page.user.role)})</span>` +
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
  signoff: SignoffState;
  today: string;
}

function describeDrift(seconds: number | null): string {
  if (seconds === null) return 'drift unknown';
  const sign = seconds < 0 ? '-' : '+';
  const s = Math.abs(seconds);
  return `drift ${sign}${Math.floor(s / 60)} min ${s % 60} s`;
}

function signoffSection(view: DayView, page: PageContext): string {
  const { state, current, history } = view.signoff;
  const lines: string[] = [`<p>Sign-off state: <strong class="signoff-state">${e(state)}</strong></p>`];
  if (state === 'changed after sign-off' && current !== undefined) {
    lines.push(`<div class="changed"><p><strong>changed after sign-off</strong>: sign-off #${current.id} (prepared by ${e(current.preparedBy)}${current.approvedBy === null ? '' : `, approved by ${e(current.approvedBy)}`}) no longer matches its inputs; it must be signed again.</p><ul>${((current.invalidation ?? []) as string[]).map((c) => `<li>${e(c)}</li>`).join('')}</ul></div>`);
  }
  if (state === 'reopened' && current !== undefined) {
    lines.push(`<div class="changed"><p><strong>reopened</strong>: sign-off #${current.id} (prepared by ${e(current.preparedBy)}, approved by ${e(current.approvedBy ?? '')}) was reopened by <strong>${e(current.reopenedBy ?? '')}</strong> at ${e(current.reopenedAt?.toISOString() ?? '')}: ${e(current.reopenNote ?? '')}. The date is unlocked and must be signed again.</p></div>`);
  }
  if (state === 'approved') lines.push('<p class="locked">This date is locked: its books, results and captures cannot change until an approver reopens it.</p>');
  if (state === 'prepared' || state === 'approved') {
    lines.push(`<p>Prepared by <strong>${e(current!.preparedBy)}</strong> at ${e(current!.preparedAt.toISOString())}${current!.approvedBy === null ? ', waiting for approval' : `; approved by <strong>${e(current!.approvedBy)}</strong> at ${e(current!.approvedAt!.toISOString())}`}.</p>`);
  }
  const form = (action: string, text: string) => `<form method="post" action="${action}" class="inline">${csrfField(page)}<input type="hidden" name="date" value="${e(view.date)}"><button type="submit">${text}</button></form>`;
  if (state === 'not signed' || state === 'changed after sign-off' || state === 'reopened') lines.push(form('/signoffs/prepare', 'Prepare sign-off'));
  if (state === 'prepared') lines.push(form('/signoffs/approve', 'Approve sign-off'));
  if (state === 'approved' && page.user !== undefined && mayApprove(page.user.role)) {
    // A note is required: the reason is the evidence of why a closed day was opened again.
    lines.push(
      `<form method="post" action="/signoffs/reopen" class="inline">${csrfField(page)}<input type="hidden" name="date" value="${e(view.date)}"><label>Why <input type="text" name="note" required maxlength="4000"></label> <button type="submit">Reopen sign-off</button></form>`,
    );
  }
  if (history.length > 0) {
    lines.push(
      `<table id="signoffs"><thead><tr><th>sign-off</th><th>prepared by</th><th>prepared at</th><th>approved by</th><th>approved at</th><th>report SHA-256</th><th>state</th></tr></thead><tbody>${history
        .map(
          (s) =>
            `<tr><td>#${s.id}</td><td>${e(s.preparedBy)}</td><td class="nowrap">${e(s.preparedAt.toISOString())}</td><td>${e(s.approvedBy ?? '')}</td><td class="nowrap">${e(s.approvedAt?.toISOString() ?? '')}</td>` +
            `<td><a href="/signoffs/${s.id}/report"><code>${e(s.reportSha256)}</code></a></td><td>${s.reopenedAt !== null ? 'reopened' : s.invalidatedAt === null ? (s.approvedBy === null ? 'prepared' : 'approved') : 'changed after sign-off'}</td></tr>`,
        )
        .join('')}</tbody></table>`,
    );
  }
  return `<section id="sign-off"><h2>Sign-off</h2>${lines.join('\n')}</section>`;
}

export function dayPage(view: DayView, page: PageContext): string {
  const nav = `<p class="dates"><a href="/day?date=${view.previous}" rel="prev">← ${view.previous}</a> <strong>${e(view.date)}</strong> ${view.next === undefined ? '' : `<a href="/day?date=${view.next}" rel="next">${view.next} →</a>`}
<form method="get" action="/day" class="inline"><label for="date">Business date</label> <input id="date" name="date" type="date" value="${e(view.date)}"><button type="submit">Show</button></form></p>`;
  const sections = view.accounts.map((account) => {
    const capture = view.captures.find((c) => c.account === account);
    const books = view.books.find((b) => b.account === account);
    const results = view.results.filter((r) => r.account === account);
    const captured =
      capture === undefined
        ? 'not captured (no run for this date)'
        : capture.status === 'captured'
          ? `captured: run ${capture.runId}, ${describeDrift(capture.cutoffDriftSeconds)} from the cut-off${capture.attempts > 1 ? `, ${capture.attempts} attempts` : ''}`
          : capture.status === 'missed'
            ? `missed${capture.lastError === null ? '' : `: ${capture.lastError}`}`
            : `pending (${capture.attempts} attempt(s)${capture.runId === null ? '' : `, intraday run ${capture.runId}`})`;
    const booksText = books === undefined ? 'no books for this date' : `books arrived: ${books.currencies} currenc${books.currencies === 1 ? 'y' : 'ies'} from ${books.source} (import ${books.importId ?? '-'}, ${books.importedAt.toISOString()})`;
    const ordered = [...results].sort((a, b) => Number(a.status === 'matched') - Number(b.status === 'matched') || compareByAbsoluteDifference(a, b));
    const rows = ordered.map((r) => {
      const c = r.caseId === null ? undefined : view.cases.get(r.caseId);
      return (
        `<tr class="status-${e(r.status)}"><td>${e(r.currency ?? '')}</td><td>${e(label(r.status))}</td>${amount(r.gatewayBalance, r.currency)}${amount(r.expectedBalance, r.currency)}${amount(r.difference, r.currency)}` +
        `<td>${c === undefined ? '' : `<a href="/cases/${c.id}">case #${c.id}</a> ${e(c.state)}`}</td><td>${r.runId ?? ''}</td></tr>`
      );
    });
    const table =
      results.length === 0
        ? '<p>Not reconciled for this date.</p>'
        : `<table class="results"><thead><tr><th>currency</th><th>status</th><th class="amount">gateway</th><th class="amount">books</th><th class="amount">difference</th><th>case</th><th>run</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
    return `<section class="account"><h2>Account ${e(account)}</h2><ul class="facts"><li>${e(captured)}</li><li>${e(booksText)}</li></ul>${table}</section>`;
  });
  return layout(`Business date ${view.date}`, page, `${nav}\n${signoffSection(view, page)}\n${sections.join('\n')}`);
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

export function casesPage(cases: ReconciliationCase[], filter: CasesFilter, options: { today: string; accounts: string[]; kinds: readonly string[]; states: readonly string[]; ages: readonly string[] }, page: PageContext): string {
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
      `<td>${c.occurrences}</td>${amount(c.latestDifference, c.currency)}<td>${e(c.assignee ?? '')}</td><td>${e(c.lastSeenOn)}</td></tr>`,
  );
  const table =
    cases.length === 0
      ? '<p>No cases match.</p>'
      : `<table id="cases"><thead><tr><th>case</th><th>account</th><th>currency</th><th>kind</th><th>state</th><th class="amount">age (days)</th><th>occurrences</th><th class="amount">latest difference</th><th>assignee</th><th>last seen</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
  return layout('Cases', page, `${form}\n<p>${cases.length} case(s).</p>${table}`);
}

export function casePage(c: ReconciliationCase, occurrences: CaseOccurrence[], events: CaseEvent[], evidence: Array<Record<string, unknown>>, today: string, page: PageContext): string {
  const facts = `<dl class="facts"><dt>State</dt><dd>${e(c.state)}${c.resolution === null ? '' : ` (${e(c.resolution)})`}${c.acceptedUntil === null ? '' : ` until ${e(c.acceptedUntil)}`}</dd>
<dt>Opened on</dt><dd>${e(c.openedOn)}</dd><dt>Last seen on</dt><dd>${e(c.lastSeenOn)}</dd><dt>Age</dt><dd>${caseAgeDays(c, today)} days (${e(ageBucketOf(caseAgeDays(c, today)))})</dd>
<dt>Latest difference</dt><dd class="amount">${e(formatOptionalAmount(c.latestDifference, c.currency))} ${e(c.currency ?? '')}</dd>
<dt>Assignee</dt><dd>${e(c.assignee ?? '-')}${c.dueOn === null ? '' : `, due ${e(c.dueOn)}`}</dd></dl>`;
  const occurrenceTable = `<h2>Occurrences</h2><table id="occurrences"><thead><tr><th>business date</th><th>status</th><th class="amount">gateway</th><th class="amount">single wallet</th><th class="amount">books</th><th class="amount">difference</th><th>run</th></tr></thead><tbody>${occurrences
    .map(
      (o) =>
        `<tr><td><a href="/day?date=${e(o.businessDate)}">${e(o.businessDate)}</a></td><td>${e(label(o.status))}</td>${amount(o.gatewayBalance, c.currency)}${amount(o.singleBalance, c.currency)}${amount(o.expectedBalance, c.currency)}${amount(o.difference, c.currency)}<td>${o.runId ?? ''}</td></tr>`,
    )
    .join('')}</tbody></table>`;
  const evidenceTable = `<h2>Evidence</h2><table id="evidence"><thead><tr><th>business date</th><th>status</th><th>run</th><th>books source</th><th>books imported at</th><th>computed at</th></tr></thead><tbody>${evidence
    .map((r) => `<tr><td>${e(String(r.business_date ?? ''))}</td><td>${e(label(String(r.status ?? '')))}</td><td>${e(String(r.run_id ?? ''))}</td><td>${e(String(r.books_source ?? ''))}</td><td>${e(String(r.books_imported_at ?? ''))}</td><td>${e(String(r.computed_at ?? ''))}</td></tr>`)
    .join('')}</tbody></table>`;
  const history = `<h2>History</h2><table id="history"><thead><tr><th>at (UTC)</th><th>actor</th><th>action</th><th>state</th><th>note</th></tr></thead><tbody>${events
    .map(
      (ev) =>
        `<tr><td class="nowrap">${e(ev.at.toISOString().replace('T', ' ').slice(0, 19))}</td><td>${e(ev.actor)}</td><td>${e(ev.action)}</td><td>${e(ev.fromState === ev.toState || ev.fromState === null ? (ev.toState ?? '') : `${ev.fromState} → ${ev.toState ?? ''}`)}</td><td>${e(ev.note ?? '')}</td></tr>`,
    )
    .join('')}</tbody></table>`;
  const allowed = actionsAllowedFrom(c.state);
  const action = (name: string, button: string, fields: string) =>
    `<form method="post" action="/cases/${c.id}/${name}" class="action${allowed.includes(name as never) ? '' : ' not-allowed'}">${csrfField(page)}${fields}<button type="submit">${button}</button></form>`;
  const note = (required: boolean, hint: string) => `<label>Note${required ? ' (required)' : ''} <textarea name="note" rows="2" cols="40"${required ? ' required' : ''} placeholder="${e(hint)}"></textarea></label>`;
  const actions = `<h2>Actions</h2><p class="hint">From ${e(c.state)} the rules allow: ${e(allowed.join(', ') || 'nothing')}.${page.user?.role === 'viewer' ? ' You have the viewer role: the server refuses every action.' : ''}</p><div class="actions">
${action('ack', 'Acknowledge', note(false, 'what you are looking into'))}
${action('assign', 'Assign', `<label>To <input name="to" required size="12"></label><label>Due <input name="due" type="date"></label>${note(false, 'optional')}`)}
${action('note', 'Add note', note(true, 'the note'))}
${action('accept', 'Accept', `${note(true, 'why the difference is accepted')}<label>Until <input name="until" type="date"></label>`)}
${action('resolve', 'Resolve', note(true, 'how it was fixed (the booking)'))}
${action('reopen', 'Reopen', note(true, 'why it is reopened'))}
</div>`;
  return layout(`Case ${describeCase(c)}`, page, `${facts}\n${actions}\n${occurrenceTable}\n${evidenceTable}\n${history}`);
}

export function messagePage(title: string, text: string, page: PageContext, back?: { href: string; text: string }): string {
  return layout(title, page, `<p class="message">${e(text)}</p>${back === undefined ? '' : `<p><a href="${e(back.href)}">${e(back.text)}</a></p>`}`);
}
