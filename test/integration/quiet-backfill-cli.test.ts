import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/index.js';
import { createSilentLogger } from '../../src/logger.js';
import { createChannels } from '../../src/notifications/create-channels.js';
import { Deliverer } from '../../src/notifications/deliverer.js';
import type { NotificationEvent } from '../../src/notifications/events.js';
import type { ProblemFoldedData } from '../../src/notifications/problems/problem-events.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServer, type TestServer } from '../helpers/with-server.js';

// Issue 45: a backfill (and an import of several past dates) is recorded in full but announced in one summary.
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
let t: TestDatabase;
let sandbox: Sandbox;
let webhook: TestServer;
let dir: string;
let env: Record<string, string>;
const clock = new FixedClock('2026-11-21T04:00:00Z');
const cli = (...args: string[]) => runCliInProcess(args, env, { clock });
const dates = Array.from({ length: 10 }, (_, i) => `2026-11-${String(i + 1).padStart(2, '0')}`);

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 0 });
  sandbox.addWallet('EUR', 100_000n);
  webhook = await startServer((_req, res) => void res.writeHead(200).end());
  dir = mkdtempSync(path.join(tmpdir(), 'wr-quiet-backfill-'));
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_WEBHOOK_URL: `${webhook.url}/in`, RECON_WEBHOOK_SECRET: SECRET };
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), webhook?.close()]);
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends what the outbox holds to the webhook; returns the events delivered by this pass. */
async function deliver(): Promise<NotificationEvent[]> {
  const before = webhook.requests.length;
  const config = loadConfig({ env, ignoreDotEnv: true });
  await withDatabase(t, (db) => new Deliverer({ db, clock, logger: createSilentLogger(), channels: createChannels(config, undefined, () => clock.now()), maxAttempts: 3 }).deliverDue());
  return webhook.requests.slice(before).map((r) => JSON.parse(r.body) as NotificationEvent);
}

describe(`quiet backfills (${backend})`, () => {
  it('a backfill of ten past dates without books sends one summary with its range and counts, never a books.missing per date; the outbox keeps every event', async () => {
    const statements = path.join(dir, 'statements.csv');
    writeFileSync(statements, `business_date,currency,balance\n${dates.map((d) => `${d},EUR,100000`).join('\n')}\n`);
    const filled = await cli('backfill', '--from', dates[0]!, '--to', dates[9]!, '--import', statements);
    expect(filled.code, filled.stdout + filled.stderr).toBe(3);

    const sent = await deliver();
    expect(sent.map((e) => e.type)).toEqual(['problem.folded']);
    const summary = sent[0]!.data as ProblemFoldedData;
    expect(summary).toMatchObject({ channel: 'webhook', businessDate: null, reason: 'backfill', range: { from: dates[0], to: dates[9] }, more: 0 });
    expect(summary.counts).toMatchObject({ 'books.missing': 10, 'problem.new': 1 });
    expect(summary.count).toBe(Object.values(summary.counts!).reduce((a, b) => a + b, 0));
    expect(summary.problems[0]).toMatchObject({ type: 'problem.new', account: 'default', kind: 'no_books', businessDate: dates[0] });

    const outbox = await withDatabase(t, (db) => db.selectFrom('notifications').select(['event_type', 'status']).where('event_type', '=', 'books.missing').execute());
    expect(outbox).toHaveLength(10);
    expect(new Set(outbox.map((r) => r.status))).toEqual(new Set(['folded']));
    const log = JSON.parse((await cli('notify', 'log', '--date', dates[4]!, '--json')).stdout) as Array<{ event: string; decision: string; reason: string }>;
    expect(log.find((e) => e.event === 'books.missing')).toMatchObject({ decision: 'folded', reason: `folded into the one summary of the backfill of ${dates[0]} to ${dates[9]}` });
    const results = await withDatabase(t, (db) => db.selectFrom('reconciliation_results').select('status').distinct().execute());
    expect(results.map((r) => r.status)).toEqual(['no_books']);
  }, 300_000);

  it('books of five past dates in one import are announced in one summary too; a reconcile of one date later announces as usual', async () => {
    const books = path.join(dir, 'books.csv');
    writeFileSync(books, `business_date,currency,balance\n${dates.slice(0, 5).map((d) => `${d},EUR,900.00`).join('\n')}\n`);
    const imported = await cli('ledger', 'import', books);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const sent = await deliver();
    expect(sent.map((e) => e.type)).toEqual(['problem.folded']);
    const summary = sent[0]!.data as ProblemFoldedData;
    expect(summary).toMatchObject({ reason: 'books import', range: { from: dates[0], to: dates[4] } });
    expect(summary.counts).toMatchObject({ 'problem.new': 1 });
    expect(summary.problems.find((p) => p.type === 'problem.new')).toMatchObject({ kind: 'break', currency: 'EUR', amount: '100.00' });

    // One date's books alone are the usual daily flow: announced on their own.
    const one = path.join(dir, 'books-one.csv');
    writeFileSync(one, `business_date,currency,balance\n${dates[5]},EUR,500.00\n`);
    expect((await cli('ledger', 'import', one)).code).toBe(0);
    const daily = (await deliver()).map((e) => e.type);
    expect(daily).toContain('problem.changed');
    expect(daily).not.toContain('problem.folded');
  }, 300_000);
});
