import type { DifferenceTrail } from '../cases/difference-trail.js';
import { describeTrail } from '../cases/difference-trail.js';
import type { ReconcilingItem } from '../db/reconciling-item.repository.js';
import type { MatchListing } from '../db/entry-match.repository.js';
import { escapeHtml as e } from '../escape-html.js';
import { itemAgeBucketOf, itemStateOn, businessDaysBetween, MANUAL_ITEM_KINDS, ITEM_KINDS } from '../items/item-rules.js';
import { formatAmount, formatMoney, rescaleAmount } from '../money/format-amount.js';
import type { StoredReconciliationResult } from '../reconciliation/reconciliation-result.js';
import type { PageContext } from './page-context.js';
import { mayActOnCases } from './roles.js';

// What explains a difference, on the day view and the case page: the waterfall of each
// account-currency with open items or a break, the open items (clear one with a note), a form to
// add one, and for a bank account the entries left unmatched (match them by hand) and the matches
// of the date (undo one). Rendering only: the routes in items-routes.ts do the work.

/** The open items, matches and entry labels of one account on one date. */
export interface AccountExplain {
  account: string;
  bank: boolean;
  /** Currencies an item may be added in (those of the account's results, or the bank account's own). */
  currencies: string[];
  /** Open on the date: the items people added and those of unmatched entries. */
  items: ReconcilingItem[];
  /** The matches of the date, undone ones too. */
  matches: MatchListing[];
  /** References and descriptions of the unmatched entries, by entry id. */
  labels: { books: Map<number, string>; statement: Map<number, string> };
}

const KIND_LABELS: Readonly<Record<string, string>> = {
  outstanding: 'outstanding (in the books, not at the bank)',
  unrecorded: 'unrecorded (at the bank, not in the books)',
  in_transit: 'in transit',
  timing: 'timing',
  fee: 'fee',
  adjustment: 'adjustment needed',
  other: 'other',
};
export const kindLabel = (kind: string) => KIND_LABELS[kind] ?? kind;

const csrf = (page: PageContext) => (page.csrfToken === undefined ? '' : `<input type="hidden" name="_csrf" value="${e(page.csrfToken)}">`);
const mayAct = (page: PageContext) => page.user !== undefined && mayActOnCases(page.user.role);
const noteField = (hint: string) => `<label>Note (required) <input type="text" name="note" required maxlength="4000" placeholder="${e(hint)}"></label>`;
const cell = (v: bigint | null | undefined, currency: string, scale: number | null | undefined, page: PageContext) => `<td class="amount">${v === null || v === undefined ? '' : e(formatAmount(v, currency, scale, page.style))}</td>`;

/** Whether a result shows a waterfall: it has open items, or a difference beyond its tolerance. */
export function hasWaterfall(r: StoredReconciliationResult): boolean {
  return r.currency !== null && r.expectedBalance !== null && r.gatewayBalance !== null && (r.status === 'break' || r.status === 'explained' || (r.itemsTotal ?? 0n) !== 0n);
}

/**
 * The waterfall of one result: books balance, open items by kind, adjusted books balance, the
 * gateway or bank balance, and what no item explains. The items are those open on the date.
 */
export function waterfallTable(r: StoredReconciliationResult, items: readonly ReconcilingItem[], bank: boolean, page: PageContext): string {
  const currency = r.currency!;
  const scale = r.scale;
  const own = items.filter((i) => i.currency === currency);
  // Items are kept at their own scale; the waterfall is at the comparison's (never fewer decimals).
  const at = (i: ReconcilingItem) => (scale === null || scale === undefined || i.scale >= scale ? i.amount : rescaleAmount(i.amount, i.scale, scale));
  const byKind = ITEM_KINDS.flatMap((kind) => {
    const ofKind = own.filter((i) => i.kind === kind);
    return ofKind.length === 0 ? [] : [{ kind, count: ofKind.length, total: ofKind.reduce((s, i) => s + at(i), 0n) }];
  });
  const items_ = r.itemsTotal ?? 0n;
  const unexplained = r.unexplained ?? r.difference;
  const row = (name: string, v: bigint | null | undefined, cls = '') => `<tr${cls === '' ? '' : ` class="${cls}"`}><th scope="row">${e(name)}</th>${cell(v, currency, scale, page)}</tr>`;
  return (
    `<table class="waterfall" data-account="${e(r.account)}" data-currency="${e(currency)}"><caption>Waterfall ${e(r.account)} ${e(currency)} on ${e(r.businessDate)}: ${e(r.status)}</caption><tbody>` +
    row('Books balance', r.expectedBalance) +
    byKind.map((k) => row(`Open items: ${kindLabel(k.kind)} (${k.count})`, k.total, 'item-kind')).join('') +
    (byKind.length === 0 ? row('Open items', 0n, 'item-kind') : '') +
    row('Adjusted books balance', r.expectedBalance! + items_) +
    row(bank ? 'Bank balance' : 'Gateway balance', r.gatewayBalance) +
    row('Unexplained', unexplained, 'unexplained') +
    `</tbody></table>`
  );
}

/** The open items of the date, each with its age; an item people added can be cleared with a note. */
export function itemsTable(items: readonly ReconcilingItem[], date: string, back: string, page: PageContext): string {
  if (items.length === 0) return '<p class="hint">No reconciling item is open on this date.</p>';
  const rows = items.map((i) => {
    const state = itemStateOn(i, date);
    const age = businessDaysBetween(i.openedOn, date);
    const name = i.id !== null ? `#${i.id}` : i.booksEntryId !== null ? `books entry ${i.booksEntryId}` : `statement entry ${i.statementEntryId}`;
    const clear =
      i.id !== null && mayAct(page)
        ? `<form method="post" action="/items/${i.id}/clear" class="inline">${csrf(page)}<input type="hidden" name="back" value="${e(back)}">${noteField('how it cleared')}<button type="submit">Clear item</button></form>`
        : i.id === null
          ? '<span class="hint">clears when matched</span>'
          : '';
    return `<tr class="item-${e(state)}" data-item="${e(name)}"><td>${e(name)}</td><td>${e(i.currency)}</td><td>${e(kindLabel(i.kind))}</td>${cell(i.amount, i.currency, i.scale, page)}<td>${e(i.openedOn)}</td><td>${e(i.expectedClear ?? '')}</td><td>${e(state)}</td><td class="amount">${age}</td><td>${e(itemAgeBucketOf(age))}</td><td>${e(i.note ?? '')}</td><td>${clear}</td></tr>`;
  });
  return `<table class="items"><thead><tr><th>item</th><th>currency</th><th>kind</th><th class="amount">amount</th><th>opened on</th><th>expected clear</th><th>state</th><th class="amount">age (business days)</th><th>aging</th><th>note</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The form to add an item of this account from the date on (kind, amount, expected clearing date, note; evidence optional). */
export function addItemForm(explain: AccountExplain, date: string, back: string, page: PageContext): string {
  if (!mayAct(page) || explain.currencies.length === 0) return '';
  return `<form method="post" action="/items" class="add-item">${csrf(page)}<input type="hidden" name="back" value="${e(back)}"><input type="hidden" name="account" value="${e(explain.account)}"><input type="hidden" name="date" value="${e(date)}">
<fieldset><legend>Add a reconciling item to ${e(explain.account)} from ${e(date)}</legend>
<label>Currency <select name="currency" required>${explain.currencies.map((c) => `<option>${e(c)}</option>`).join('')}</select></label>
<label>Kind <select name="kind" required>${MANUAL_ITEM_KINDS.map((k) => `<option value="${e(k)}">${e(kindLabel(k))}</option>`).join('')}</select></label>
<label>Amount (signed: books + items = ${explain.bank ? 'bank' : 'gateway'}) <input type="text" name="amount" required inputmode="decimal" pattern="[+-]?[0-9]+([.][0-9]+)?" placeholder="123.45 or -2.50"></label>
<label>Expected clearing date <input type="date" name="expected_clear"></label>
${noteField('what it is: a payout in transit, its reference')}
<label>Evidence (optional) <input type="text" name="evidence" maxlength="1000" placeholder="a reference or a link"></label>
<button type="submit">Add item</button></fieldset></form>`;
}

/** For a bank account: its entries left unmatched up to the date, to be matched by hand with a note. */
export function matchForm(explain: AccountExplain, date: string, back: string, page: PageContext): string {
  const books = explain.items.filter((i) => i.booksEntryId !== null);
  const statement = explain.items.filter((i) => i.statementEntryId !== null);
  if (!explain.bank || (books.length === 0 && statement.length === 0)) return '';
  // An entry's own amount: an outstanding item is the opposite of its books entry.
  const line = (i: ReconcilingItem, side: 'books' | 'statement') => {
    const id = side === 'books' ? i.booksEntryId! : i.statementEntryId!;
    const amount = side === 'books' ? -i.amount : i.amount;
    const label = (side === 'books' ? explain.labels.books : explain.labels.statement).get(id) ?? '';
    const text = `${side} entry ${id}: ${i.openedOn} ${formatMoney(amount, i.currency, i.scale, page.style)}${label === '' ? '' : ` ${label}`}`;
    return mayAct(page) ? `<li><label><input type="checkbox" name="${side}" value="${id}"> ${e(text)}</label></li>` : `<li>${e(text)}</li>`;
  };
  const lists = `<div class="unmatched"><div><h4>Books entries not matched</h4><ul>${books.map((i) => line(i, 'books')).join('') || '<li>none</li>'}</ul></div><div><h4>Statement entries not matched</h4><ul>${statement.map((i) => line(i, 'statement')).join('') || '<li>none</li>'}</ul></div></div>`;
  if (!mayAct(page)) return `<h3>Entries not matched up to ${e(date)}</h3>${lists}`;
  return `<h3>Match by hand</h3><form method="post" action="/matches" class="match">${csrf(page)}<input type="hidden" name="back" value="${e(back)}">
<p class="hint">Pick the books entries and the statement entries that are the same money (their sums must agree), and say why.</p>${lists}
${noteField('why these are the same payment')}<button type="submit">Match</button></form>`;
}

/** The matches of the date: rule, entries, who and why; an active one can be undone with a note. */
export function matchesTable(explain: AccountExplain, back: string, page: PageContext): string {
  if (!explain.bank) return '';
  if (explain.matches.length === 0) return '<h3>Matches of the date</h3><p class="hint">No match belongs to this date.</p>';
  const rows = explain.matches.map((m) => {
    const undo =
      m.state === 'active' && mayAct(page)
        ? `<form method="post" action="/matches/${e(m.id)}/undo" class="inline">${csrf(page)}<input type="hidden" name="back" value="${e(back)}">${noteField('why it is undone')}<button type="submit">Undo match</button></form>`
        : m.state === 'undone'
          ? e(`undone by ${m.undoneBy ?? ''}: ${m.undoNote ?? ''}`)
          : '';
    return `<tr class="match-${e(m.state)}" data-match="${e(m.id)}"><td>${e(m.id)}</td><td>${e(m.rule)}</td><td>${e(m.books.join(', '))}</td><td>${e(m.statement.join(', '))}</td><td>${e(m.matchedBy)}</td><td>${e(m.note ?? '')}</td><td>${undo}</td></tr>`;
  });
  return `<h3>Matches of the date</h3><table class="matches"><thead><tr><th>match</th><th>rule</th><th>books entries</th><th>statement entries</th><th>by</th><th>note</th><th></th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Everything that explains the account's differences on the date, for its section of a page. */
export function explainSection(explain: AccountExplain, results: readonly StoredReconciliationResult[], date: string, back: string, page: PageContext): string {
  const waterfalls = results.filter(hasWaterfall).map((r) => waterfallTable(r, explain.items, explain.bank, page));
  // Folded where nothing needs explaining (the day of 25 accounts stays short), open otherwise.
  const open = waterfalls.length > 0 || explain.items.length > 0 || explain.matches.length > 0;
  const summary = `What explains the difference: ${explain.items.length} open item${explain.items.length === 1 ? '' : 's'}${explain.bank ? `, ${explain.matches.filter((m) => m.state === 'active').length} match${explain.matches.filter((m) => m.state === 'active').length === 1 ? '' : 'es'} of the date` : ''}`;
  return `<details class="explain"${open ? ' open' : ''}><summary>${e(summary)}</summary>${waterfalls.join('')}<h3>Open reconciling items</h3>${itemsTable(explain.items, date, back, page)}${addItemForm(explain, date, back, page)}${matchForm(explain, date, back, page)}${matchesTable(explain, back, page)}</details>`;
}

/** Where a gateway difference started: the gateway's movement beside the books', date by date since the last match. */
export function trailSection(trail: DifferenceTrail, currency: string, page: PageContext): string {
  const v = (x: bigint | null) => cell(x, currency, trail.scale, page);
  const rows = trail.rows.map(
    (r) =>
      `<tr${trail.appeared?.date === r.date ? ' class="appeared"' : trail.changes.some((c) => c.date === r.date) ? ' class="changed"' : ''}><td><a href="/day?date=${e(r.date)}">${e(r.date)}</a></td><td>${e(r.status.replaceAll('_', ' '))}</td>${v(r.gateway)}${v(r.gatewayMovement)}${v(r.books)}${v(r.booksMovement)}<td>${e(r.booksMovementFrom ?? '')}</td>${v(r.difference)}${r.change === null || r.change === 0n ? '<td></td>' : v(r.change)}</tr>`,
  );
  const sentences = describeTrail(trail, (x) => formatMoney(x, currency, trail.scale, page.style));
  return `<h2>Where the difference started</h2><p class="hint">The gateway gives balances only: its movement beside the books' movement (the sum of the date's books entries where imported), date by date.</p>
<ul id="trail-summary">${sentences.map((s) => `<li>${e(s)}</li>`).join('')}</ul>
<table id="trail"><thead><tr><th>business date</th><th>status</th><th class="amount">gateway</th><th class="amount">gateway movement</th><th class="amount">books</th><th class="amount">books movement</th><th>from</th><th class="amount">difference</th><th class="amount">change</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}
