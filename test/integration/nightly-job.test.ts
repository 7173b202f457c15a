import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runNightlyJob, slotNeedsCatchUp } from '../../jobs/nightly-job.js';
import { FixedClock } from '../../src/clock.js';
import type { CronDriver } from '../../src/scheduler/cron-driver.js';
import { createScheduler } from '../../src/scheduler/scheduler.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let sandbox: Sandbox;
const slot = new Date('2026-11-20T23:55:00Z');

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 5 });
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
});
beforeEach(async () => {
  await t.handle.db.deleteFrom('balance_snapshots').execute();
  await t.handle.db.deleteFrom('snapshot_runs').execute();
});

const neverFiring: CronDriver = {
  start: () => ({ stop: () => undefined, nextRun: () => new Date('2026-11-21T23:55:00Z') }),
  previousSlot: () => slot,
};

describe(`nightly job and scheduler on the ${backend} database`, () => {
  it('catches up a missed slot at start, and a second replica arriving later does not capture it again', async () => {
    const clock = new FixedClock('2026-11-21T07:00:00Z');
    const ctx = createTestContext(t, sandboxEnv(sandbox), { clock });
    expect(await slotNeedsCatchUp(ctx, slot)).toBe(true);

    const replica = () =>
      createScheduler({
        expression: '55 23 * * *',
        timezone: 'UTC',
        clock,
        logger: ctx.logger,
        driver: neverFiring,
        catchUp: true,
        needsCatchUp: (s) => slotNeedsCatchUp(ctx, s),
        runTick: async (s, signal) => void (await runNightlyJob(ctx, { slot: s, signal })),
      });
    const first = replica();
    await first.start();
    await first.idle();
    expect(await slotNeedsCatchUp(ctx, slot)).toBe(false);

    const second = replica();
    await second.start();
    await second.idle();
    // Even a tick that fires anyway skips the captured slot.
    const again = await runNightlyJob(ctx, { slot, signal: new AbortController().signal });
    expect(again.accounts[0]).toMatchObject({ status: 'skipped', skipReason: 'already-captured' });
    expect(again.exitCode).toBe(0);

    const runs = await t.handle.db.selectFrom('snapshot_runs').selectAll().execute();
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ trigger: 'schedule', status: 'succeeded', business_date: '2026-11-21' });
    expect(runs[0]!.slot).toEqual(slot);
  });

  it('logs at error level on every tick once an account has failed too many nights in a row', async () => {
    const logs = captureLogs();
    const ctx = createTestContext(t, { ...sandboxEnv(sandbox), GATEWAY_API_SECRET: 'wrong', RECON_MAX_CONSECUTIVE_FAILURES: '2' }, { logger: logs.logger });
    const nights = ['2026-11-18', '2026-11-19', '2026-11-20'].map((d) => new Date(`${d}T23:55:00Z`));
    for (const night of nights) await runNightlyJob(ctx, { slot: night, signal: new AbortController().signal });
    const alarms = logs.lines().filter((l) => l.level === 50 && /failed \d+ scheduled nights in a row/.test(String(l.msg)));
    expect(alarms.map((l) => l.consecutiveFailures)).toEqual([2, 3]);
  });

  it('reconciles each captured account after the snapshot', async () => {
    const ctx = createTestContext(t, sandboxEnv(sandbox), { clock: new FixedClock('2026-11-21T07:00:00Z') });
    const reconciled: string[] = [];
    await runNightlyJob(ctx, {
      slot,
      signal: new AbortController().signal,
      reconcile: async (_ctx, account, date) => void reconciled.push(`${account}@${date}`),
    });
    expect(reconciled).toEqual(['default@2026-11-21']);
  });
});
