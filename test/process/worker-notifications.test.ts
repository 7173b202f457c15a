import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NightCompletedData, NotificationEvent } from '../../src/notifications/events.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { parseMail, parsePrometheus, samplesOf, startSmtpServer, type TestSmtpServer } from '../helpers/receivers.js';
import { collect, spawnCli } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServer, type TestServer } from '../helpers/with-server.js';

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

let t: TestDatabase;
let sandbox: Sandbox;
let webhook: TestServer;
let smtp: TestSmtpServer;
let answers = 0;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 4 });
  // Down for the first attempt (asking for a second's pause), then up.
  webhook = await startServer((_req, res) => void (answers++ === 0 ? res.writeHead(503, { 'retry-after': '1' }).end() : res.writeHead(204).end()));
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), webhook?.close(), smtp?.close()]);
  await t?.drop();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe(`the schedule worker tells people (${backend})`, () => {
  it('after its slot: one signed night.completed webhook despite a receiver down at first, one e-mail with the report, the last success on /metrics', async () => {
    // A slot a minute ago with its cut-off at the same time: its window (±1 h) is open, so the worker resumes it at once.
    const slot = new Date(Date.now() - 60_000);
    const hh = String(slot.getUTCHours()).padStart(2, '0');
    const mm = String(slot.getUTCMinutes()).padStart(2, '0');
    const port = await freePort();
    const child = spawnCli(['schedule'], {
      ...t.childEnv,
      GATEWAY_ENV: 'sandbox',
      GATEWAY_SANDBOX_URL: sandbox.url,
      GATEWAY_API_KEY: sandbox.apiKey,
      GATEWAY_API_SECRET: sandbox.apiSecret,
      LOG_LEVEL: 'info',
      RECON_SCHEDULE: `${mm} ${hh} * * *`,
      RECON_CUTOFF: `${hh}:${mm}`,
      RECON_CAPTURE_WINDOW: '1h',
      RECON_WEBHOOK_URL: `${webhook.url}/in`,
      RECON_WEBHOOK_SECRET: SECRET,
      RECON_SMTP_URL: smtp.url,
      RECON_MAIL_FROM: 'recon@example.test',
      RECON_MAIL_TO: 'finance@example.test,ops@example.test',
      RECON_METRICS_PORT: String(port),
    });
    const done = collect(child);
    let metrics: ReturnType<typeof parsePrometheus> = [];
    try {
      await waitFor(() => webhook.requests.length >= 2 && smtp.mails.length >= 1);
      metrics = parsePrometheus(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);

      const delivered = webhook.requests[1]!;
      const event = new Webhook(SECRET).verify(delivered.body, delivered.headers as Record<string, string>) as NotificationEvent<NightCompletedData>;
      expect(delivered.headers['webhook-id']).toBe(webhook.requests[0]!.headers['webhook-id']);
      expect(event.type).toBe('night.completed');
      expect(event.data.accounts).toEqual([expect.objectContaining({ account: 'default', status: 'captured', wallets: 4, reconciliation: expect.objectContaining({ awaiting_books: 4 }) })]);
      expect(event.data.pending).toEqual([{ account: 'default', state: 'awaiting_books', message: `books for ${event.data.businessDate} not imported yet` }]);

      expect(smtp.mails.map((m) => m.to)).toEqual([['finance@example.test', 'ops@example.test']]);
      const attachment = parseMail(smtp.mails[0]!.raw).parts.find((p) => p.headers['content-disposition']?.startsWith('attachment'));
      expect(attachment?.headers['content-disposition']).toContain(`filename=reconciliation-${event.data.businessDate}.html`);
    } finally {
      child.kill('SIGTERM');
    }
    const result = await done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toContain(SECRET.slice(6));
    const rows = await withDatabase(t, (db) => db.selectFrom('notifications').select(['channel', 'status', 'attempts']).orderBy('id').execute());
    expect(rows).toEqual([
      { channel: 'webhook', status: 'sent', attempts: 2 },
      { channel: 'email', status: 'sent', attempts: 1 },
    ]);
    expect(webhook.requests).toHaveLength(2);
    // Scraped while the worker ran: the run's own end, to the millisecond.
    const run = await withDatabase(t, (db) => db.selectFrom('snapshot_runs').select(['finished_at']).where('status', '=', 'succeeded').executeTakeFirstOrThrow());
    expect(samplesOf(metrics, 'wallet_recon_last_success_timestamp_seconds', { account: 'default' }).map((s) => s.value)).toEqual([run.finished_at!.getTime() / 1000]);
  });
});
