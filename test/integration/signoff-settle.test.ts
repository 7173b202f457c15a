import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { applyCaseAction } from '../../src/cases/case-actions.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { FixedClock } from '../../src/clock.js';
import { DateNotSettledError } from '../../src/errors.js';
import { prepareSignoff } from '../../src/signoff/signoff-service.js';
import { ConsoleClient, MORNING, NIGHT, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let ctx: AppContext;
const clock = new FixedClock(MORNING);
const anna = { name: 'anna', role: 'preparer' as const };

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-settle-'));
  ctx = createTestContext(t, { RECON_CAPTURE_WINDOW: '3h' }, { clock });
  await produceNightWithBreak(ctx, dir);
  const { id } = await t.handle.db.selectFrom('reconciliation_cases').select('id').executeTakeFirstOrThrow();
  await applyCaseAction(ctx, { caseId: id, action: 'accept', actor: 'anna', note: 'timing difference' });
}, 120_000);

afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`sign only what is settled (${backend})`, () => {
  it('refuses a date whose cut-off has not passed: its capture window is open', async () => {
    clock.set('2026-11-21T23:58:00Z');
    const refused = prepareSignoff(ctx, anna, NIGHT, null);
    await expect(refused).rejects.toBeInstanceOf(DateNotSettledError);
    await expect(refused).rejects.toThrow(`${NIGHT} cannot be signed yet: default is capture_window (its cut-off (2026-11-22 00:00 UTC) has not passed: the day is not over). Nothing was signed.`);
  });

  it('answers "Prepare sign-off" on an unsettled date with 409 and the same message on the page', async () => {
    clock.set('2026-11-22T01:00:00Z');
    await addUser(ctx, 'anna', 'preparer', 'anna-preparer-pw-1', 'test');
    const app = await buildConsoleApp({ ctx });
    try {
      const client = new ConsoleClient(app);
      await client.signIn('anna', 'anna-preparer-pw-1');
      await client.get(`/day?date=${NIGHT}`);
      // Captured at 23:55, finished by the cut-off: final although the window is still open.
      await sql`select owe_reconciliation('default', ${NIGHT}::date, 'books changed')`.execute(t.handle.db);
      const refused = await client.post('/signoffs/prepare', { date: NIGHT });
      expect(refused.statusCode).toBe(409);
      expect(refused.body).toContain(`Refused: ${NIGHT} cannot be signed yet: default is owed (results owed (books changed)`);
    } finally {
      await app.close();
    }
    await sql`delete from reconciliation_owed`.execute(t.handle.db);
  });

  it('refuses a date whose results are owed, naming the account, the state and the reason', async () => {
    clock.set(MORNING);
    await sql`select owe_reconciliation('default', ${NIGHT}::date, 'snapshot changed')`.execute(t.handle.db);
    await expect(prepareSignoff(ctx, anna, NIGHT, null)).rejects.toThrow(`${NIGHT} cannot be signed yet: default is owed (results owed (snapshot changed): run "wallet-recon reconcile --date ${NIGHT}"). Nothing was signed.`);
    const refusals = await t.handle.db.selectFrom('console_audit').select(['action', 'outcome']).where('action', '=', 'signoff.prepare').execute();
    expect(refusals).toHaveLength(3);
    expect(refusals.every((r) => r.outcome === 'refused')).toBe(true);
    expect(await t.handle.db.selectFrom('signoffs').selectAll().execute()).toEqual([]);
  });
});
