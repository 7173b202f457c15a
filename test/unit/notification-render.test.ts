import { describe, expect, it } from 'vitest';
import { countByStatus } from '../../src/reconciliation/reconciliation-result.js';
import { createEvent, headlineOf, type NightCompletedData } from '../../src/notifications/events.js';
import { renderEventHtml, renderEventText, renderSlackMessage } from '../../src/notifications/render-event.js';
import { retryDelayMs } from '../../src/notifications/deliverer.js';
import { numberStyleOf } from '../../src/money/number-style.js';
import { compareRelativeSize } from '../../src/notifications/night-digest.js';
import { endpointKind, statusClass } from '../../src/metrics/metrics.js';

const counts = (partial: Partial<ReturnType<typeof countByStatus>>) => ({ ...countByStatus([]), ...partial });

const night: NightCompletedData = {
  businessDate: '2026-11-20',
  slot: '2026-11-20T23:55:00.000Z',
  cutoffAt: '2026-11-21T00:00:00.000Z',
  accounts: [
    { account: 'eu-main', status: 'captured', runId: 41, cutoffDriftSeconds: -300, wallets: 12, attempts: 3, lastError: 'HTTP 503', reconciliation: counts({ matched: 11, break: 1 }) },
    { account: 'jp<&>', status: 'missed', runId: null, cutoffDriftSeconds: null, wallets: null, attempts: 4, lastError: 'GET /v1/data/wallets/balances answered 503', reconciliation: counts({ no_snapshot: 1 }) },
  ],
  reconciliation: counts({ matched: 11, break: 1, no_snapshot: 1 }),
  topDiscrepancies: [{ account: 'eu-main', status: 'break', difference: { amount: '-100000000', currency: 'JPY' }, gatewayBalance: '5', expectedBalance: '100000005' }],
  moreDiscrepancies: 0,
  consecutiveFailures: [{ account: 'jp<&>', missedDates: 2 }],
  acceptedDiscrepancies: 1,
  caseCounts: { new: 1, persisting: 2, autoResolved: 3 },
  pending: [],
};

describe('rendering events for people', () => {
  const event = createEvent('night.completed', new Date('2026-11-21T00:05:00Z'), night);

  it('stamps events with an id, a type, a timestamp and version 1', () => {
    expect(event).toMatchObject({ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), type: 'night.completed', timestamp: '2026-11-21T00:05:00.000Z', version: 1 });
    expect(headlineOf(event)).toBe('Reconciliation of 2026-11-20: 1 break, 1 other discrepancy, 1 account missed');
  });

  it('headlines breaks, awaited books and misses in the subject, and a clean night as such', () => {
    const headline = (data: Partial<NightCompletedData>) => headlineOf(createEvent('night.completed', new Date('2026-11-21T00:05:00Z'), { ...night, ...data }));
    const captured = night.accounts[0]!;
    expect(headline({ accounts: [captured], reconciliation: counts({ matched: 12 }) })).toBe('Reconciliation of 2026-11-20: all 12 results matched (1 account captured)');
    expect(headline({ accounts: [captured], reconciliation: counts({ awaiting_books: 12 }), pending: [{ account: 'eu-main', state: 'awaiting_books', message: 'books for 2026-11-20 not imported yet' }] })).toBe(
      'Reconciliation of 2026-11-20: books awaited for 1 account',
    );
    expect(headline({ reconciliation: counts({ matched: 3, break: 2, missing_in_ledger: 1 }) })).toBe('Reconciliation of 2026-11-20: 2 breaks, 1 other discrepancy, 1 account missed');
  });

  it('writes times in RECON_TIMEZONE with the zone and amounts in RECON_LOCALE; the event keeps UTC and minor units', () => {
    const options = { timezone: 'Europe/Berlin', style: numberStyleOf('de-DE') };
    const text = renderEventText(event, options);
    expect(text).toContain('Business date 2026-11-20 (cut-off 2026-11-21 01:00 CET).');
    expect(text).toContain('  eu-main JPY -100.000.000 (break)');
    expect(text).toContain(`Event ${event.id} (night.completed, 2026-11-21 01:05 CET).`);
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    expect(renderEventHtml(event, options)).toContain('(cut-off 2026-11-21 01:00 CET)');
    expect(JSON.stringify(renderSlackMessage(event, options))).toContain('2026-11-21 01:05 CET');
    expect(event.data.cutoffAt).toBe('2026-11-21T00:00:00.000Z');
    const risk = createEvent('date.at_risk', new Date('2026-11-21T00:05:00Z'), { account: 'eu-main', businessDate: '2026-11-20', windowClosesAt: '2026-11-21T03:00:00.000Z', reason: 'The gateway refused the API secret.' });
    expect(renderEventText(risk, options)).toContain('Fix the credentials before 2026-11-21 04:00 CET');
  });

  it('says a currency missing from the books is missing, not "10,000 bps of the balance"', () => {
    const data = { ...night, topDiscrepancies: [{ account: 'eu-main', status: 'missing_in_ledger', difference: { amount: '500', currency: 'EUR' }, gatewayBalance: '500', expectedBalance: null, differenceFormatted: 'EUR 5.00', relativeBps: '10000' }] };
    const text = renderEventText(createEvent('night.completed', new Date('2026-11-21T00:05:00Z'), data));
    expect(text).toContain('  eu-main EUR 5.00 (missing from the books)');
    expect(text).not.toContain('bps');
  });

  it('tells that an at-risk date was captured after all (date.recovered)', () => {
    const recovered = createEvent('date.recovered', new Date('2026-11-21T01:10:00Z'), { account: 'eu-main', businessDate: '2026-11-20', capturedAt: '2026-11-21T01:09:30.000Z', runId: 7 });
    expect(headlineOf(recovered)).toBe('Account "eu-main" captured business date 2026-11-20 after all: no longer at risk');
    expect(renderEventText(recovered, { timezone: 'Europe/Berlin', style: numberStyleOf(undefined) })).toContain('was captured at 2026-11-21 02:09 CET (run 7), inside its capture window');
  });

  it('writes one line per account, attempts of a retried capture and the miss with its reason, the exact amounts', () => {
    const text = renderEventText(event);
    expect(text).toContain('  eu-main: run 41, 12 wallets, 5 min before the cut-off, 3 attempts; 11 matched, 1 break');
    expect(text).toContain('  jp<&>: MISSED after 4 attempt(s): GET /v1/data/wallets/balances answered 503');
    // In yen (no decimals), grouped; the event's JSON keeps the exact minor units.
    expect(text).toContain('  eu-main JPY -100,000,000 (break)');
    expect(text).toContain('  jp<&>: 2 business date(s) missed in a row');
    expect(renderEventHtml(event)).toContain('<li>jp&lt;&amp;&gt;: 2 business date(s) missed in a row</li>');
    expect(text).toContain('Cases: 1 new, 2 still open, 3 resolved by this date\'s results; 1 accepted discrepancy not counted.');
  });

  it('builds a Slack Block Kit message: header, accounts, top breaks, alarms, context; mrkdwn control characters escaped', () => {
    const message = renderSlackMessage(event);
    expect(message.text).toBe(headlineOf(event));
    const blocks = message.blocks as Array<{ type: string; text?: { type: string; text: string } }>;
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'section', 'section', 'context']);
    expect(blocks[0]!.text).toEqual({ type: 'plain_text', text: headlineOf(event) });
    expect(blocks[1]!.text!.text).toContain('• jp&lt;&amp;&gt;: MISSED');
    expect(blocks[2]!.text!.text).toBe('Cases: 1 new, 2 still open, 3 resolved by this date\'s results; 1 accepted discrepancy not counted.');
    expect(blocks[3]!.text!.text).toContain('• eu-main JPY -100,000,000 (break)');
  });

  it('backs off 30 s, 1, 2, 4 … minutes up to an hour; classifies gateway paths and statuses into bounded labels', () => {
    expect([1, 2, 3, 4, 8, 20].map(retryDelayMs)).toEqual([30_000, 60_000, 120_000, 240_000, 3_600_000, 3_600_000]);
    expect(['/v1/auth/token', '/v1/data/wallets/balances', '/v1/data/wallets/JPY/balance', '/v1/other/123'].map(endpointKind)).toEqual(['token', 'balances', 'balances', 'other']);
    expect([200, 304, 429, 503, undefined].map(statusClass)).toEqual(['2xx', '3xx', '4xx', '5xx', 'network']);
  });
});

describe('ranking the night\'s breaks without exchange rates', () => {
  it('orders breaks by size beside their balance, exactly: JPY -5,000 on ¥100 million below EUR 1.00 on EUR 5.00', () => {
    const breaks = [
      { name: 'JPY -5,000 of 100,000,000', size: 5_000n, balance: 100_000_000n },
      { name: 'EUR 1.00 of 5.00', size: 100n, balance: 500n },
      { name: 'USD 0.01 on a zero balance', size: 1n, balance: 0n },
      { name: 'KWD 0.020 of 40.000', size: 20n, balance: 40_000n },
    ];
    const ranked = [...breaks].sort((a, b) => compareRelativeSize(b, a)).map((b) => b.name);
    expect(ranked).toEqual(['USD 0.01 on a zero balance', 'EUR 1.00 of 5.00', 'KWD 0.020 of 40.000', 'JPY -5,000 of 100,000,000']);
    // Equal ratios beyond 2^53 still compare exactly; then the larger amount first.
    expect(compareRelativeSize({ size: 2n ** 60n, balance: 2n ** 61n }, { size: 1n, balance: 2n })).toBe(1);
    expect(compareRelativeSize({ size: 2n ** 60n + 1n, balance: 2n ** 61n }, { size: 2n ** 60n, balance: 2n ** 61n })).toBe(1);
  });

  it('shows each break in major units with its size in basis points of the balance', () => {
    const data = { ...night, topDiscrepancies: [{ account: 'eu-main', status: 'break', difference: { amount: '100', currency: 'EUR' }, gatewayBalance: '600', expectedBalance: '500', differenceFormatted: 'EUR 1.00', relativeBps: '1666' }] };
    const text = renderEventText(createEvent('night.completed', new Date('2026-11-21T00:05:00Z'), data));
    expect(text).toContain('  eu-main EUR 1.00 (break, 1,666 bps of the balance)');
  });
});
