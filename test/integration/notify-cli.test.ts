import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { enqueueEvent } from '../../src/notifications/outbox.js';
import type { NotificationEvent } from '../../src/notifications/events.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { parseMail, startSmtpServer, type TestSmtpServer } from '../helpers/receivers.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServer, type TestServer } from '../helpers/with-server.js';

const SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;

let t: TestDatabase;
let sandbox: Sandbox;
let webhook: TestServer;
let brokenSlack: TestServer;
let pushgateway: TestServer;
let smtp: TestSmtpServer;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one process: the CLI opens it, this file reopens it to look.
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 3 });
  webhook = await startServer((_req, res) => void res.writeHead(200).end());
  brokenSlack = await startServer((_req, res) => void res.writeHead(404, { 'content-type': 'text/plain' }).end('no_service'));
  pushgateway = await startServer((_req, res) => void res.writeHead(200).end());
  smtp = await startSmtpServer();
  env = { ...t.childEnv, GATEWAY_ENV: 'sandbox', GATEWAY_SANDBOX_URL: sandbox.url, GATEWAY_API_KEY: sandbox.apiKey, GATEWAY_API_SECRET: sandbox.apiSecret, LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), webhook?.close(), brokenSlack?.close(), pushgateway?.close(), smtp?.close()]);
  await t?.drop();
});

describe(`wallet-recon notify (${backend})`, () => {
  it('masks every secret part of the configured URLs in what a failing receiver echoes: query, user info, Slack path', async () => {
    // Receivers that quote the request back in their error, as some gateways and proxies do.
    const echo = await startServer((req, res) => void res.writeHead(400, { 'content-type': 'text/plain' }).end(`bad request to ${req.url} auth=${req.headers.authorization ?? ''}`));
    try {
      const hookUrl = new URL(`${echo.url}/in?token=q-secret-token-42&team=x`);
      hookUrl.username = 'hookuser';
      hookUrl.password = 'hook-pass-99';
      const result = await runCliInProcess(['notify', 'test'], {
        ...env,
        RECON_WEBHOOK_URL: hookUrl.href,
        RECON_WEBHOOK_SECRET: SECRET,
        RECON_SLACK_WEBHOOK_URL: `${echo.url}/services/T0SECRET/B0SECRET/slackpathtoken`,
      });
      expect(result.code).toBe(1);
      const shown = result.stdout + result.stderr;
      for (const secret of ['q-secret-token-42', 'hookuser', 'hook-pass-99', 'aG9va3VzZXI6aG9vay1wYXNzLTk5', 'T0SECRET', 'B0SECRET', 'slackpathtoken']) expect(shown).not.toContain(secret);
      expect(shown).toMatch(/FAILED {2}webhook http:\/\/127\.0\.0\.1:\d+: The webhook http:\/\/127\.0\.0\.1:\d+ answered 400 \(bad request to \/in\?\[redacted\] auth=Basic \[redacted\]\): refused, not tried again\./);
      expect(shown).toContain('FAILED  Slack: Slack answered 400 (bad request to /services/[redacted] auth=): refused, not tried again.');
    } finally {
      await echo.close();
    }
  });

  it('sends a test event to every channel and reports each outcome: exit 1 when one failed', async () => {
    const result = await runCliInProcess(['notify', 'test'], {
      ...env,
      RECON_WEBHOOK_URL: `${webhook.url}/in`,
      RECON_WEBHOOK_SECRET: SECRET,
      RECON_SLACK_WEBHOOK_URL: `${brokenSlack.url}/services/secret-token`,
      RECON_SMTP_URL: smtp.url,
      RECON_MAIL_FROM: 'recon@example.test',
      RECON_MAIL_TO: 'finance@example.test',
    });
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^ok {6}webhook http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines[1]).toBe('FAILED  Slack: Slack answered 404 (no_service): refused, not tried again.');
    expect(lines[2]).toMatch(/^ok {6}e-mail via 127\.0\.0\.1:\d+ to finance@example\.test$/);
    expect(result.stderr).toMatch(/^2 of 3 channel\(s\) took the test event evt_[0-9a-f]{32}\. A test event is sent once and never queued: fix the failed channel and run notify test again\.$/);
    expect(result.stdout + result.stderr).not.toContain('secret-token');
    const request = webhook.requests.at(-1)!;
    const event = new Webhook(SECRET).verify(request.body, request.headers as Record<string, string>) as NotificationEvent;
    expect(event).toMatchObject({ type: 'notification.test', version: 1 });
    expect(parseMail(smtp.mails.at(-1)!.raw).headers.subject).toBe('[wallet-recon] wallet-recon test notification');
  });

  it('does not promise another attempt for a channel it could not reach: a test event is never queued', async () => {
    const gone = await startServer((_req, res) => void res.writeHead(200).end());
    const goneUrl = gone.url;
    await gone.close();
    const result = await runCliInProcess(['notify', 'test'], { ...env, RECON_WEBHOOK_URL: `${goneUrl}/in`, RECON_WEBHOOK_SECRET: SECRET });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAILED {2}webhook http:\/\/127\.0\.0\.1:\d+: .* could not be reached \(ECONNREFUSED\)\.$/);
    expect(result.stdout + result.stderr).not.toMatch(/tried again/);
    expect(result.stderr).toContain('A test event is sent once and never queued');
  });

  it('refuses to test when no channel is configured (exit 2), naming the variables', async () => {
    const result = await runCliInProcess(['notify', 'test'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No notification channel is configured: set RECON_WEBHOOK_URL');
  });

  it('lists the outbox, and only the failed rows with --status failed', async () => {
    const channelEnv = { ...env, RECON_WEBHOOK_URL: 'https://hooks.example.test/x', RECON_WEBHOOK_SECRET: SECRET };
    const config = loadConfig({ env: channelEnv, ignoreDotEnv: true });
    await withDatabase(t, async (db) => {
      await enqueueEvent(db, config, 'notification.test', { message: 'a' }, 'list:a', new Date('2026-11-21T07:00:00Z'));
      await enqueueEvent(db, config, 'notification.test', { message: 'b' }, 'list:b', new Date('2026-11-21T07:01:00Z'));
      await db.updateTable('notifications').set({ status: 'failed', attempts: 10, last_error: 'gave up after 10 attempts: The webhook answered 503.' }).where('dedupe_key', '=', 'list:b').execute();
    });
    const all = await runCliInProcess(['notify', 'list'], channelEnv);
    expect(all.code).toBe(0);
    expect(all.stdout.split('\n')).toHaveLength(3);
    const failed = await runCliInProcess(['notify', 'list', '--status', 'failed'], channelEnv);
    const rows = failed.stdout.split('\n');
    expect(rows[0]).toMatch(/^id +created +type +channel +status +attempts +next attempt \/ sent +last error$/);
    expect(rows.slice(1)).toEqual([expect.stringMatching(/2026-11-21 07:01:00 UTC +notification.test +webhook +failed +10 +gave up after 10 attempts: The webhook answered 503\.$/)]);
    const json = await runCliInProcess(['notify', 'list', '--status', 'pending', '--json'], channelEnv);
    expect(JSON.parse(json.stdout)).toMatchObject({ type: 'notification.test', channel: 'webhook', status: 'pending', attempts: 0, nextAttemptAt: '2026-11-21T07:00:00.000Z' });
    const bad = await runCliInProcess(['notify', 'list', '--status', 'lost'], channelEnv);
    expect(bad.code).toBe(2);
  }, 120_000);

  it('queues a failed notification again with notify retry ID; exit 2 naming the id when there is no such row or it is not failed', async () => {
    const channelEnv = { ...env, RECON_WEBHOOK_URL: 'https://hooks.example.test/x', RECON_WEBHOOK_SECRET: SECRET };
    const config = loadConfig({ env: channelEnv, ignoreDotEnv: true });
    const [failedId, sentId] = await withDatabase(t, async (db) => {
      await enqueueEvent(db, config, 'notification.test', { message: 'r' }, 'retry:failed', new Date('2026-11-21T07:00:00Z'));
      await enqueueEvent(db, config, 'notification.test', { message: 's' }, 'retry:sent', new Date('2026-11-21T07:00:00Z'));
      await db.updateTable('notifications').set({ status: 'failed', attempts: 10, last_error: 'gave up after 10 attempts: The webhook answered 503.' }).where('dedupe_key', '=', 'retry:failed').execute();
      await db.updateTable('notifications').set({ status: 'sent', attempts: 1, sent_at: new Date('2026-11-21T07:00:05Z') }).where('dedupe_key', '=', 'retry:sent').execute();
      const rows = await db.selectFrom('notifications').select(['id', 'dedupe_key']).where('dedupe_key', 'in', ['retry:failed', 'retry:sent']).orderBy('dedupe_key').execute();
      return [rows[0]!.id, rows[1]!.id];
    });

    const retried = await runCliInProcess(['notify', 'retry', failedId], channelEnv);
    expect(retried.code).toBe(0);
    expect(retried.stdout).toBe(
      `Notification ${failedId} (notification.test to webhook) queued again: it had failed after 10 attempts (gave up after 10 attempts: The webhook answered 503.). The worker sends it on its next pass.`,
    );
    const row = await withDatabase(t, (db) => db.selectFrom('notifications').selectAll().where('id', '=', failedId).executeTakeFirstOrThrow());
    expect(row).toMatchObject({ status: 'pending', attempts: 0, locked_until: null, lease_token: null });

    const again = await runCliInProcess(['notify', 'retry', failedId], channelEnv);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`Notification ${failedId} (notification.test to webhook) is not failed: it is still pending`);
    const sent = await runCliInProcess(['notify', 'retry', sentId], channelEnv);
    expect(sent.code).toBe(2);
    expect(sent.stderr).toContain(`Notification ${sentId} (notification.test to webhook) is not failed: it was already sent at 2026-11-21 07:00 UTC`);
    const missing = await runCliInProcess(['notify', 'retry', '999999'], channelEnv);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('There is no notification 999999.');
    const bad = await runCliInProcess(['notify', 'retry', 'abc'], channelEnv);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('notify retry needs the id of a notification, a whole number such as 42 (got "abc")');
    // Six commands, each opening the embedded database afresh: more than the default 30 s on a busy machine.
  }, 120_000);

  it('pushes a one-shot snapshot\'s metrics to the Pushgateway with pushAdd (POST) under its job', async () => {
    const result = await runCliInProcess(['snapshot'], { ...env, RECON_PUSHGATEWAY_URL: `${pushgateway.url}/` });
    expect(result.code, result.stderr).toBe(0);
    expect(pushgateway.requests.map((r) => [r.method, r.path])).toEqual([['POST', '/metrics/job/wallet_recon_snapshot']]);
    const body = pushgateway.requests[0]!.body;
    expect(body).toMatch(/^wallet_recon_runs_total\{trigger="manual",status="succeeded"\} 1$/m);
    expect(body).toMatch(/^wallet_recon_last_success_timestamp_seconds\{account="default"\} \d+(\.\d+)?$/m);
    // Process metrics are the worker's business, not a batch job's.
    expect(body).not.toContain('process_cpu');
  });
});
