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
import { buildNightDigest } from '../../src/notifications/night-digest.js';
import { renderEventText } from '../../src/notifications/render-event.js';
import { createEvent } from '../../src/notifications/events.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServer, type TestServer } from '../helpers/with-server.js';

// Issue 45: a problem is announced when it is new, changed, aging or cleared; a repeat is counted, not sent.
const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
let t: TestDatabase;
let sandbox: Sandbox;
let webhook: TestServer;
let dir: string;
let env: Record<string, string>;
const clock = new FixedClock('2026-11-02T00:30:00Z');
const dates = ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04', '2026-11-05', '2026-11-06', '2026-11-07', '2026-11-08', '2026-11-09'];
const nextDay = (d: string) => new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
const cli = (...args: string[]) => runCliInProcess(args, env, { clock });
/** The night's digest of `date` as the worker writes it: the change list, and its text for e-mail. */
const digestOf = (date: string) =>
  withDatabase(t, async (db) => {
    const cutoffAt = new Date(`${nextDay(date)}T00:00:00Z`);
    const data = await buildNightDigest(db, { businessDate: date, slot: cutoffAt, cutoffAt, accounts: [{ account: 'default', status: 'captured' }], at: clock.now() });
    return { changes: data.changes!, text: renderEventText(createEvent('night.completed', clock.now(), data)) };
  });

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 0 });
  sandbox.addWallet('EUR', 100_000n);
  webhook = await startServer((_req, res) => void res.writeHead(200).end());
  dir = mkdtempSync(path.join(tmpdir(), 'wr-problems-'));
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_WEBHOOK_URL: `${webhook.url}/in`, RECON_WEBHOOK_SECRET: SECRET };
});
afterAll(async () => {
  await Promise.all([sandbox?.close(), webhook?.close()]);
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Captures `date`, imports books `books` EUR (the gateway holds 1000.00) and reconciles it. */
async function night(date: string, books: string): Promise<number> {
  clock.set(`${nextDay(date)}T00:30:00Z`);
  const captured = await cli('snapshot');
  expect(captured.code, captured.stdout + captured.stderr).toBe(0);
  const file = path.join(dir, `books-${date}.csv`);
  writeFileSync(file, `business_date,currency,balance\n${date},EUR,${books}\n`);
  const imported = await cli('ledger', 'import', file);
  expect(imported.code, imported.stdout + imported.stderr).toBe(0);
  return (await cli('reconcile', '--date', date)).code;
}

/** Sends what the outbox holds to the webhook; returns the event types delivered by this pass. */
async function deliver(): Promise<NotificationEvent[]> {
  const before = webhook.requests.length;
  const config = loadConfig({ env, ignoreDotEnv: true });
  await withDatabase(t, async (db) => {
    const deliverer = new Deliverer({ db, clock, logger: createSilentLogger(), channels: createChannels(config, undefined, () => clock.now()), maxAttempts: 3 });
    await deliverer.deliverDue();
  });
  return webhook.requests.slice(before).map((r) => JSON.parse(r.body) as NotificationEvent);
}

describe(`problem notifications (${backend})`, () => {
  it('the same EUR break of 100.00 on five dates sends one problem.new; 250.00 on the sixth one problem.changed; notify log says why', async () => {
    const sent: NotificationEvent[] = [];
    for (const date of dates.slice(0, 5)) {
      expect(await night(date, '900.00')).toBe(3);
      sent.push(...(await deliver()));
    }
    const problems = sent.filter((e) => e.type.startsWith('problem.'));
    expect(problems.filter((e) => e.type === 'problem.new')).toHaveLength(1);
    expect(problems.filter((e) => e.type === 'problem.changed')).toHaveLength(0);
    const first = problems.find((e) => e.type === 'problem.new')!;
    expect(first.data).toEqual({
      account: 'default',
      source: 'gateway',
      currency: 'EUR',
      kind: 'break',
      fingerprint: expect.stringMatching(/^prb_[0-9a-f]{16}$/),
      businessDate: dates[0],
      amount: '100.00',
      previousAmount: null,
      ageDays: 0,
    });
    // Crossing into the 2-7 day bucket on the third date is an aging notice, nothing else.
    expect(problems.filter((e) => e.type !== 'problem.new').map((e) => [e.type, (e.data as { ageDays: number }).ageDays])).toEqual([['problem.aging', 2]]);

    expect(await night(dates[5]!, '750.00')).toBe(3);
    const sixth = (await deliver()).filter((e) => e.type.startsWith('problem.'));
    expect(sixth.map((e) => e.type)).toEqual(['problem.changed']);
    expect(sixth[0]!.data).toMatchObject({ fingerprint: (first.data as { fingerprint: string }).fingerprint, amount: '250.00', previousAmount: '100.00', ageDays: 5, businessDate: dates[5] });

    const log = await cli('notify', 'log', '--json');
    expect(log.code, log.stderr).toBe(0);
    const entries = JSON.parse(log.stdout) as Array<Record<string, string>>;
    expect(entries.filter((e) => e.decision === 'repeat').map((e) => e.business_date)).toEqual([dates[1], dates[3], dates[4]]);
    expect(entries.find((e) => e.event === 'problem.changed')).toMatchObject({ business_date: dates[5], account: 'default', currency: 'EUR', channel: 'webhook', decision: 'sent' });
    // The digest of the sixth date reads as a change list: the break changed, in major units with its currency.
    const sixthDigest = await digestOf(dates[5]!);
    expect(sixthDigest.changes.counts).toMatchObject({ new: 0, changed: 1, stillOpen: 0, snoozed: 0, cleared: 0, immaterial: 0, explained: 0 });
    expect(sixthDigest.changes.accounts).toEqual([expect.objectContaining({ account: 'default', source: 'gateway', changed: [expect.objectContaining({ kind: 'break', currency: 'EUR', amount: '250.00', previousAmount: '100.00', ageDays: 5 })] })]);
    expect(sixthDigest.text).toContain('What changed: 0 new, 1 changed, 0 still open, 0 snoozed, 0 cleared; 0 immaterial (counted, no case), 0 explained by reconciling items.');
    expect(sixthDigest.text).toMatch(/changed: break EUR 250\.00, was EUR 100\.00, open 5 days, case #\d+/);
    const fifthDigest = await digestOf(dates[4]!);
    expect(fifthDigest.changes.accounts[0]!.stillOpen).toEqual([expect.objectContaining({ amount: '100.00', ageDays: 4, firstDate: dates[0] })]);
    const occurrences = await withDatabase(t, (db) => db.selectFrom('problems').select(['occurrences', 'state']).executeTakeFirstOrThrow());
    expect(occurrences).toEqual({ occurrences: 6, state: 'open' });
  }, 600_000);

  it('cases snooze needs a note (exit 2); snoozed until the ninth date, the seventh and eighth send nothing although the break stays', async () => {
    const caseId = String((await withDatabase(t, (db) => db.selectFrom('reconciliation_cases').select('id').executeTakeFirstOrThrow())).id);
    const noNote = await cli('cases', 'snooze', caseId, '--until', dates[8]!);
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toContain('cases snooze needs --note TEXT');
    const snoozed = await cli('cases', 'snooze', caseId, '--until', dates[8]!, '--note', 'bank corrects it on the ninth', '--by', 'ana');
    expect(snoozed.code, snoozed.stderr).toBe(0);
    expect(snoozed.stdout).toContain(`snoozed until ${dates[8]}`);
    const events = await withDatabase(t, (db) => db.selectFrom('case_events').select(['actor', 'note']).where('case_id', '=', Number(caseId)).where('action', '=', 'noted').execute());
    expect(events).toEqual([{ actor: 'ana', note: `snoozed until ${dates[8]}: bank corrects it on the ninth` }]);

    for (const date of dates.slice(6, 8)) {
      expect(await night(date, '750.00')).toBe(3);
      expect((await deliver()).filter((e) => e.type.startsWith('problem.'))).toEqual([]);
    }
    // The digest lists it as snoozed, with its end and note.
    const seventh = await digestOf(dates[7]!);
    expect(seventh.changes.accounts[0]!.snoozed).toEqual([expect.objectContaining({ amount: '250.00', snoozedUntil: dates[8], snoozeNote: 'bank corrects it on the ninth' })]);
    expect(seventh.text).toContain(`snoozed until ${dates[8]} (bank corrects it on the ninth)`);
    const log = JSON.parse((await cli('notify', 'log', '--date', dates[7]!, '--json')).stdout) as Array<Record<string, string>>;
    expect(log).toEqual([expect.objectContaining({ event: 'problem.repeat', business_date: dates[7], decision: 'snoozed', reason: expect.stringContaining('bank corrects it on the ninth') })]);
  }, 600_000);
});
