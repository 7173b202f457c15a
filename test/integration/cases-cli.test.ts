import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
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
  // Embedded: served by this process, so each command reaches it through its socket rather than opening the folder.
  await serveToCommands(t);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-cases-cli-'));
  env = { DATABASE_URL: '', ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (...args: string[]) => runCliInProcess(args, env, { clock });

/** `reconcile --date D` just after D's cut-off (no date is reconciled before it), the clock then put back. */
async function reconcileCli(date: string) {
  const now = clock.now().toISOString();
  clock.set(new Date(new Date(`${date}T00:00:00Z`).getTime() + 86_400_000 + 60_000).toISOString());
  try {
    return await cli('reconcile', '--date', date);
  } finally {
    clock.set(now);
  }
}

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
}

interface CaseJson {
  id: number;
  state: string;
  resolution: string | null;
  occurrences: number;
  latest_difference: string | null;
  age_days: number;
}

describe(`wallet-recon cases, the whole story from the command line (${backend})`, () => {
  it('follows a EUR break of 100 over three dates, its acceptance, its lapse at 250 and its automatic resolution', async () => {
    for (const date of ['2026-11-16', '2026-11-17', '2026-11-18']) {
      await capturedDay(date, 100_100n);
      const reconciled = await reconcileCli(date);
      expect(reconciled.code, reconciled.stderr).toBe(3);
    }
    const listed = await cli('cases', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const cases = JSON.parse(listed.stdout) as CaseJson[];
    expect(cases).toEqual([expect.objectContaining({ state: 'open', occurrences: 3, latest_difference: '100', latest_difference_formatted: 'EUR 1.00', currency_decimals: 2, age_days: 2, currency: 'EUR', kind: 'break' })]);
    const id = String(cases[0]!.id);

    const accepted = await cli('cases', 'accept', id, '--note', 'booking on Monday', '--until', '2026-11-23', '--by', 'anna');
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stdout).toBe(`Case #${id} default EUR break: open -> accepted until 2026-11-23 (accept by anna).`);

    await capturedDay('2026-11-19', 100_100n);
    const same = await reconcileCli('2026-11-19');
    expect(same.code, same.stderr).toBe(0);
    // Reconciled just after its cut-off: the 20th has begun, so the case opened on the 16th is 4 days old.
    expect(same.stdout).toMatch(new RegExp(`2026-11-19\\s+default\\s+EUR\\s+break\\s.*\\s${id}\\s+accepted\\s+4\\b`));

    await capturedDay('2026-11-20', 100_250n);
    const moved = await reconcileCli('2026-11-20');
    expect(moved.code, moved.stderr).toBe(3);

    await capturedDay('2026-11-21', 100_000n);
    const clean = await reconcileCli('2026-11-21');
    expect(clean.code, clean.stderr).toBe(0);

    const noted = await cli('cases', 'note', id, '--note', 'booking 2026-11-21/118 arrived');
    expect(noted.code, noted.stderr).toBe(0);
    const actorEnv = await runCliInProcess(['cases', 'note', id, '--note', 'checked by controlling'], { ...env, RECON_ACTOR: 'controlling-bot' }, { clock });
    expect(actorEnv.code, actorEnv.stderr).toBe(0);

    const shown = await cli('cases', 'show', id, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const story = JSON.parse(shown.stdout) as { case: CaseJson; occurrences: Array<{ business_date: string; difference: string }>; events: Array<{ actor: string; action: string; from_state: string; to_state: string; note: string }> };
    expect(story.case).toMatchObject({ state: 'resolved', resolution: 'auto', occurrences: 5, latest_difference: '250' });
    expect(story.occurrences.map((o) => [o.business_date, o.difference])).toEqual([
      ['2026-11-16', '100'],
      ['2026-11-17', '100'],
      ['2026-11-18', '100'],
      ['2026-11-19', '100'],
      ['2026-11-20', '250'],
    ]);
    expect(story.events.map((e) => [e.actor, e.action, e.from_state, e.to_state])).toEqual([
      ['wallet-recon', 'opened', null, 'open'],
      ['wallet-recon', 'seen', 'open', 'open'],
      ['wallet-recon', 'seen', 'open', 'open'],
      ['anna', 'accepted', 'open', 'accepted'],
      ['wallet-recon', 'seen', 'accepted', 'accepted'],
      ['wallet-recon', 'seen', 'accepted', 'accepted'],
      ['wallet-recon', 'lapsed', 'accepted', 'open'],
      ['wallet-recon', 'auto_resolved', 'open', 'resolved'],
      [expect.any(String), 'noted', 'resolved', 'resolved'],
      ['controlling-bot', 'noted', 'resolved', 'resolved'],
    ]);
    expect(story.events[3]!.note).toBe('booking on Monday (until 2026-11-23); accepted difference EUR 1.00');
    expect(story.events[6]!.note).toBe('The acceptance lapsed on 2026-11-20: the difference moved from EUR 1.00 to EUR 2.50, beyond the tolerance of EUR 0.00. The case is open again.');

    const text = await cli('cases', 'show', id);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`Case #${id} default EUR break: resolved (auto)`);
    expect(text.stdout).toMatch(/anna\s+accepted\s+open -> accepted\s+booking on Monday/);
    expect(text.stdout).toMatch(/wallet-recon\s+lapsed\s+accepted -> open\s+The acceptance lapsed on 2026-11-20/);

    // An impossible transition: exit 2, the state and what is allowed from it named, nothing changed.
    const refused = await cli('cases', 'accept', id, '--note', 'fine');
    expect(refused.code).toBe(2);
    // One line, in words, without the internal class name.
    expect(refused.stderr).toBe(`Case #${id} default EUR break is resolved (auto): "accept" is allowed only from open or acknowledged. From resolved you can: note, reopen. Nothing was changed.`);
    const empty = await cli('cases', 'note', id, '--note', '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/cases note needs --note TEXT/);
    const silentAck = await cli('cases', 'ack', id);
    expect(silentAck.code).toBe(2);
    expect(silentAck.stderr).toBe('cases ack needs --note TEXT saying what is being done about it; an empty note is not accepted.');

    // The audit trail cannot be rewritten, not even with SQL.
    await withDb(async (db) => {
      await expect(sql`update case_events set actor = 'someone else' where case_id = ${Number(id)}`.execute(db)).rejects.toThrow(/append-only/);
      await expect(sql`delete from case_events where case_id = ${Number(id)}`.execute(db)).rejects.toThrow(/append-only/);
      const count = await db.selectFrom('case_events').select((eb) => eb.fn.countAll<string>().as('n')).where('case_id', '=', Number(id)).executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(10);
    });
  }, 120_000); // a long story of CLI runs: under a loaded machine it took longer than the default 30 s

  it('shows a case in major units: EUR 2.50, not "latest difference 250"', async () => {
    const [c] = JSON.parse((await cli('cases', '--json')).stdout) as CaseJson[];
    const shown = await cli('cases', 'show', String(c!.id));
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('5 occurrences, latest difference EUR 2.50');
    expect(shown.stdout).toMatch(/^2026-11-16\s+break\s+1\.00\s+1,001\.00\s+1,001\.00\s+1,000\.00\s/m);
    expect(shown.stdout).toContain('first seen on 2026-11-16: difference EUR 1.00.');
    const json = JSON.parse((await cli('cases', 'show', String(c!.id), '--json')).stdout) as { case: Record<string, unknown>; occurrences: Array<Record<string, unknown>> };
    expect(json.case).toMatchObject({ latest_difference: '250', latest_difference_formatted: 'EUR 2.50', currency_decimals: 2 });
    expect(json.occurrences[0]).toMatchObject({ difference: '100', formatted: { difference: 'EUR 1.00', gateway_balance: 'EUR 1,001.00', expected_balance: 'EUR 1,000.00' } });
  });

  it('lists cases as a table and filters them by state', async () => {
    const all = await cli('cases');
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toMatch(/^case\s+account\s+currency\s+kind\s+state\s+age \(days\)\s+occurrences\s+latest difference\s+assignee/);
    expect(all.stdout).toMatch(/default\s+EUR\s+break\s+resolved \(auto\)\s+5\s+5\s+2\.50/);
    const active = await cli('cases', '--state', 'active');
    expect(active.stdout).toBe('No cases match. Cases open when "wallet-recon reconcile" finds a discrepancy.');
    const wrong = await cli('cases', '--state', 'closed');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/Allowed choices are open, acknowledged, resolved, accepted, active/);
  });

  it('echoes the assignee and the due date of an assignment', async () => {
    const [c] = JSON.parse((await cli('cases', '--json')).stdout) as CaseJson[];
    const id = String(c!.id);
    expect((await cli('cases', 'reopen', id, '--note', 'the booking was reversed', '--by', 'ben')).code).toBe(0);
    const assigned = await cli('cases', 'assign', id, '--to', 'anna', '--due', '2026-12-01', '--by', 'ben');
    expect(assigned.code, assigned.stderr).toBe(0);
    expect(assigned.stdout).toBe(`Case #${id} default EUR break: open; assigned to anna, due 2026-12-01 (assign by ben).`);
  });
});
