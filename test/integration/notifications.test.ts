import { formatMoney } from '../../src/money/format-amount.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runNight, settleAccountDate } from '../../jobs/nightly-job.js';
import { reconcileAfterSnapshot } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { daysBetween } from '../../src/cases/case-model.js';
import { businessCalendarOf } from '../../src/config/index.js';
import { claimNextNotification, listNotifications } from '../../src/db/notification.repository.js';
import { Deliverer } from '../../src/notifications/deliverer.js';
import type { DateMissedData, NightCompletedData, NotificationEvent } from '../../src/notifications/events.js';
import { createChannels } from '../../src/notifications/create-channels.js';
import { enqueueEvent } from '../../src/notifications/outbox.js';
import { importBooksFile } from '../../src/books/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { serviceOfSlot } from '../../src/scheduler/slot-schedule.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { parseMail, startSmtpServer, type TestSmtpServer } from '../helpers/receivers.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServer, type TestServer } from '../helpers/with-server.js';

const WEBHOOK_SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
// Credentials that must never reach a log line or the database.
const WEBHOOK_TOKEN = 'hook-path-token-5f2a';
const SLACK_TOKEN = 'slack-path-token-9c1e';
const SMTP_PASSWORD = 'smtp-pass-77d3';

let t: TestDatabase;
let sandbox: Sandbox;
let webhook: TestServer;
let slack: TestServer;
let smtp: TestSmtpServer;
/** What the webhook receiver answers next; once empty, 204. */
let webhookAnswers: Array<{ status: number; headers?: Record<string, string> }> = [];
let nightClock = new FixedClock('2026-11-20T23:55:00Z');

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 5, now: () => nightClock.now() });
  webhook = await startServer((_req, res) => {
    const answer = webhookAnswers.shift() ?? { status: 204 };
    res.writeHead(answer.status, answer.headers).end();
  });
  slack = await startServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), webhook?.close(), slack?.close(), smtp?.close()]);
  await t?.drop();
});
beforeEach(async () => {
  for (const table of ['notifications', 'reconciliation_results', 'expected_balances', 'books_imports', 'missed_dates', 'balance_snapshots', 'snapshot_runs', 'reconciliation_owed', 'scheduled_accounts'] as const) {
    await t.handle.db.deleteFrom(table).execute();
  }
  sandbox.setFaults({ outageMs: 0 });
  webhook.requests.length = 0;
  slack.requests.length = 0;
  smtp.mails.length = 0;
  webhookAnswers = [];
});

function channelEnv(): Record<string, string> {
  const smtpUrl = new URL(smtp.url);
  smtpUrl.username = 'recon';
  smtpUrl.password = SMTP_PASSWORD;
  return {
    RECON_WEBHOOK_URL: `${webhook.url}/hooks/${WEBHOOK_TOKEN}`,
    RECON_WEBHOOK_SECRET: WEBHOOK_SECRET,
    RECON_SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/${SLACK_TOKEN}`,
    RECON_SMTP_URL: smtpUrl.toString(),
    RECON_MAIL_FROM: 'Recon <recon@example.test>',
    RECON_MAIL_TO: 'finance@example.test, ops@example.test',
  };
}

function nightContext(at: string, logs = captureLogs(), extra: Record<string, string> = {}): AppContext {
  nightClock = new FixedClock(at);
  return createTestContext(t, sandboxEnv(sandbox, { ...channelEnv(), ...extra }), { clock: nightClock, logger: logs.logger });
}

/**
 * The deliverer runs on its own clock near the real time: receivers verify the webhook's
 * timestamp against their own clock (the Standard Webhooks tolerance is five minutes).
 */
function deliverer(ctx: AppContext, logs = captureLogs(), clock = new FixedClock(new Date())): { deliverer: Deliverer; clock: FixedClock } {
  const channels = createChannels(ctx.config, t.handle.db, () => clock.now());
  return { deliverer: new Deliverer({ db: t.handle.db, clock, logger: logs.logger, channels, maxAttempts: ctx.config.notifications.maxAttempts }), clock };
}

function night(ctx: AppContext, slot: string) {
  return runNight(ctx, { serve: serviceOfSlot(businessCalendarOf(ctx.config), new Date(slot)), signal: new AbortController().signal, reconcile: reconcileAfterSnapshot });
}

async function importBooks(ctx: AppContext, date: string, adjust: (currency: string, balance: bigint) => bigint): Promise<void> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'wr-books-')), 'books.csv');
  writeFileSync(file, ['business_date,currency,balance', ...sandbox.wallets.map((w) => `${date},${w.currency},${adjust(w.currency, w.balance)}`)].join('\n'));
  await importBooksFile(ctx, file, { amounts: 'minor' });
}

// Problem events (issue 45) that the night's breaks raise are followed by the problem-*-cli tests; these follow the others.
const outbox = () => t.handle.db.selectFrom('notifications').selectAll().where('event_type', 'not like', 'problem.%').orderBy('id').execute();

describe(`notifications through the outbox on the ${backend} database`, () => {
  it('queues one night.completed digest per channel when the night settles, and delivers it signed, to Slack and by e-mail with the report', async () => {
    const logs = captureLogs();
    const ctx = nightContext('2026-11-20T23:55:00Z', logs);
    const [usd, jpy] = [sandbox.wallets[0]!.currency, sandbox.wallets[1]!.currency];
    await importBooks(ctx, '2026-11-20', (currency, balance) => (currency === usd ? balance - 1_000_000n : currency === jpy ? balance + 5n : balance));
    const result = await night(ctx, '2026-11-20T23:55:00Z');
    expect(result.accounts[0]!.status).toBe('captured');

    const rows = await outbox();
    expect(rows.map((r) => [r.event_type, r.channel, r.status])).toEqual([
      ['night.completed', 'webhook', 'pending'],
      ['night.completed', 'slack', 'pending'],
      ['night.completed', 'email', 'pending'],
    ]);
    expect(new Set(rows.map((r) => r.event_id)).size).toBe(1);

    // Delivered days after the date: the report's case ages count to the day of delivery, as `cases` does.
    await t.handle.db.deleteFrom('notifications').where('event_type', 'like', 'problem.%').execute();
    const { deliverer: d, clock: deliveryClock } = deliverer(ctx, logs);
    const ageAtDelivery = daysBetween('2026-11-20', businessCalendarOf(ctx.config).businessDateOf(deliveryClock.now()));
    expect(ageAtDelivery).toBeGreaterThan(0);
    const pass = await d.deliverDue();
    expect(pass, JSON.stringify((await outbox()).map((r) => r.last_error))).toEqual({ sent: 3, retried: 0, failed: 0 });
    expect((await outbox()).map((r) => [r.status, r.attempts])).toEqual([
      ['sent', 1],
      ['sent', 1],
      ['sent', 1],
    ]);

    // The webhook: verified by the stock library with the shared secret; a changed body is refused.
    expect(webhook.requests).toHaveLength(1);
    const request = webhook.requests[0]!;
    expect(request.path).toBe(`/hooks/${WEBHOOK_TOKEN}`);
    const headers = { 'webhook-id': String(request.headers['webhook-id']), 'webhook-timestamp': String(request.headers['webhook-timestamp']), 'webhook-signature': String(request.headers['webhook-signature']) };
    const event = new Webhook(WEBHOOK_SECRET).verify(request.body, headers) as NotificationEvent<NightCompletedData>;
    expect(() => new Webhook(WEBHOOK_SECRET).verify(request.body.replace('"2026-11-20"', '"2026-11-19"'), headers)).toThrow(/signature/i);
    expect(headers['webhook-id']).toBe(event.id);
    // Written once the cut-off passed and the date was reconciled, not at the 23:55 capture.
    expect(event).toMatchObject({ type: 'night.completed', version: 1, timestamp: '2026-11-21T00:00:00.000Z' });
    const runId = result.accounts[0]!.runId;
    expect(event.data).toMatchObject({
      businessDate: '2026-11-20',
      cutoffAt: '2026-11-21T00:00:00.000Z',
      accounts: [{ account: 'default', status: 'captured', runId, cutoffDriftSeconds: -300, wallets: 5, attempts: 1, reconciliation: { matched: 3, break: 2 } }],
      reconciliation: { matched: 3, break: 2, no_snapshot: 0 },
      consecutiveFailures: [],
      moreDiscrepancies: 0,
      // Both breaks are seen for the first time: two new cases.
      caseCounts: { new: 2, persisting: 0, autoResolved: 0 },
      acceptedDiscrepancies: 0,
    });
    // Largest first, exact amounts as strings with their currency.
    expect(event.data.topDiscrepancies.map((d) => [d.difference.currency, d.difference.amount])).toEqual([
      [usd, '1000000'],
      [jpy, '-5'],
    ]);

    // Slack: a Block Kit message with the headline and the account line.
    const message = JSON.parse(slack.requests[0]!.body) as { text: string; blocks: Array<{ type: string; text?: { text: string } }> };
    expect(slack.requests[0]!.path).toBe(`/services/T0/B0/${SLACK_TOKEN}`);
    expect(message.text).toBe('Reconciliation of 2026-11-20: 2 breaks');
    expect(message.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'section', 'section', 'context']);
    // First the change list (issue 45): both breaks are new, per account, in major units with the currency.
    expect(message.blocks[1]!.text!.text).toContain('*What changed*: 2 new, 0 changed, 0 still open, 0 snoozed, 0 cleared; 0 immaterial (counted, no case), 0 explained by reconciling items.');
    expect(message.blocks[1]!.text!.text).toMatch(new RegExp(`\\*default \\(gateway\\)\\*\\n• new: break ${usd} [\\d.]+, case #\\d+\\n• new: break ${jpy} -[\\d.]+, case #\\d+`));
    expect(message.blocks[2]!.text!.text).toContain(`default: run ${runId}, 5 wallets, 5 min before the cut-off; 3 matched, 2 break`);
    expect(message.blocks[3]!.text!.text).toBe("Cases: 2 new, 0 still open, 0 resolved by this date's results.");
    // In major units, with the size beside the balance that orders the list.
    expect(message.blocks[4]!.text!.text).toMatch(new RegExp(`${formatMoney(1_000_000n, usd).replace('.', '\\.')} \\(break, \\d+ bps of the balance\\)`));

    // E-mail: one message to both recipients, text and HTML bodies, the day's report attached.
    expect(smtp.mails).toHaveLength(1);
    expect(smtp.mails[0]!.to).toEqual(['finance@example.test', 'ops@example.test']);
    expect(smtp.logins).toContain('recon');
    const mail = parseMail(smtp.mails[0]!.raw);
    expect(mail.headers.subject).toBe('[wallet-recon] Reconciliation of 2026-11-20: 2 breaks');
    const text = mail.parts.find((p) => p.headers['content-type']?.startsWith('text/plain'));
    const html = mail.parts.find((p) => p.headers['content-type']?.startsWith('text/html') && !p.headers['content-disposition']);
    const attachment = mail.parts.find((p) => p.headers['content-disposition']?.startsWith('attachment'));
    expect(text?.body).toContain(`${formatMoney(1_000_000n, usd)} (break, `);
    expect(html?.body).toContain('<h2>Largest discrepancies</h2>');
    expect(attachment?.headers['content-disposition']).toContain('filename=reconciliation-2026-11-20.html');
    expect(attachment?.body).toMatch(/^<!DOCTYPE html>/);
    expect(attachment?.body).toContain('Reconciliation 2026-11-20');
    const ages = attachment!.body.match(/#\d+ open, \d+ d/g)!;
    expect(ages.length).toBeGreaterThan(0);
    expect(ages.every((cell) => cell.endsWith(`, ${ageAtDelivery} d`))).toBe(true);

    // No credential of any channel in the logs or the outbox.
    const stored = JSON.stringify(await outbox());
    for (const secret of [WEBHOOK_TOKEN, SLACK_TOKEN, SMTP_PASSWORD, WEBHOOK_SECRET.slice(6)]) {
      expect(logs.text()).not.toContain(secret);
      expect(stored).not.toContain(secret);
    }
  });

  it('counts in the digest the cases a night opened, kept open and resolved', async () => {
    const ctx = nightContext('2026-11-20T23:55:00Z');
    const [usd, jpy] = [sandbox.wallets[0]!.currency, sandbox.wallets[1]!.currency];
    await importBooks(ctx, '2026-11-20', (currency, balance) => (currency === usd ? balance - 7n : currency === jpy ? balance + 5n : balance));
    await night(ctx, '2026-11-20T23:55:00Z');
    // The next day USD is still off, JPY agrees again.
    nightClock.set('2026-11-21T23:55:00Z');
    await importBooks(ctx, '2026-11-21', (currency, balance) => (currency === usd ? balance - 7n : balance));
    await night(ctx, '2026-11-21T23:55:00Z');
    const digests = (await outbox())
      .filter((r) => r.event_type === 'night.completed' && r.channel === 'webhook')
      .map((r) => (r.payload as NotificationEvent<NightCompletedData>).data);
    expect(digests.map((d) => [d.businessDate, d.caseCounts])).toEqual([
      ['2026-11-20', { new: 2, persisting: 0, autoResolved: 0 }],
      ['2026-11-21', { new: 0, persisting: 1, autoResolved: 1 }],
    ]);
  });

  it('writes night.completed once when two replicas settle the same slot', async () => {
    const ctx = nightContext('2026-11-20T23:55:00Z');
    await night(ctx, '2026-11-20T23:55:00Z');
    const other = createTestContext(t, sandboxEnv(sandbox, channelEnv()), { clock: new FixedClock('2026-11-21T00:05:00Z') });
    const second = await night(other, '2026-11-20T23:55:00Z');
    expect(second.accounts[0]!.status).toBe('captured');
    expect((await outbox()).filter((r) => r.event_type === 'night.completed')).toHaveLength(3);
  });

  it('raises date.missed once, in the transaction that records the miss, and the digest names the miss', async () => {
    const ctx = nightContext('2026-11-20T23:55:00Z', captureLogs(), { RECON_CAPTURE_WINDOW: '90s', RECON_RETRY_DELAYS: '30s', RECON_SCHEDULE: '59 23 * * *' });
    sandbox.setFaults({ outageMs: 60 * 60_000 });
    const result = await night(ctx, '2026-11-20T23:59:00Z');
    expect(result.accounts[0]!.status).toBe('missed');
    // A second replica settling the same date records nothing and raises nothing.
    const window = serviceOfSlot(businessCalendarOf(ctx.config), new Date('2026-11-20T23:59:00Z')).window;
    expect(await settleAccountDate(ctx, 'default', window)).toBe('missed');

    const rows = await outbox();
    expect(rows.map((r) => [r.event_type, r.channel])).toEqual([
      ['date.missed', 'webhook'],
      ['date.missed', 'slack'],
      ['date.missed', 'email'],
      ['night.completed', 'webhook'],
      ['night.completed', 'slack'],
      ['night.completed', 'email'],
    ]);
    const missed = rows[0]!.payload as NotificationEvent<DateMissedData>;
    expect(missed).toMatchObject({ type: 'date.missed', version: 1, data: { account: 'default', businessDate: '2026-11-20', windowClosedAt: '2026-11-21T00:01:30.000Z', consecutiveMissedDates: 1 } });
    expect(missed.data.lastError).toMatch(/503/);
    const digest = rows[3]!.payload as NotificationEvent<NightCompletedData>;
    expect(digest.data.accounts[0]).toMatchObject({ account: 'default', status: 'missed', runId: null, wallets: null, lastError: expect.stringMatching(/503/) });
    expect(digest.data.consecutiveFailures).toEqual([{ account: 'default', missedDates: 1 }]);
    expect(digest.data.reconciliation.no_snapshot).toBe(1);
  });

  it('records no miss when its notification cannot be written: the two share one transaction', async () => {
    const ctx = nightContext('2026-11-20T23:55:00Z', captureLogs(), { RECON_CAPTURE_WINDOW: '90s', RECON_SCHEDULE: '59 23 * * *' });
    const window = serviceOfSlot(businessCalendarOf(ctx.config), new Date('2026-11-20T23:59:00Z')).window;
    nightClock.set('2026-11-21T00:02:00Z');
    await t.handle.db.schema.alterTable('notifications').renameTo('notifications_away').execute();
    try {
      await expect(settleAccountDate(ctx, 'default', window)).rejects.toThrow(/notifications/);
      expect(await t.handle.db.selectFrom('missed_dates').selectAll().execute()).toEqual([]);
    } finally {
      await t.handle.db.schema.alterTable('notifications_away').renameTo('notifications').execute();
    }
    // Once the outbox is back, the next settle records the miss and its event together.
    expect(await settleAccountDate(ctx, 'default', window)).toBe('missed');
    expect(await t.handle.db.selectFrom('missed_dates').select('business_date').execute()).toEqual([{ business_date: '2026-11-20' }]);
    expect((await outbox()).map((r) => r.event_type)).toEqual(['date.missed', 'date.missed', 'date.missed']);
  });

  it('tries a failing receiver again after its backoff and Retry-After, and delivers once with every attempt counted', async () => {
    const ctx = nightContext('2026-11-20T23:55:00Z', captureLogs(), { RECON_SLACK_WEBHOOK_URL: '', RECON_SMTP_URL: '', RECON_MAIL_FROM: '', RECON_MAIL_TO: '' });
    await night(ctx, '2026-11-20T23:55:00Z');
    webhookAnswers = [{ status: 503 }, { status: 429, headers: { 'retry-after': '90' } }, { status: 500 }];
    const { deliverer: d, clock } = deliverer(ctx);
    const attemptAt = async () => {
      const row = (await outbox())[0]!;
      return row.next_attempt_at;
    };

    expect(await d.deliverDue()).toEqual({ sent: 0, retried: 1, failed: 0 });
    let next = await attemptAt();
    expect(next.getTime() - clock.now().getTime()).toBe(30_000);
    // Not due yet: nothing is sent.
    expect(await d.deliverDue()).toEqual({ sent: 0, retried: 0, failed: 0 });
    clock.set(next);
    expect(await d.deliverDue()).toEqual({ sent: 0, retried: 1, failed: 0 });
    next = await attemptAt();
    // The receiver asked for 90 s: that, not the 60 s backoff.
    expect(next.getTime() - clock.now().getTime()).toBe(90_000);
    clock.set(next);
    expect(await d.deliverDue()).toEqual({ sent: 0, retried: 1, failed: 0 });
    clock.set(await attemptAt());
    expect(await d.deliverDue()).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(await d.deliverDue()).toEqual({ sent: 0, retried: 0, failed: 0 });

    expect(webhook.requests.map((r) => r.headers['webhook-id'])).toEqual(Array(4).fill(webhook.requests[0]!.headers['webhook-id']));
    const [row] = await outbox();
    expect(row).toMatchObject({ status: 'sent', attempts: 4, last_error: null });
    // The last attempt is the one a receiver can verify (its own timestamp and signature).
    const last = webhook.requests[3]!;
    expect(() =>
      new Webhook(WEBHOOK_SECRET).verify(last.body, {
        'webhook-id': String(last.headers['webhook-id']),
        'webhook-timestamp': String(last.headers['webhook-timestamp']),
        'webhook-signature': String(last.headers['webhook-signature']),
      }),
    ).not.toThrow();
  });

  it('marks a notification failed with the reason: at once when refused, after the last attempt when the receiver stays down', async () => {
    const ctx = nightContext('2026-11-20T23:55:00Z', captureLogs(), { RECON_SLACK_WEBHOOK_URL: '', RECON_SMTP_URL: '', RECON_MAIL_FROM: '', RECON_MAIL_TO: '', RECON_NOTIFY_MAX_ATTEMPTS: '2' });
    const now = new Date();
    await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'one' }, 'test:refused', now);
    await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'two' }, 'test:down', now);
    webhookAnswers = [{ status: 400 }, { status: 503 }];
    const { deliverer: d, clock } = deliverer(ctx, captureLogs(), new FixedClock(now));
    expect(await d.deliverDue()).toEqual({ sent: 0, retried: 1, failed: 1 });
    webhookAnswers = [{ status: 502 }];
    clock.advance(30_000);
    expect(await d.deliverDue()).toEqual({ sent: 0, retried: 0, failed: 1 });
    const rows = await listNotifications(t.handle.db, { status: 'failed', limit: 10 });
    expect(rows.map((r) => [r.dedupe_key, r.attempts, r.last_error])).toEqual([
      ['test:down', 2, expect.stringMatching(/^gave up after 2 attempts: The webhook http:\/\/127\.0\.0\.1:\d+ answered 502\.$/)],
      ['test:refused', 1, expect.stringMatching(/answered 400: refused, not tried again\.$/)],
    ]);
  });

  it('delivers after a restart what a killed worker left pending or had claimed', async () => {
    const ctx = nightContext('2026-11-20T23:55:00Z', captureLogs(), { RECON_SLACK_WEBHOOK_URL: '', RECON_SMTP_URL: '', RECON_MAIL_FROM: '', RECON_MAIL_TO: '' });
    const now = new Date();
    await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'left pending' }, 'test:pending', now);
    await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'claimed, then killed' }, 'test:claimed', now);
    // The killed worker had claimed the second row (its lease runs two minutes) and never sent it.
    const claimed = await claimNextNotification(t.handle.db, now, new Date(now.getTime() + 120_000), '00000000-0000-4000-8000-000000000001');
    expect(claimed?.dedupe_key).toEqual('test:pending');

    const restarted = deliverer(ctx, captureLogs(), new FixedClock(now));
    expect(await restarted.deliverer.deliverDue()).toEqual({ sent: 1, retried: 0, failed: 0 });
    restarted.clock.advance(120_000);
    expect(await restarted.deliverer.deliverDue()).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(webhook.requests.map((r) => (JSON.parse(r.body) as NotificationEvent<{ message: string }>).data.message)).toEqual(['claimed, then killed', 'left pending']);
    expect((await outbox()).map((r) => [r.status, r.attempts])).toEqual([
      ['sent', 2],
      ['sent', 1],
    ]);
  });

  it('on shutdown, ends a send under way (tried again later) and gives back claimed rows it had not tried', async () => {
    const stop = new AbortController();
    // A receiver that never answers; the worker is stopped while it waits.
    const hanging = await startServer(() => stop.abort());
    try {
      const ctx = nightContext('2026-11-20T23:55:00Z', captureLogs(), { RECON_WEBHOOK_URL: `${hanging.url}/in`, RECON_SLACK_WEBHOOK_URL: '', RECON_SMTP_URL: '', RECON_MAIL_FROM: '', RECON_MAIL_TO: '' });
      const now = new Date();
      await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'under way' }, 'stop:1', now);
      await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'not tried' }, 'stop:2', now);
      const { deliverer: d } = deliverer(ctx, captureLogs(), new FixedClock(now));
      expect(await d.deliverDue(stop.signal)).toEqual({ sent: 0, retried: 1, failed: 0 });
      expect(hanging.requests).toHaveLength(1);
      expect((await outbox()).map((r) => [r.dedupe_key, r.status, r.attempts, r.locked_until, r.last_error])).toEqual([
        ['stop:1', 'pending', 1, null, expect.stringMatching(/could not be reached \(stopped by shutdown\)\.$/)],
        ['stop:2', 'pending', 0, null, null],
      ]);
    } finally {
      await hanging.close();
    }
  });

  it('sends each notification once when two workers deliver side by side', async () => {
    const ctx = nightContext('2026-11-20T23:55:00Z', captureLogs(), { RECON_SMTP_URL: '', RECON_MAIL_FROM: '', RECON_MAIL_TO: '' });
    const now = new Date();
    for (let i = 0; i < 8; i++) await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: `n${i}` }, `test:${i}`, now);
    const a = deliverer(ctx, captureLogs(), new FixedClock(now)).deliverer;
    const b = deliverer(ctx, captureLogs(), new FixedClock(now)).deliverer;
    const [first, second] = await Promise.all([a.deliverDue(), b.deliverDue()]);
    expect(first.sent + second.sent).toBe(16);
    expect(webhook.requests).toHaveLength(8);
    expect(slack.requests).toHaveLength(8);
    expect(new Set(webhook.requests.map((r) => r.headers['webhook-id'])).size).toBe(8);
    expect((await outbox()).every((r) => r.status === 'sent' && r.attempts === 1)).toBe(true);
  });
});
