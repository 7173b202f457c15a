import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { systemClock } from '../../src/clock.js';
import {
  claimNextNotification,
  listNotifications,
  markNotificationFailed,
  markNotificationSent,
  renewNotificationLease,
} from '../../src/db/notification.repository.js';
import { Deliverer } from '../../src/notifications/deliverer.js';
import { createChannels } from '../../src/notifications/create-channels.js';
import { enqueueEvent } from '../../src/notifications/outbox.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServer, type TestServer } from '../helpers/with-server.js';

/**
 * Given replicas that deliver the same outbox and a receiver slower than a claim's lease, each
 * event reaches the receiver exactly once, and a sender whose lease was taken over cannot write
 * its late outcome over the one the new holder recorded.
 */

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const TOKEN_A = '00000000-0000-4000-8000-00000000000a';
const TOKEN_B = '00000000-0000-4000-8000-00000000000b';

let t: TestDatabase;
let receiver: TestServer;
/** How the receiver answers each request, in arrival order; once empty, 204 after `slowMs`. */
let answers: Array<() => Promise<number>> = [];
let slowMs = 0;

beforeAll(async () => {
  t = await createTestDatabase();
  receiver = await startServer(async (_req, res) => {
    const next = answers.shift();
    const status = next === undefined ? await new Promise<number>((resolve) => setTimeout(() => resolve(204), slowMs)) : await next();
    res.writeHead(status).end();
  });
});
afterAll(async () => {
  await receiver?.close();
  await t?.drop();
});
beforeEach(async () => {
  await t.handle.db.deleteFrom('notifications').execute();
  receiver.requests.length = 0;
  answers = [];
  slowMs = 0;
});

/** A webhook-only context whose claims last `lease` (RECON_NOTIFY_LEASE), on the real clock: leases run out in real time. */
function contextWithLease(lease: string): AppContext {
  return createTestContext(t, {
    GATEWAY_ENV: 'sandbox',
    GATEWAY_SANDBOX_URL: 'http://127.0.0.1:9',
    GATEWAY_API_KEY: 'k',
    GATEWAY_API_SECRET: 's',
    RECON_WEBHOOK_URL: `${receiver.url}/in`,
    RECON_WEBHOOK_SECRET: SECRET,
    RECON_NOTIFY_LEASE: lease,
  });
}

function delivererOf(ctx: AppContext, logs = captureLogs()): Deliverer {
  const channels = createChannels(ctx.config, t.handle.db, () => systemClock.now());
  return new Deliverer({ db: t.handle.db, clock: systemClock, logger: logs.logger, channels, maxAttempts: ctx.config.notifications.maxAttempts, leaseMs: ctx.config.notifications.leaseMs, pollMs: 50 });
}

const outbox = () => t.handle.db.selectFrom('notifications').selectAll().orderBy('id').execute();

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting until ${what}`);
}

describe(`outbox leases and fencing on ${backend}`, () => {
  it('two deliverers and a receiver slower than the lease: each event is received exactly once', async () => {
    const ctx = contextWithLease('400ms');
    expect(ctx.config.notifications.leaseMs).toBe(400);
    const now = new Date();
    for (let i = 0; i < 4; i++) await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: `slow ${i}` }, `slow:${i}`, now);
    // Three times the lease per answer: without renewal, every claim would run out while it sends.
    slowMs = 1_200;
    const stop = new AbortController();
    const [a, b] = [delivererOf(ctx), delivererOf(ctx)];
    const running = Promise.all([a.run(stop.signal), b.run(stop.signal)]);
    await until(async () => (await listNotifications(t.handle.db, { status: 'pending', limit: 10 })).length === 0, 'no row is pending');
    stop.abort();
    await running;

    const ids = receiver.requests.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect((await outbox()).map((r) => [r.dedupe_key, r.status, r.attempts, r.lease_token])).toEqual([
      ['slow:0', 'sent', 1, null],
      ['slow:1', 'sent', 1, null],
      ['slow:2', 'sent', 1, null],
      ['slow:3', 'sent', 1, null],
    ]);
  });

  it('a sender whose lease was taken over cannot write its late "failed" over the new holder\'s "sent"', async () => {
    const ctx = contextWithLease('2m');
    await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'stolen' }, 'stolen:1', new Date());
    // The first sender's request hangs until the test lets it end, refused (400: failed for good).
    let refuse!: () => void;
    const refused = new Promise<number>((resolve) => (refuse = () => resolve(400)));
    answers = [() => refused];
    const logsA = captureLogs();
    const first = delivererOf(ctx, logsA).deliverDue();
    await until(async () => receiver.requests.length === 1, 'the first sender is sending');

    // Its process freezes past its lease (made to run out here), and another replica claims the row and delivers it.
    await t.handle.db.updateTable('notifications').set({ locked_until: new Date(Date.now() - 1_000) }).execute();
    expect(await delivererOf(ctx).deliverDue()).toEqual({ sent: 1, retried: 0, failed: 0 });
    refuse();

    expect(await first).toEqual({ sent: 0, retried: 0, failed: 0, lost: 1 });
    expect(receiver.requests).toHaveLength(2);
    expect((await outbox()).map((r) => [r.status, r.attempts, r.last_error, r.locked_until])).toEqual([['sent', 2, null, null]]);
    expect(logsA.text()).toContain('its lease ran out while it was being sent and another sender claimed it');
  });

  it('writes an outcome or renews a lease only under the token of the current claim', async () => {
    const ctx = contextWithLease('2m');
    await enqueueEvent(t.handle.db, ctx.config, 'notification.test', { message: 'fenced' }, 'fenced:1', new Date());
    const at = new Date();
    const claimedA = await claimNextNotification(t.handle.db, at, new Date(at.getTime() + 1_000), TOKEN_A);
    expect(claimedA?.lease_token).toBe(TOKEN_A);
    // Not claimable while A's lease runs; claimable once it has run out, under a new token.
    expect(await claimNextNotification(t.handle.db, at, new Date(at.getTime() + 1_000), TOKEN_B)).toBeUndefined();
    const later = new Date(at.getTime() + 1_000);
    const claimedB = await claimNextNotification(t.handle.db, later, new Date(later.getTime() + 1_000), TOKEN_B);
    expect(claimedB).toMatchObject({ id: claimedA!.id, attempts: 2, lease_token: TOKEN_B });

    const a = { id: claimedA!.id, token: TOKEN_A };
    const b = { id: claimedA!.id, token: TOKEN_B };
    expect(await renewNotificationLease(t.handle.db, a, new Date(later.getTime() + 60_000))).toBe(false);
    expect(await markNotificationFailed(t.handle.db, a, 'late failure')).toBe(false);
    expect(await markNotificationSent(t.handle.db, b, later)).toBe(true);
    expect(await markNotificationFailed(t.handle.db, a, 'later still')).toBe(false);
    expect(await markNotificationFailed(t.handle.db, b, 'after sent')).toBe(false);
    expect((await outbox()).map((r) => [r.status, r.last_error, r.sent_at?.getTime()])).toEqual([['sent', null, later.getTime()]]);
  });
});
