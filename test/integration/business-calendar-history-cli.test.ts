import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 44: the business calendar is the database's, with a history. `calendar set --from DATE`
// changes it from a business date on; a date captured under the old rules keeps them: its drift is
// still measured from the cut-off it was captured against, in every command, view and page.

const ZONE = 'Europe/Berlin';
const DATE = '2026-12-02';
// 17:35 CET: 25 minutes before an 18:00 cut-off (17:00Z), 6 h 25 min before midnight.
const CAPTURED = '2026-12-02T16:35:00Z';
const OLD = { RECON_CUTOFF: '18:00' };
const NEW = { RECON_CUTOFF: '00:00' };

let t: TestDatabase;
let sandbox: Sandbox;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 2, seed: 4 });
  env = { DATABASE_URL: '', ...t.childEnv, ...sandboxEnv(sandbox), LOG_LEVEL: 'silent', RECON_TIMEZONE: ZONE, RECON_CAPTURE_WINDOW: '3h' };
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
});

function at(iso: string, settings: Record<string, string>, ...args: string[]) {
  return runCliInProcess(args, { ...env, ...settings }, { clock: new FixedClock(iso) });
}

describe(`the business calendar and its history (${backend})`, { timeout: 180_000 }, () => {
  it('changes from a later date on, and a date captured with cut-off 18:00 keeps its drift against 18:00', async () => {
    const none = await at(CAPTURED, OLD, 'calendar', 'show');
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toContain('No business calendar is recorded in this database yet');

    const snapshot = await at(CAPTURED, OLD, 'snapshot');
    expect(snapshot.code, snapshot.stderr).toBe(0);
    expect(snapshot.stdout).toContain(`${DATE}, end of day, 25 min before cut-off`);

    // 18:30 CET: the 2nd has closed, the 3rd is under way: a change can hold from the 4th at the earliest.
    const evening = '2026-12-02T17:30:00Z';
    const tooSoon = await at(evening, OLD, 'calendar', 'set', '--cutoff', '00:00', '--from', '2026-12-03');
    expect(tooSoon.code).toBe(2);
    expect(tooSoon.stderr).toContain('--from 2026-12-03 is not in the future: the current business date is 2026-12-03');
    const badCutoff = await at(evening, OLD, 'calendar', 'set', '--cutoff', '24:00', '--from', '2026-12-04');
    expect(badCutoff.code).toBe(2);
    expect(badCutoff.stderr).toContain('--cutoff');

    const set = await at(evening, OLD, 'calendar', 'set', '--cutoff', '00:00', '--from', '2026-12-04');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toContain('From 2026-12-04 on, business dates end at 00:00 Europe/Berlin');
    expect(set.stdout).toMatch(/from the start\s+Europe\/Berlin\s+18:00\s+±3 h.*in force/);
    expect(set.stdout).toMatch(/from 2026-12-04\s+Europe\/Berlin\s+00:00\s+±3 h.*not yet in force/);

    // Days later, under the new rules, configured as the calendar now says.
    const later = '2026-12-06T12:00:00Z';
    const shown = JSON.parse((await at(later, NEW, 'calendar', 'show', '--json')).stdout) as { current_business_date: string; in_force: { cutoff: string }; versions: Array<{ effective_from: string | null; cutoff: string }> };
    expect(shown.current_business_date).toBe('2026-12-06');
    expect(shown.in_force.cutoff).toBe('00:00');
    expect(shown.versions.map((v) => [v.effective_from, v.cutoff])).toEqual([[null, '18:00'], ['2026-12-04', '00:00']]);

    const runs = await at(later, NEW, 'runs');
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(new RegExp(`${DATE}\\s+yes, 25 min before\\s`));
    const json = JSON.parse((await at(later, NEW, 'runs', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(json).toEqual([expect.objectContaining({ business_date: DATE, cutoff_at: '2026-12-02T17:00:00.000Z', cutoff_timezone: ZONE, cutoff_drift_seconds: -1500 })]);

    const status = await withDatabase(t, async (db) => (await sql<Record<string, unknown>>`select cutoff_local, cutoff_timezone, cutoff_drift_seconds from reconciliation_status where business_date = ${DATE}`.execute(db)).rows);
    expect(status).toEqual([{ cutoff_local: '18:00', cutoff_timezone: ZONE, cutoff_drift_seconds: -1500 }]);
  });

  it('is followed by every command, which says so when its own settings differ', async () => {
    // 19:30 CET on the 5th, configured with the old 18:00: by that the 5th would have closed and
    // this be its end of day; by the database's calendar (00:00 from the 4th) it is intraday of the 5th.
    const snapshot = await at('2026-12-05T18:30:00Z', OLD, 'snapshot');
    expect(snapshot.code, snapshot.stderr).toBe(0);
    expect(snapshot.stderr).toContain("RECON_CUTOFF is 18:00 here, the database's calendar says 00:00");
    expect(snapshot.stderr).toContain('wallet-recon calendar set');
    expect(snapshot.stdout).toContain('2026-12-05, intraday');
    const run = await withDatabase(t, (db) => db.selectFrom('snapshot_runs').select(['business_date', 'end_of_day', 'cutoff_at']).orderBy('id', 'desc').executeTakeFirstOrThrow());
    expect(run).toMatchObject({ business_date: '2026-12-05', end_of_day: false });
    expect(run.cutoff_at?.toISOString()).toBe('2026-12-05T23:00:00.000Z');
  });
});
