import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let env: Record<string, string>;
const clock = new FixedClock('2026-11-16T23:58:00Z');

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  await serveToCommands(t);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-items-cli-'));
  env = {
    DATABASE_URL: '',
    ...t.childEnv,
    GATEWAY_API_KEY: 'k',
    GATEWAY_API_SECRET: 's',
    LOG_LEVEL: 'silent',
    RECON_TIMEZONE: 'UTC',
    RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hooks/recon',
    RECON_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  };
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (...args: string[]) => runCliInProcess(args, env, { clock });

/** The clock just after a date's cut-off: the next business date has begun. */
const afterCutoffOf = (date: string) => new Date(new Date(`${date}T00:00:00Z`).getTime() + 86_400_000 + 60_000).toISOString();

/** One business date: the gateway holds `gateway` cents of EUR at its end, the books say 100000. */
async function capturedDay(businessDate: string, gateway: bigint): Promise<void> {
  clock.set(`${businessDate}T23:58:00Z`);
  await withDb(async (db) => {
    const at = new Date(`${businessDate}T23:55:00Z`);
    const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
    await insertSnapshotRows(db, runId, 'default', at, [{ currency: 'EUR', balance: gateway, singleBalance: gateway }]);
    await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 2 });
  });
  const books = path.join(dir, `books-${businessDate}.csv`);
  writeFileSync(books, `business_date,currency,balance\n${businessDate},EUR,100000\n`);
  const imported = await cli('ledger', 'import', '--amounts', 'minor', books);
  expect(imported.code, imported.stderr).toBe(0);
  clock.set(afterCutoffOf(businessDate));
}

const results = (date: string) =>
  withDb((db) => db.selectFrom('reconciliation_results').select(['status', 'difference', 'items_total', 'unexplained', 'case_id', 'note']).where('business_date', '=', date).where('currency', '=', 'EUR').executeTakeFirstOrThrow());
const overdueEvents = () => withDb((db) => db.selectFrom('notifications').select(['event_type', 'payload']).where('event_type', '=', 'item.overdue').execute());

interface ItemJson {
  id: number;
  kind: string;
  amount: string;
  amount_major: string;
  state: string;
  age_days: number;
  expected_clear: string | null;
}

describe(`wallet-recon items: a gateway difference explained by an item in transit (${backend})`, { timeout: 180_000 }, () => {
  it('a 123.45 break becomes explained by an in-transit item, its case resolves as explained, and once the item is past its expected clearing date one item.overdue and one case appear', async () => {
    await capturedDay('2026-11-16', 112_345n);
    const broken = await cli('reconcile', '--date', '2026-11-16');
    expect(broken.code, broken.stderr).toBe(3);
    const breakCase = (await results('2026-11-16')).case_id;
    expect(breakCase).not.toBeNull();

    // A note is required; a kind of item people do not add is refused: exit 2, nothing written.
    const noNote = await cli('items', 'add', '--account', 'default', '--currency', 'EUR', '--date', '2026-11-16', '--kind', 'in_transit', '--amount', '123.45', '--expected-clear', '2026-11-18');
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toContain('--note is required');
    const badKind = await cli('items', 'add', '--account', 'default', '--currency', 'EUR', '--date', '2026-11-16', '--kind', 'outstanding', '--amount', '123.45', '--note', 'x');
    expect(badKind.code).toBe(2);
    const badAmount = await cli('items', 'add', '--account', 'default', '--currency', 'EUR', '--date', '2026-11-16', '--kind', 'in_transit', '--amount', '123.456', '--note', 'x');
    expect(badAmount.code).toBe(2);
    expect(badAmount.stderr).toContain('at most 2 decimals');

    const added = await cli('items', 'add', '--account', 'default', '--currency', 'EUR', '--date', '2026-11-16', '--kind', 'in_transit', '--amount', '123.45', '--expected-clear', '2026-11-18', '--note', 'payout PO-881 in transit', '--by', 'anna');
    expect(added.code, added.stderr).toBe(0);
    const itemId = Number(added.stdout.trim());
    expect(itemId).toBeGreaterThan(0);

    expect(await results('2026-11-16')).toMatchObject({ status: 'explained', difference: '12345', items_total: '12345', unexplained: '0', case_id: null });
    const shown = JSON.parse((await cli('cases', 'show', String(breakCase), '--json')).stdout) as { case: { state: string; resolution: string }; events: Array<{ action: string; note: string }> };
    expect(shown.case).toMatchObject({ state: 'resolved', resolution: 'explained' });
    expect(shown.events.at(-1)!.note).toContain(`#${itemId} in_transit EUR 123.45`);

    // Carried forward: the next dates are explained too, with no case and exit 0.
    for (const date of ['2026-11-17', '2026-11-18']) {
      await capturedDay(date, 112_345n);
      const reconciled = await cli('reconcile', '--date', date);
      expect(reconciled.code, reconciled.stderr).toBe(0);
      expect(await results(date)).toMatchObject({ status: 'explained', unexplained: '0', case_id: null });
    }
    expect(await overdueEvents()).toHaveLength(0);

    // The 19th is after its expected clearing date: overdue, raised once however often it is reconciled.
    await capturedDay('2026-11-19', 112_345n);
    for (let i = 0; i < 2; i++) {
      const reconciled = await cli('reconcile', '--date', '2026-11-19');
      expect(reconciled.code, reconciled.stderr).toBe(0);
    }
    const events = await overdueEvents();
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toMatchObject({ type: 'item.overdue', data: { itemId, account: 'default', expectedClear: '2026-11-18', businessDate: '2026-11-19', amount: { amount: '12345', currency: 'EUR' } } });
    const overdueCases = JSON.parse((await cli('cases', '--kind', 'overdue_item', '--json')).stdout) as Array<{ id: number; state: string; currency: string }>;
    expect(overdueCases).toEqual([expect.objectContaining({ state: 'open', currency: 'EUR' })]);

    const listed = JSON.parse((await cli('items', 'list', '--date', '2026-11-19', '--json')).stdout) as ItemJson[];
    expect(listed).toEqual([
      expect.objectContaining({ id: itemId, kind: 'in_transit', amount: '12345', amount_major: '123.45', state: 'overdue', age_days: 3, expected_clear: '2026-11-18', books_entry_id: null, statement_entry_id: null }),
    ]);

    // Clearing needs a note; cleared on the 19th, the 19th is a break of the whole difference again.
    const noClearNote = await cli('items', 'clear', String(itemId));
    expect(noClearNote.code).toBe(2);
    const cleared = await cli('items', 'clear', String(itemId), '--note', 'payout returned: booking to follow', '--on', '2026-11-19', '--by', 'ben');
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(await results('2026-11-19')).toMatchObject({ status: 'break', items_total: '0', unexplained: '12345' });
    expect(await results('2026-11-18')).toMatchObject({ status: 'explained' });
    const afterClear = JSON.parse((await cli('cases', '--kind', 'overdue_item', '--json')).stdout) as Array<{ state: string }>;
    expect(afterClear).toEqual([expect.objectContaining({ state: 'resolved' })]);
    // The reports give the waterfall: JSON per result, the HTML report a waterfall table.
    const json = await cli('report', '--from', '2026-11-16', '--to', '2026-11-16', '--format', 'json');
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { results: Array<{ status: string; items_total: string; unexplained: string; formatted: { unexplained: string } }> };
    expect(report.results).toEqual([expect.objectContaining({ status: 'explained', items_total: '12345', unexplained: '0', formatted: expect.objectContaining({ items_total: '123.45', unexplained: '0.00' }) })]);
    const html = await cli('report', '--from', '2026-11-16', '--to', '2026-11-16', '--format', 'html');
    expect(html.code, html.stderr).toBe(0);
    expect(html.stdout).toMatch(/<table id="waterfall">[\s\S]*<td>2026-11-16<\/td><td>default<\/td><td>EUR<\/td><td class="amount">1,000.00<\/td><td class="amount">123.45<\/td><td class="amount">1,123.45<\/td><td class="amount">1,123.45<\/td><td class="amount">0.00<\/td><td>explained<\/td><td class="item-kinds">in transit \(1\) 123\.45<\/td>/);
    const audit = await withDb((db) => db.selectFrom('reconciling_item_events').select(['actor', 'action']).where('item_id', '=', itemId).orderBy('id').execute());
    expect(audit).toEqual([
      { actor: 'anna', action: 'added' },
      { actor: 'wallet-recon', action: 'overdue' },
      { actor: 'ben', action: 'cleared' },
    ]);
  });

  it('refuses every command-line action taken as an auditor (users add NAME --role auditor), and changes nothing', async () => {
    expect((await cli('users', 'add', 'ada', '--role', 'auditor')).code).toBe(0);
    const before = await withDb((db) => db.selectFrom('reconciling_items').select(['id', 'state']).orderBy('id').execute());
    const refusals = [
      ['items', 'add', '--account', 'default', '--currency', 'EUR', '--date', '2026-11-16', '--kind', 'in_transit', '--amount', '1.00', '--expected-clear', '2026-11-18', '--note', 'x', '--by', 'ada'],
      ['items', 'clear', '1', '--note', 'x', '--by', 'ada'],
      ['match', 'add', '--books', '1', '--statement', '1', '--note', 'x', '--by', 'ada'],
      ['match', 'undo', '1', '--note', 'x', '--by', 'ada'],
      ['cases', 'note', '1', '--note', 'x', '--by', 'ada'],
      ['cases', 'snooze', '1', '--until', '2026-11-16', '--note', 'x', '--by', 'ada'],
    ];
    for (const args of refusals) {
      const run = await cli(...args);
      expect([args.slice(0, 2).join(' '), run.code, run.stderr]).toEqual([args.slice(0, 2).join(' '), 1, expect.stringContaining('"ada" has the auditor role')]);
    }
    expect(await withDb((db) => db.selectFrom('reconciling_items').select(['id', 'state']).orderBy('id').execute())).toEqual(before);
  });
});
