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
  dir = mkdtempSync(path.join(tmpdir(), 'wr-trail-cli-'));
  env = { DATABASE_URL: '', ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCliInProcess(args, env, { clock });

/** One business date of the gateway account: its EUR balance at the end of the day, the books' closing (minor units), reconciled. */
async function day(businessDate: string, gateway: bigint, books: bigint, entries?: string[]): Promise<number> {
  clock.set(`${businessDate}T23:58:00Z`);
  await withDatabase(t, async (db: Kysely<Database>) => {
    const at = new Date(`${businessDate}T23:55:00Z`);
    const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
    await insertSnapshotRows(db, runId, 'default', at, [{ currency: 'EUR', balance: gateway, singleBalance: gateway }]);
    await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 2 });
  });
  const file = path.join(dir, `books-${businessDate}.csv`);
  writeFileSync(file, `business_date,currency,balance\n${businessDate},EUR,${books}\n`);
  expect((await cli('ledger', 'import', '--amounts', 'minor', file)).code).toBe(0);
  if (entries !== undefined) {
    const lines = path.join(dir, `entries-${businessDate}.csv`);
    writeFileSync(lines, ['booking_date,currency,amount,reference', ...entries.map((e, i) => `${businessDate},EUR,${e},R-${businessDate}-${i}`), ''].join('\n'));
    const imported = await cli('ledger', 'import', lines, '--entries');
    expect(imported.code, imported.stderr).toBe(0);
  }
  clock.set(new Date(new Date(`${businessDate}T00:00:00Z`).getTime() + 86_400_000 + 60_000).toISOString());
  return (await cli('reconcile', '--date', businessDate)).code;
}

describe(`cases show: where a gateway difference started (${backend})`, { timeout: 180_000 }, () => {
  it("gives, date by date since the last match, the gateway's movement beside the books', and names the date the difference appeared and each date it changed", async () => {
    expect(await day('2026-11-16', 100_000n, 100_000n)).toBe(0);
    // The gateway takes in 123.45 the books do not have.
    expect(await day('2026-11-17', 162_345n, 150_000n)).toBe(3);
    // Both move by 100.00: the difference stays.
    expect(await day('2026-11-18', 172_345n, 160_000n)).toBe(3);
    // The books book 10.00 the gateway never saw (their entries say so): the difference shrinks to 113.45.
    expect(await day('2026-11-19', 172_345n, 161_000n, ['4.00', '6.00'])).toBe(3);

    const caseId = JSON.parse((await cli('cases', '--kind', 'break', '--json')).stdout)[0].id as number;
    const shown = await cli('cases', 'show', String(caseId));
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("Where the difference started (the gateway gives balances only: its movement beside the books', date by date):");
    expect(shown.stdout).toContain('The gateway and the books last matched on 2026-11-16.');
    expect(shown.stdout).toContain('The difference appeared on 2026-11-17: EUR 0.00 to EUR 123.45 (gateway moved EUR 623.45, books moved EUR 500.00).');
    expect(shown.stdout).toContain('It changed on 2026-11-19: EUR 123.45 to EUR 113.45 (gateway moved EUR 0.00, books moved EUR 10.00).');
    expect(shown.stdout).not.toContain('It changed on 2026-11-18');
    // The books' movement of the 19th is the sum of its entries, said so.
    expect(shown.stdout).toMatch(/2026-11-19 +break +1,723\.45 +0\.00 +1,610\.00 +10\.00 \(entries\) +113\.45 +-10\.00/);

    const json = JSON.parse((await cli('cases', 'show', String(caseId), '--json')).stdout) as { difference_trail: Record<string, unknown> & { days: Array<Record<string, unknown>> } };
    expect(json.difference_trail).toMatchObject({
      currency: 'EUR',
      scale: 2,
      last_matched_on: '2026-11-16',
      older_dates_left_out: false,
      appeared: { business_date: '2026-11-17', from: '0', to: '12345', gateway_movement: '62345', books_movement: '50000' },
      changes: [{ business_date: '2026-11-19', from: '12345', to: '11345', gateway_movement: '0', books_movement: '1000' }],
    });
    expect(json.difference_trail.days.map((d) => [d.business_date, d.status, d.books_movement_from, d.difference, d.change])).toEqual([
      ['2026-11-16', 'matched', null, '0', null],
      ['2026-11-17', 'break', 'balances', '12345', '12345'],
      ['2026-11-18', 'break', 'balances', '12345', '0'],
      ['2026-11-19', 'break', 'entries', '11345', '-1000'],
    ]);
  });
});
