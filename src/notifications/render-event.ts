import { describeDrift } from '../business-date/capture-drift.js';
import { formatLocalTimeText } from '../business-date/local-time.js';
import { formatMoney, groupDigits } from '../money/format-amount.js';
import { DEFAULT_NUMBER_STYLE, type NumberStyle } from '../money/number-style.js';
import { escapeHtml } from '../escape-html.js';
import type { StatusCounts } from '../reconciliation/reconciliation-result.js';
import {
  headlineOf,
  type BooksMissingData,
  type DateAtRiskData,
  type DateMissedData,
  type DateRecoveredData,
  type NightAccountDigest,
  type NightCompletedData,
  type NotificationEvent,
  type ReconciliationFailedData,
  type SignoffInvalidatedData,
  type SignoffReopenedData,
  type TestEventData,
} from './events.js';
import { changeCountsText, changeListLines } from './change-list-text.js';
import { problemLines, type ProblemData, type ProblemEventType, type ProblemFoldedData } from './problems/problem-events.js';

/**
 * How people read the message: times in RECON_TIMEZONE with the zone, amounts in RECON_LOCALE.
 * The event's JSON (webhooks) keeps UTC instants and exact minor units whatever these say.
 */
export interface RenderOptions {
  timezone: string;
  style: NumberStyle;
}

const UTC_DEFAULTS: RenderOptions = { timezone: 'UTC', style: DEFAULT_NUMBER_STYLE };

/** An amount formatted with the default marks ("-1,234.56"), written with the locale's ("-1.234,56"). */
function inLocale(text: string, style: NumberStyle): string {
  if (style.locale === undefined) return text;
  return text.replace(/[\d,]+(\.\d+)?/g, (number) => number.replaceAll(',', '\u0000').replace('.', style.decimal).replaceAll('\u0000', style.group));
}

// Slack refuses a section text over 3,000 characters; the top breaks are cut well before.
const SLACK_BREAK_LINES = 10;

function countsText(c: StatusCounts): string {
  const parts = [`${c.matched} matched`];
  for (const [status, n] of Object.entries(c)) if (status !== 'matched' && n > 0) parts.push(`${n} ${status.replaceAll('_', ' ')}`);
  return parts.join(', ');
}

// Drift for people, as everywhere ("22 h 25 min before the cut-off").
const driftText = describeDrift;

/** One line per account: its capture (run, drift, wallets, attempts) or why it was missed, then its results. */
export function accountLine(a: NightAccountDigest): string {
  if (a.status === 'missed') return `${a.account}: MISSED after ${a.attempts} attempt(s): ${a.lastError ?? 'no capture inside the window'}`;
  const retried = a.attempts > 1 ? `, ${a.attempts} attempts` : '';
  return `${a.account}: run ${a.runId}, ${a.wallets ?? '?'} wallets, ${driftText(a.cutoffDriftSeconds)}${retried}; ${countsText(a.reconciliation)}`;
}

/** "Cases: 1 new, 2 still open, 1 resolved by today's results; 1 accepted discrepancy not counted." */
export function casesLine(d: NightCompletedData): string {
  const c = d.caseCounts;
  const accepted = d.acceptedDiscrepancies === 0 ? '' : `; ${d.acceptedDiscrepancies} accepted discrepanc${d.acceptedDiscrepancies === 1 ? 'y' : 'ies'} not counted`;
  return `Cases: ${c.new} new, ${c.persisting} still open, ${c.autoResolved} resolved by this date's results${accepted}.`;
}

/** What a discrepancy is, in the words of the people who fix it. */
const DISCREPANCY_LABELS: Readonly<Record<string, string>> = {
  missing_in_ledger: 'missing from the books',
  missing_in_gateway: 'no wallet on the gateway',
  endpoint_mismatch: 'the two gateway endpoints disagree',
  disappeared: 'wallet disappeared',
  no_books: 'no books',
};

/**
 * ", 12 bps of the balance": how large a break is beside its balance, what the list is ordered
 * by. A side that is missing altogether is not a fraction of anything: the label says it all.
 */
function relativeText(status: string, bps: string | null | undefined, style: NumberStyle): string {
  if (bps === undefined || status === 'missing_in_ledger' || status === 'missing_in_gateway' || status === 'disappeared') return '';
  if (bps === null) return ', balance zero';
  return `, ${groupDigits(BigInt(bps), style.group)} bps of the balance`;
}

function nightLines(d: NightCompletedData, style: NumberStyle): { accounts: string[]; breaks: string[]; alarms: string[]; cases: string; pending: string[] } {
  return {
    cases: casesLine(d),
    pending: (d.pending ?? []).map((p) => `${p.account}: ${p.message}`),
    accounts: d.accounts.map(accountLine),
    // In the currency's own units for people; the event's JSON keeps the exact minor units.
    breaks: d.topDiscrepancies.map(
      (b) =>
        `${b.account} ${inLocale(b.differenceFormatted ?? formatMoney(BigInt(b.difference.amount), b.difference.currency), style)} (${DISCREPANCY_LABELS[b.status] ?? b.status.replaceAll('_', ' ')}${relativeText(b.status, b.relativeBps, style)})`,
    ),
    alarms: d.consecutiveFailures.map((f) => `${f.account}: ${f.missedDates} business date(s) missed in a row`),
  };
}

/** The plain-text body of an e-mail. */
export function renderEventText(event: NotificationEvent, options: RenderOptions = UTC_DEFAULTS): string {
  const at = (iso: string) => formatLocalTimeText(iso, options.timezone);
  const lines = [headlineOf(event), ''];
  if (event.type === 'night.completed') {
    const d = event.data as NightCompletedData;
    const { accounts, breaks, alarms, cases, pending } = nightLines(d, options.style);
    lines.push(`Business date ${d.businessDate} (cut-off ${at(d.cutoffAt)}).`);
    if (d.changes !== undefined) {
      lines.push('', `What changed: ${changeCountsText(d.changes)}`);
      for (const a of changeListLines(d.changes)) lines.push(`  ${a.account}`, ...a.lines.map((l) => `    ${inLocale(l, options.style)}`));
    }
    lines.push('', 'Accounts:', ...accounts.map((l) => `  ${l}`), '', `Results: ${countsText(d.reconciliation)}.`, cases);
    if (pending.length > 0) lines.push('', 'Not final yet:', ...pending.map((l) => `  ${l}`));
    if (breaks.length > 0) lines.push('', `Largest discrepancies beside their balance (gateway minus books):`, ...breaks.map((l) => `  ${l}`));
    if (d.moreDiscrepancies > 0) lines.push(`  … and ${d.moreDiscrepancies} more (see the attached report).`);
    if (alarms.length > 0) lines.push('', 'Consecutive failures:', ...alarms.map((l) => `  ${l}`));
  } else if (event.type === 'date.at_risk') {
    const d = event.data as DateAtRiskData;
    lines.push(
      `${d.reason}`,
      `Fix the credentials before ${at(d.windowClosesAt)}, when the capture window of ${d.businessDate} closes; until then the worker tries again at the longest of RECON_RETRY_DELAYS. A secret given as a file (…_FILE) is read again at each attempt: correct the file, no restart needed; one given directly in the environment needs the worker restarted with the new value.`,
    );
  } else if (event.type === 'date.recovered') {
    const d = event.data as DateRecoveredData;
    lines.push(`The end-of-day snapshot of account "${d.account}" for business date ${d.businessDate} was captured at ${at(d.capturedAt)} (run ${d.runId}), inside its capture window: the date is no longer at risk and is reconciled as usual.`);
  } else if (event.type === 'books.missing') {
    const d = event.data as BooksMissingData;
    lines.push(
      `No books of account "${d.account}" for business date ${d.businessDate} had been imported by ${at(d.deadlineAt)} (RECON_BOOKS_DEADLINE after the cut-off at ${at(d.cutoffAt)}): the date is reconciled as no_books and a case follows it.`,
      'Import the books (wallet-recon ledger import FILE); the date is then reconciled again and the case resolves.',
    );
  } else if (event.type === 'reconciliation.failed') {
    const d = event.data as ReconciliationFailedData;
    lines.push(
      `Reconciling account "${d.account}" on business date ${d.businessDate} failed: ${d.reason}`,
      'The date stays owed and is tried again at every settling (the worker, every minute); the other accounts and dates were reconciled. Correct the cause (usually a setting), and the next round reconciles it.',
    );
  } else if (event.type === 'date.missed') {
    const d = event.data as DateMissedData;
    lines.push(
      `The capture window of ${d.businessDate} closed at ${at(d.windowClosedAt)} without an end-of-day snapshot of account "${d.account}"; the gateway only reports current balances, so that day's closing balance is lost.`,
      `Last error: ${d.lastError ?? 'none recorded'}`,
      `Business dates missed in a row: ${d.consecutiveMissedDates}`,
    );
  } else if (event.type === 'signoff.invalidated') {
    const d = event.data as SignoffInvalidatedData;
    lines.push(
      `Sign-off #${d.signoffId} of ${d.businessDate} (accounts ${d.accounts.join(', ')}; prepared by ${d.preparedBy}${d.approvedBy === null ? ', not approved yet' : `, approved by ${d.approvedBy}`}) no longer matches its inputs:`,
      ...d.changes.map((c) => `  ${c}`),
      'The sealed report stays as it was signed; the date must be signed again in the console or with "wallet-recon signoff prepare".',
    );
  } else if (event.type === 'signoff.reopened') {
    const d = event.data as SignoffReopenedData;
    lines.push(
      `Sign-off #${d.signoffId} of ${d.businessDate} (accounts ${d.accounts.join(', ')}; prepared by ${d.preparedBy}, approved by ${d.approvedBy}) was reopened by ${d.reopenedBy} at ${d.reopenedAt}.`,
      `Reason: ${d.note}`,
      'The date is unlocked: its books and results may change again, and it must be prepared and approved again. The reopened sign-off stays in its history.',
    );
  } else if (event.type.startsWith('problem.')) {
    lines.push(...problemLines(event.type as ProblemEventType, event.data as ProblemData | ProblemFoldedData));
  } else {
    lines.push((event.data as TestEventData).message);
  }
  lines.push('', `Event ${event.id} (${event.type}, ${at(event.timestamp)}).`);
  return lines.join('\n');
}

/** The HTML body of an e-mail: the same content as the text, escaped. */
export function renderEventHtml(event: NotificationEvent, options: RenderOptions = UTC_DEFAULTS): string {
  const at = (iso: string) => formatLocalTimeText(iso, options.timezone);
  const list = (items: string[]) => `<ul>${items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul>`;
  const parts = [`<h1>${escapeHtml(headlineOf(event))}</h1>`];
  if (event.type === 'night.completed') {
    const d = event.data as NightCompletedData;
    const { accounts, breaks, alarms, cases, pending } = nightLines(d, options.style);
    parts.push(`<p>Business date ${escapeHtml(d.businessDate)} (cut-off ${escapeHtml(at(d.cutoffAt))}).</p>`);
    if (d.changes !== undefined) {
      parts.push('<h2>What changed</h2>', `<p>${escapeHtml(changeCountsText(d.changes))}</p>`);
      for (const a of changeListLines(d.changes)) parts.push(`<h3>${escapeHtml(a.account)}</h3>`, list(a.lines.map((l) => inLocale(l, options.style))));
    }
    parts.push('<h2>Accounts</h2>', list(accounts));
    parts.push(`<p>Results: ${escapeHtml(countsText(d.reconciliation))}.</p>`, `<p>${escapeHtml(cases)}</p>`);
    if (pending.length > 0) parts.push('<h2>Not final yet</h2>', list(pending));
    if (breaks.length > 0) parts.push('<h2>Largest discrepancies</h2><p>Gateway minus books, largest beside their balance first.</p>', list(breaks));
    if (alarms.length > 0) parts.push('<h2>Consecutive failures</h2>', list(alarms));
    parts.push('<p>The full report is attached.</p>');
  } else {
    parts.push(`<pre>${escapeHtml(renderEventText(event, options).split('\n').slice(2, -2).join('\n'))}</pre>`);
  }
  parts.push(`<p style="color:#666">Event ${escapeHtml(event.id)} (${escapeHtml(event.type)}, ${escapeHtml(at(event.timestamp))}).</p>`);
  return `<!DOCTYPE html><html><body style="font-family:system-ui,sans-serif">${parts.join('\n')}</body></html>`;
}

/** Slack's mrkdwn treats &, < and > as control characters. */
function slackEscape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** A Slack incoming-webhook message in Block Kit: headline, one line per account, the top breaks. */
export function renderSlackMessage(event: NotificationEvent, options: RenderOptions = UTC_DEFAULTS): { text: string; blocks: unknown[] } {
  const headline = headlineOf(event);
  const blocks: unknown[] = [{ type: 'header', text: { type: 'plain_text', text: headline.slice(0, 150) } }];
  const section = (text: string) => blocks.push({ type: 'section', text: { type: 'mrkdwn', text: text.slice(0, 3000) } });
  if (event.type === 'night.completed') {
    const d = event.data as NightCompletedData;
    const { accounts, breaks, alarms, cases, pending } = nightLines(d, options.style);
    if (d.changes !== undefined) {
      const changed = changeListLines(d.changes).map((a) => `*${slackEscape(a.account)}*\n${a.lines.map((l) => `• ${slackEscape(inLocale(l, options.style))}`).join('\n')}`);
      section(`*What changed*: ${slackEscape(changeCountsText(d.changes))}${changed.length === 0 ? '' : `\n${changed.join('\n')}`}`);
    }
    section(accounts.map((l) => `• ${slackEscape(l)}`).join('\n'));
    section(slackEscape(cases));
    if (pending.length > 0) section(`*Not final yet*\n${pending.map((l) => `• ${slackEscape(l)}`).join('\n')}`);
    if (breaks.length > 0) {
      const more = breaks.length - SLACK_BREAK_LINES + d.moreDiscrepancies;
      section(`*Largest discrepancies* (gateway minus books, largest beside their balance first)\n${breaks.slice(0, SLACK_BREAK_LINES).map((l) => `• ${slackEscape(l)}`).join('\n')}${more > 0 ? `\n… and ${more} more` : ''}`);
    }
    if (alarms.length > 0) section(`*Consecutive failures*\n${alarms.map((l) => `• ${slackEscape(l)}`).join('\n')}`);
  } else {
    section(slackEscape(renderEventText(event, options).split('\n').slice(2, -2).join('\n')));
  }
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: slackEscape(`${event.type} · ${event.id} · ${formatLocalTimeText(event.timestamp, options.timezone)}`) }] });
  return { text: headline, blocks };
}
