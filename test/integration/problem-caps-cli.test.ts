import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/index.js';
import { createSilentLogger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { currencyDecimals } from '../../src/money/format-amount.js';
import { createChannels } from '../../src/notifications/create-channels.js';
import { Deliverer } from '../../src/notifications/deliverer.js';
import type { NotificationEvent } from '../../src/notifications/events.js';
import { enqueueEvent } from '../../src/notifications/outbox.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServer, type TestServer } from '../helpers/with-server.js';

// Issue 45: a cap per channel and night folds the rest into one summary; quiet hours hold Slack; materiality quiets small differences.
const SECRET = `whsec_${Buffer.alloc(32, 6).toString('base64')}`;
const servers: TestServer[] = [];
const sandboxes: Sandbox[] = [];
const databases: TestDatabase[] = [];
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'wr-problem-caps-'));
});
afterAll(async () => {
  await Promise.all([...servers.map((s) => s.close()), ...sandboxes.map((s) => s.close())]);
  for (const t of databases) await t.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** `n` three-letter codes ISO 4217 does not know, for wallets whose decimals the environment gives. */
function unknownCodes(n: number): string[] {
  const codes: string[] = [];
  for (let i = 0; codes.length < n; i++) {
    const code = `Q${String.fromCharCode(65 + Math.floor(i / 26) % 26)}${String.fromCharCode(65 + (i % 26))}`;
    if (currencyDecimals(code) === null) codes.push(code);
  }
  return codes;
}

async function setup(currencies: ReadonlyArray<[string, bigint]>, extra: Record<string, string>) {
  const t = await createTestDatabase({ onDisk: true });
  databases.push(t);
  if (backend === 'embedded') await t.handle.close();
  const sandbox = await startSandbox({ port: 0, wallets: 0 });
  sandboxes.push(sandbox);
  for (const [currency, balance] of currencies) sandbox.addWallet(currency, balance);
  const webhook = await startServer((_req, res) => void res.writeHead(200).end());
  servers.push(webhook);
  const env: Record<string, string> = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_WEBHOOK_URL: `${webhook.url}/in`, RECON_WEBHOOK_SECRET: SECRET, ...extra };
  const clock = new FixedClock('2026-11-11T00:30:00Z');
  const cli = (...args: string[]) => runCliInProcess(args, env, { clock });
  const deliver = async () => {
    const config = loadConfig({ env, ignoreDotEnv: true });
    await withDatabase(t, (db) => new Deliverer({ db, clock, logger: createSilentLogger(), channels: createChannels(config, undefined, () => clock.now()), maxAttempts: 3 }).deliverDue());
  };
  return { t, env, clock, cli, deliver, webhook };
}

const date = '2026-11-10';
const eventsOf = (server: TestServer) => server.requests.map((r) => JSON.parse(r.body) as NotificationEvent);

describe(`notification caps, quiet hours and materiality (${backend})`, () => {
  it('300 new breaks with RECON_NOTIFY_MAX_PER_NIGHT=20: 20 messages and one folded summary reach the webhook; the outbox holds all 300', async () => {
    const codes = unknownCodes(300);
    const s = await setup(codes.map((c) => [c, 100_000n]), { RECON_NOTIFY_MAX_PER_NIGHT: '20', ...Object.fromEntries(codes.map((c) => [`GATEWAY_AMOUNT_DECIMALS_${c}`, '2'])) });
    expect((await s.cli('snapshot')).code).toBe(0);
    const books = path.join(dir, 'books-300.csv');
    writeFileSync(books, `business_date,currency,balance\n${codes.map((c) => `${date},${c},90000`).join('\n')}\n`);
    const imported = await s.cli('ledger', 'import', '--amounts', 'minor', books);
    expect(imported.code, imported.stderr).toBe(0);
    expect((await s.cli('reconcile', '--date', date)).code).toBe(3);
    await s.deliver();

    const delivered = eventsOf(s.webhook).filter((e) => e.type.startsWith('problem.'));
    expect(delivered.filter((e) => e.type === 'problem.new')).toHaveLength(20);
    const folded = delivered.filter((e) => e.type === 'problem.folded');
    expect(folded).toHaveLength(1);
    expect(folded[0]!.data).toMatchObject({ count: 280, channel: 'webhook', businessDate: date, reason: 'RECON_NOTIFY_MAX_PER_NIGHT' });
    const outbox = await withDatabase(s.t, (db) => db.selectFrom('notifications').select(['status']).where('event_type', '=', 'problem.new').execute());
    expect(outbox).toHaveLength(300);
    expect(outbox.filter((r) => r.status === 'folded')).toHaveLength(280);

    const log = JSON.parse((await s.cli('notify', 'log', '--date', date, '--json')).stdout) as Array<{ decision: string }>;
    expect(log.filter((e) => e.decision === 'sent')).toHaveLength(20);
    expect(log.filter((e) => e.decision === 'folded')).toHaveLength(280);
    const scraped = await withDatabase(s.t, (db) => new Metrics({ perAccount: true, accounts: ['default'], processDefaults: false, db }).registry.metrics());
    expect(scraped).toMatch(/^wallet_recon_notifications_total\{channel="webhook",decision="sent"\} 20$/m);
    expect(scraped).toMatch(/^wallet_recon_notifications_total\{channel="webhook",decision="folded"\} 280$/m);
  }, 300_000);

  it('a Slack message due inside RECON_QUIET_HOURS is held and delivered when the quiet ends; the webhook gets it at once', async () => {
    const slack = await startServer((_req, res) => void res.writeHead(200).end('ok'));
    servers.push(slack);
    const s = await setup([['EUR', 100_000n]], { RECON_SLACK_WEBHOOK_URL: `${slack.url}/services/T/B/x`, RECON_QUIET_HOURS: '22:00-07:00' });
    expect((await s.cli('snapshot')).code).toBe(0);
    const books = path.join(dir, 'books-quiet.csv');
    writeFileSync(books, `business_date,currency,balance\n${date},EUR,900.00\n`);
    expect((await s.cli('ledger', 'import', books)).code).toBe(0);
    expect((await s.cli('reconcile', '--date', date)).code).toBe(3);

    // Any other Slack message inside the quiet hours is held too (a missed date here), and told apart in notify log.
    const config = loadConfig({ env: s.env, ignoreDotEnv: true });
    const missed = { account: 'default', businessDate: date, cutoffAt: '2026-11-11T00:00:00.000Z', windowClosedAt: '2026-11-11T00:30:00.000Z', lastError: null, consecutiveMissedDates: 1 };
    await withDatabase(s.t, (db) => enqueueEvent(db, config, 'date.missed', missed, `date.missed:default:${date}`, s.clock.now()));
    await s.deliver();
    expect(eventsOf(s.webhook).filter((e) => e.type === 'problem.new')).toHaveLength(1);
    expect(eventsOf(s.webhook).filter((e) => e.type === 'date.missed')).toHaveLength(1);
    expect(slack.requests).toHaveLength(0);
    const log = JSON.parse((await s.cli('notify', 'log', '--json')).stdout) as Array<{ channel: string; decision: string; reason: string }>;
    expect(log.find((e) => e.channel === 'slack')).toMatchObject({ decision: 'quiet', reason: expect.stringContaining('until 2026-11-11T07:00:00.000Z') });

    s.clock.set('2026-11-11T06:59:00Z');
    await s.deliver();
    expect(slack.requests).toHaveLength(0);
    s.clock.set('2026-11-11T07:00:00Z');
    await s.deliver();
    // One folded message for Slack when the quiet ends, naming both.
    expect(slack.requests).toHaveLength(1);
    expect(slack.requests[0]!.body).toContain('2 messages held during quiet hours, in one');
    expect(slack.requests[0]!.body).toContain('New break on account');
    expect(slack.requests[0]!.body).toContain(`Account \\"default\\" missed business date ${date}`);
    const held = JSON.parse((await s.cli('notify', 'log', '--json')).stdout) as Array<{ event: string; channel: string; decision: string }>;
    expect(held.filter((e) => e.channel === 'slack').map((e) => [e.event, e.decision])).toEqual([['problem.new', 'quiet'], ['date.missed', 'quiet']]);
  }, 120_000);

  it('a 0.40 difference with RECON_MATERIALITY=1.00 is immaterial: no case, exit 0, nothing sent, notify log says why', async () => {
    const s = await setup([['EUR', 100_000n]], { RECON_MATERIALITY: '1.00' });
    expect((await s.cli('snapshot')).code).toBe(0);
    const books = path.join(dir, 'books-immaterial.csv');
    writeFileSync(books, `business_date,currency,balance\n${date},EUR,999.60\n`);
    expect((await s.cli('ledger', 'import', books)).code).toBe(0);
    const reconciled = await s.cli('reconcile', '--date', date);
    expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(0);
    const rows = await withDatabase(s.t, async (db) => ({
      results: await db.selectFrom('reconciliation_results').select(['status', 'difference']).execute(),
      cases: await db.selectFrom('reconciliation_cases').select('id').execute(),
    }));
    expect(rows.results.map((r) => [r.status, String(r.difference)])).toEqual([['immaterial', '40']]);
    expect(rows.cases).toEqual([]);
    await s.deliver();
    expect(eventsOf(s.webhook).filter((e) => e.type.startsWith('problem.'))).toEqual([]);
    const log = JSON.parse((await s.cli('notify', 'log', '--json')).stdout) as Array<{ decision: string; reason: string }>;
    expect(log).toEqual([expect.objectContaining({ decision: 'immaterial', currency: 'EUR', reason: expect.stringContaining('within materiality') })]);
  }, 120_000);
});
