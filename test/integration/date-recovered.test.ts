import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNight } from '../../jobs/nightly-job.js';
import { reconcileAfterSnapshot } from '../../jobs/reconcile-job.js';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import { FixedClock } from '../../src/clock.js';
import { businessCalendarOf } from '../../src/config/index.js';
import { enqueueEvent } from '../../src/notifications/outbox.js';
import { serviceOfSlot } from '../../src/scheduler/slot-schedule.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Notifications are written to the outbox only for configured channels; nothing delivers them here.
const CHANNELS = { RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hooks/recon', RECON_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
const SLOT = '2026-11-20T23:55:00Z';

/** A clock on which someone fixes the credentials (and captures by hand) while the worker waits to try again. */
class OperatorFixesWhileWorkerWaits extends FixedClock {
  fix: (() => Promise<unknown>) | undefined;
  override async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const fix = this.fix;
    this.fix = undefined;
    if (fix !== undefined) await fix();
    return super.sleep(ms, signal);
  }
}

let t: TestDatabase;
let sandbox: Sandbox;

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 2 });
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
});

describe(`date.recovered (${backend})`, () => {
  it('is queued once when a date announced at risk is captured after all inside its window, and the night counts it captured', async () => {
    const clock = new OperatorFixesWhileWorkerWaits(SLOT);
    const worker = createTestContext(t, sandboxEnv(sandbox, { ...CHANNELS, GATEWAY_API_SECRET: 'not-the-secret' }), { clock });
    const operator = createTestContext(t, sandboxEnv(sandbox, CHANNELS), { clock });
    clock.fix = () => runSnapshotJob(operator, { trigger: 'manual' });
    const result = await runNight(worker, { serve: serviceOfSlot(businessCalendarOf(worker.config), new Date(SLOT)), signal: new AbortController().signal, reconcile: reconcileAfterSnapshot });
    expect(result.accounts[0]).toMatchObject({ account: 'default', status: 'captured' });

    const outbox = await t.handle.db.selectFrom('notifications').select(['event_type', 'dedupe_key', 'payload']).orderBy('id').execute();
    expect(outbox.filter((n) => n.event_type === 'date.at_risk').map((n) => n.dedupe_key)).toEqual(['date.at_risk:default:2026-11-20']);
    const recovered = outbox.filter((n) => n.event_type === 'date.recovered');
    expect(recovered.map((n) => n.dedupe_key)).toEqual(['date.recovered:default:2026-11-20']);
    const run = await t.handle.db.selectFrom('snapshot_runs').select(['id']).where('status', '=', 'succeeded').where('end_of_day', '=', true).executeTakeFirstOrThrow();
    expect((recovered[0]!.payload as { data: unknown }).data).toEqual({ account: 'default', businessDate: '2026-11-20', capturedAt: expect.stringMatching(/^2026-11-2[01]T/), runId: run.id });
    // The at-risk event comes first, the all-clear after it.
    expect(outbox.map((n) => n.event_type).indexOf('date.at_risk')).toBeLessThan(outbox.map((n) => n.event_type).indexOf('date.recovered'));
  });

  it('is queued by a worker that starts after the risk was announced (a restart), once the date is captured', async () => {
    const slot = '2026-11-21T23:55:00Z';
    const clock = new FixedClock(slot);
    const ctx = createTestContext(t, sandboxEnv(sandbox, CHANNELS), { clock });
    // The worker before the restart announced the risk, then stopped.
    await enqueueEvent(t.handle.db, ctx.config, 'date.at_risk', { account: 'default', businessDate: '2026-11-21', windowClosesAt: '2026-11-22T03:00:00.000Z', reason: 'refused' }, 'date.at_risk:default:2026-11-21', clock.now());
    const result = await runNight(ctx, { serve: serviceOfSlot(businessCalendarOf(ctx.config), new Date(slot)), signal: new AbortController().signal, reconcile: reconcileAfterSnapshot });
    expect(result.accounts[0]).toMatchObject({ status: 'captured' });
    const recovered = await t.handle.db.selectFrom('notifications').select('dedupe_key').where('event_type', '=', 'date.recovered').execute();
    expect(recovered.map((n) => n.dedupe_key)).toContain('date.recovered:default:2026-11-21');
  });
});
