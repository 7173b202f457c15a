import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { ConsoleClient, MORNING, NIGHT, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 45: a Snooze action on the case page: note and end required, audited, shown on the case and the day, ending by itself.
const PASSWORD = { anna: 'anna-preparer-pw-1', ada: 'ada-auditor-pw-123' };
let t: TestDatabase;
let ctx: AppContext;
let clock: FixedClock;
let dir: string;
let app: FastifyInstance;
let caseId: number;

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-snooze-'));
  clock = new FixedClock(MORNING);
  ctx = createTestContext(t, {}, { clock });
  await produceNightWithBreak(ctx, dir);
  await addUser(ctx, 'anna', 'preparer', PASSWORD.anna, 'test');
  await addUser(ctx, 'ada', 'auditor', PASSWORD.ada, 'test');
  caseId = (await t.handle.db.selectFrom('reconciliation_cases').select('id').where('kind', '=', 'break').executeTakeFirstOrThrow()).id;
  app = await buildConsoleApp({ ctx });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function signedIn(name: keyof typeof PASSWORD): Promise<ConsoleClient> {
  const client = new ConsoleClient(app);
  expect((await client.signIn(name, PASSWORD[name])).statusCode).toBe(303);
  await client.get('/day');
  return client;
}

const snoozes = () => t.handle.db.selectFrom('case_snoozes').select(['case_id', 'until_date', 'note', 'snoozed_by']).execute();
const audits = () => t.handle.db.selectFrom('console_audit').select(['user_name', 'action', 'outcome']).where('action', '=', 'case.snooze').orderBy('id').execute();

describe(`the console's Snooze action (${backend})`, { timeout: 120_000 }, () => {
  it('offers Snooze with a required note and a required end; refuses one without a note, audited, nothing changed', async () => {
    const anna = await signedIn('anna');
    await anna.get(`/cases/${caseId}`);
    const page = (await anna.get(`/cases/${caseId}`)).body;
    expect(page).toMatch(new RegExp(`<form method="post" action="/cases/${caseId}/snooze" class="action">.*Note \\(required\\) <textarea name="note"[^>]* required.*Until \\(required\\) <input name="until" type="date" required.*<button type="submit">Snooze</button></form>`, 's'));
    expect(page).toContain('<dt>Snoozed</dt><dd id="snooze">no</dd>');

    const refused = await anna.post(`/cases/${caseId}/snooze`, { note: '  ', until: '2026-11-25' });
    expect(refused.statusCode).toBe(303);
    expect((await anna.get(`/cases/${caseId}`)).body).toContain('A snooze needs a note');
    expect(await snoozes()).toEqual([]);
    expect(await audits()).toEqual([{ user_name: 'anna', action: 'case.snooze', outcome: 'refused' }]);
  });

  it('snoozes with a note until a date: audited with the case event, shown on the case and on the day view', async () => {
    const anna = await signedIn('anna');
    const done = await anna.post(`/cases/${caseId}/snooze`, { note: 'bank corrects it on Wednesday', until: '2026-11-25' });
    expect(done.statusCode).toBe(303);
    expect(done.headers.location).toBe(`/cases/${caseId}`);
    expect(await snoozes()).toEqual([{ case_id: caseId, until_date: '2026-11-25', note: 'bank corrects it on Wednesday', snoozed_by: 'anna' }]);
    expect((await audits()).at(-1)).toEqual({ user_name: 'anna', action: 'case.snooze', outcome: 'ok' });
    const events = await t.handle.db.selectFrom('case_events').select(['actor', 'action', 'note']).where('case_id', '=', caseId).where('action', '=', 'noted').execute();
    expect(events).toEqual([{ actor: 'anna', action: 'noted', note: 'snoozed until 2026-11-25: bank corrects it on Wednesday' }]);
    const page = (await anna.get(`/cases/${caseId}`)).body;
    expect(page).toContain('Snoozed until 2026-11-25, recorded as anna');
    expect(page).toContain('<dd id="snooze">until 2026-11-25 (by anna): bank corrects it on Wednesday.');
    const day = (await anna.get(`/day?date=${NIGHT}`)).body;
    expect(day).toContain(`<a href="/cases/${caseId}">case #${caseId}</a> open, <span class="snoozed" title="bank corrects it on Wednesday">snoozed until 2026-11-25</span>`);
  });

  it('refuses an auditor (403, audited, nothing changed)', async () => {
    const ada = await signedIn('ada');
    const refused = await ada.post(`/cases/${caseId}/snooze`, { note: 'quiet please', until: '2026-11-30' });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('has the auditor role');
    expect((await snoozes())[0]).toMatchObject({ until_date: '2026-11-25', snoozed_by: 'anna' });
    const refusal = await t.handle.db.selectFrom('console_audit').select(['action', 'outcome']).where('user_name', '=', 'ada').where('outcome', '=', 'refused').execute();
    expect(refusal).toEqual([{ action: 'POST /cases/:id/snooze', outcome: 'refused' }]);
    expect((await ada.get(`/cases/${caseId}`)).body).not.toContain(`action="/cases/${caseId}/snooze"`);
  });

  it('ends by itself after its date: the case and the day no longer show it', async () => {
    clock.set('2026-11-27T06:00:00Z');
    const anna = await signedIn('anna');
    expect((await anna.get(`/cases/${caseId}`)).body).toContain('<dd id="snooze">no</dd>');
    expect((await anna.get('/day?date=2026-11-26')).body).not.toContain('snoozed until');
    clock.set(MORNING);
  });
});
