import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { writeCamt053 } from '../../src/statements/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Items of unmatched entries get an expected clearing date from the account's matching rule
// (expectedClearDays: 1); past it they are overdue: one item.overdue each and an overdue_item case,
// which resolves once their entries are matched.
let t: TestDatabase;
let dir: string;
const IBAN = 'DE89370400440532013000';
const clock = new FixedClock('2026-11-05T09:00:00Z');

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  await serveToCommands(t);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-entry-overdue-'));
  writeFileSync(path.join(dir, 'accounts.yaml'), ['bankAccounts:', `  - { name: eu-bank, iban: ${IBAN}, currency: EUR, matching: { expectedClearDays: 1 } }`, ''].join('\n'));
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({
  DATABASE_URL: '',
  ...t.childEnv,
  LOG_LEVEL: 'silent',
  RECON_TIMEZONE: 'UTC',
  RECON_ACCOUNTS_FILE: path.join(dir, 'accounts.yaml'),
  RECON_ACTOR: 'anna',
  RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hooks/recon',
  RECON_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
});
const cli = (...args: string[]) => runCliInProcess(args, env(), { clock });
function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}
const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const overdueEvents = () => withDb((db) => db.selectFrom('notifications').select(['payload']).where('event_type', '=', 'item.overdue').orderBy('id').execute());
const overdueCases = () => withDb((db) => db.selectFrom('reconciliation_cases').select(['id', 'state', 'currency', 'resolution']).where('kind', '=', 'overdue_item').execute());

describe(`items of unmatched entries past their expected clearing date (${backend})`, { timeout: 600_000 }, () => {
  it('get expected_clear from expectedClearDays, raise one item.overdue each and an overdue_item case, which resolves when their entries match', async () => {
    const camt = writeCamt053({
      iban: IBAN,
      currency: 'EUR',
      opening: 0n,
      days: [
        { sequence: 7, date: '2026-11-02', entries: [-250n] },
        { sequence: 8, date: '2026-11-03', entries: [] },
        { sequence: 9, date: '2026-11-04', entries: [] },
      ],
    });
    expect((await cli('statements', 'import', file('s1.xml', camt))).code).toBe(0);
    const entries = await cli('ledger', 'import', file('e1.csv', 'booking_date,currency,amount,reference,entry_id\n2026-11-02,EUR,-500.00,CHQ-9,L-5\n'), '--entries', '--account', 'eu-bank');
    expect(entries.code, entries.stderr).toBe(0);
    const balances = await cli('ledger', 'import', file('b1.csv', 'business_date,currency,balance\n2026-11-03,EUR,-500.00\n2026-11-04,EUR,-500.00\n'), '--account', 'eu-bank');
    expect(balances.code, balances.stderr).toBe(0);

    for (const date of ['2026-11-02', '2026-11-03', '2026-11-04', '2026-11-04']) {
      const run = await cli('reconcile', '--date', date, '--json');
      expect([date, run.code, run.stderr]).toEqual([date, 0, '']);
      expect((JSON.parse(run.stdout) as { results: Array<{ status: string; unexplained: string }> }).results).toEqual([expect.objectContaining({ status: 'explained', unexplained: '0' })]);
    }
    const items = JSON.parse((await cli('items', 'list', '--date', '2026-11-04', '--json')).stdout) as Array<{ kind: string; amount: string; expected_clear: string; state: string }>;
    expect(items.map((i) => [i.kind, i.amount, i.expected_clear, i.state])).toEqual([
      ['outstanding', '50000', '2026-11-03', 'overdue'],
      ['unrecorded', '-250', '2026-11-03', 'overdue'],
    ]);
    const onThird = JSON.parse((await cli('items', 'list', '--date', '2026-11-03', '--json')).stdout) as Array<{ state: string }>;
    expect(onThird.map((i) => i.state)).toEqual(['open', 'open']);

    // One event per item however often the dates are reconciled, one case for the account's EUR.
    const events = await overdueEvents();
    expect(events).toHaveLength(2);
    expect(events.map((e) => (e.payload as { data: { itemId: number | null; kind: string; expectedClear: string; businessDate: string } }).data)).toEqual([
      expect.objectContaining({ itemId: null, kind: 'outstanding', expectedClear: '2026-11-03', businessDate: '2026-11-04', amount: { amount: '50000', currency: 'EUR' } }),
      expect.objectContaining({ itemId: null, kind: 'unrecorded', expectedClear: '2026-11-03', businessDate: '2026-11-04', amount: { amount: '-250', currency: 'EUR' } }),
    ]);
    expect(await overdueCases()).toEqual([expect.objectContaining({ state: 'open', currency: 'EUR' })]);

    // The cheque reaches the bank and the fee the books on the 5th: both match, the case resolves.
    clock.set('2026-11-06T09:00:00Z');
    const camt2 = writeCamt053({ iban: IBAN, currency: 'EUR', opening: -250n, days: [{ sequence: 10, date: '2026-11-05', entries: [-50_000n] }] });
    expect((await cli('statements', 'import', file('s2.xml', camt2))).code).toBe(0);
    expect((await cli('ledger', 'import', file('e2.csv', 'booking_date,currency,amount,entry_id\n2026-11-05,EUR,-2.50,L-6\n'), '--entries', '--account', 'eu-bank')).code).toBe(0);
    const settled = await cli('reconcile', '--date', '2026-11-05', '--json');
    expect(settled.code, settled.stderr).toBe(0);
    expect((JSON.parse(settled.stdout) as { results: Array<{ status: string }> }).results).toEqual([expect.objectContaining({ status: 'matched' })]);
    expect(await overdueCases()).toEqual([expect.objectContaining({ state: 'resolved', resolution: 'auto' })]);
    expect(await overdueEvents()).toHaveLength(2);
    // Reconciling an earlier date again leaves the case as it is: the 4th still shows the items overdue.
    expect((await cli('reconcile', '--date', '2026-11-04')).code).toBe(0);
    expect(await overdueCases()).toEqual([expect.objectContaining({ state: 'resolved' })]);
  });
});
