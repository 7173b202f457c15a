import type { AccountDateFacts } from '../db/overview.repository.js';
import { escapeHtml as e } from '../escape-html.js';
import { layout, type PageContext } from './pages.js';
import { mayExportEvidence } from './roles.js';

/** How many business dates the overview shows, the newest last. */
export const OVERVIEW_DATES = 14;

/** What one account's business date needs, most urgent first: the cell shows the first that holds. */
export const CELL_STATES = [
  'broken seal',
  'missed',
  'owed',
  'changed after sign-off',
  'breaks',
  'awaiting books',
  'awaiting statement',
  'signed off',
  'accepted',
  'explained',
  'immaterial',
  'matched',
  'nothing yet',
] as const;
export type CellState = (typeof CELL_STATES)[number];

/**
 * The state of one account on one date. A sign-off of the date that does not verify comes first; a miss or owed results come first (the figures are not
 * final); a sign-off that no longer matches its inputs next; a standing approval covers the
 * date's accepted differences, so a signed date reads "signed off" rather than "breaks". Only the
 * statuses listed as needing attention are breaks: an accepted difference reads "accepted", a bank
 * date whose statement has not come "awaiting statement".
 */
export function cellStateOf(facts: AccountDateFacts | undefined, signoff: 'approved' | 'prepared' | 'changed after sign-off' | 'broken seal' | undefined): CellState {
  // A sign-off whose steps do not verify is shown as nothing else: what it claims cannot be trusted.
  if (signoff === 'broken seal') return 'broken seal';
  if (facts?.capture === 'missed') return 'missed';
  if (facts?.reconciliation === 'owed') return 'owed';
  if (signoff === 'changed after sign-off' && facts !== undefined) return 'changed after sign-off';
  if (signoff === 'approved' && facts !== undefined && facts.results > 0) return 'signed off';
  if (facts !== undefined && facts.unmatched > 0) return 'breaks';
  if (facts?.reconciliation === 'awaiting_books') return 'awaiting books';
  if (facts?.reconciliation === 'awaiting_statement' || (facts !== undefined && facts.awaitingStatement > 0)) return 'awaiting statement';
  if (facts !== undefined && facts.accepted > 0) return 'accepted';
  if (facts !== undefined && facts.explained > 0) return 'explained';
  if (facts !== undefined && facts.immaterial > 0) return 'immaterial';
  if (facts !== undefined && facts.results > 0) return 'matched';
  return 'nothing yet';
}

export interface OverviewView {
  /** Oldest first. */
  dates: string[];
  accounts: string[];
  cells: Map<string, { state: CellState; unmatched: number }>;
}

/** The key of an account's date in `OverviewView.cells`. */
export const cellKey = (account: string, date: string) => `${account}\u0000${date}`;

/** Accounts down, the last business dates across; each cell names its state and links to the day. */
export function overviewPage(view: OverviewView, page: PageContext): string {
  const head = view.dates.map((d) => `<th class="date"><a href="/day?date=${e(d)}">${e(d.slice(5))}</a></th>`).join('');
  const rows = view.accounts.map((account) => {
    const cells = view.dates.map((date) => {
      const cell = view.cells.get(cellKey(account, date)) ?? { state: 'nothing yet' as const, unmatched: 0 };
      const text = cell.state === 'breaks' ? `${cell.unmatched} break${cell.unmatched === 1 ? '' : 's'}` : cell.state;
      return `<td class="cell state-${e(cell.state.replaceAll(' ', '-'))}"><a href="/day?date=${e(date)}" title="${e(`${account}, ${date}: ${text}`)}">${e(text)}</a></td>`;
    });
    return `<tr><th scope="row">${e(account)}</th>${cells.join('')}</tr>`;
  });
  const legend = `<p class="legend">${CELL_STATES.map((s) => `<span class="cell state-${e(s.replaceAll(' ', '-'))}">${e(s)}</span>`).join(' ')}</p>`;
  const body =
    view.accounts.length === 0
      ? '<p>No account has data yet: run a snapshot (or the demo) first.</p>'
      : `<p>The last ${view.dates.length} business dates (${e(view.dates[0]!)} to ${e(view.dates[view.dates.length - 1]!)}) of every account with data; each cell opens its day.</p>
<table id="overview"><thead><tr><th>account</th>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>${legend}`;
  const months = [...new Set(view.dates.map((d) => d.slice(0, 7)))];
  const evidence =
    page.user !== undefined && mayExportEvidence(page.user.role) && view.accounts.length > 0
      ? `<p class="evidence">Download evidence pack (the month's approved dates): ${months.map((m) => `<a href="/evidence/month?month=${e(m)}" download>${e(m)}</a>`).join(' ')}</p>`
      : '';
  return layout('Overview', page, body + evidence);
}
