import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { refuseAuditorActor } from '../../src/console/auditor-guard.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { verifyEvidencePack } from '../../src/evidence/verify-pack.js';
import { approveSignoff, prepareSignoff } from '../../src/signoff/signoff-service.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { AFTER, DATES, MONTH, monthEnvironment, produceSignedMonth } from '../helpers/evidence-month.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let ctx: AppContext;
let app: FastifyInstance;
const PASSWORD = { ada: 'ada-auditor-pw-123', vic: 'vic-viewer-pw-1234' };

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-evidence-console-'));
  const clock = new FixedClock(AFTER);
  ctx = createTestContext(t, monthEnvironment(dir), { clock });
  // The last date is left unsigned: a month's pack leaves it out, a day's refuses it.
  await produceSignedMonth(ctx, clock, dir, [true, true, false]);
  await addUser(ctx, 'ada', 'auditor', PASSWORD.ada, 'test');
  await addUser(ctx, 'vic', 'viewer', PASSWORD.vic, 'test');
  app = await buildConsoleApp({ ctx });
}, 180_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`the auditor role and the evidence pack in the console (${backend})`, { timeout: 120_000 }, () => {
  it('an auditor sees the download on an approved day and per month, and downloads packs that verify', async () => {
    const ada = new ConsoleClient(app);
    expect((await ada.signIn('ada', PASSWORD.ada)).statusCode).toBe(303);
    const day = await ada.get(`/day?date=${DATES[0]}`);
    expect(day.statusCode).toBe(200);
    expect(day.body).toContain(`href="/evidence/day?date=${DATES[0]}"`);
    expect(day.body).not.toContain('action="/signoffs/reopen"');
    expect((await ada.get(`/day?date=${DATES[2]}`)).body).not.toContain('/evidence/day');
    expect((await ada.get('/overview')).body).toContain(`href="/evidence/month?month=${MONTH}"`);

    const pack = await ada.get(`/evidence/day?date=${DATES[0]}`);
    expect(pack.statusCode).toBe(200);
    expect(pack.headers['content-type']).toBe('application/zip');
    writeFileSync(path.join(dir, 'day.zip'), pack.rawPayload);
    const verified = await verifyEvidencePack(path.join(dir, 'day.zip'));
    expect(verified.code).toBe(0);
    expect(verified.lines.join('\n')).toContain('UNSIGNED');

    const month = await ada.get(`/evidence/month?month=${MONTH}`);
    expect(month.statusCode).toBe(200);
    expect(month.headers['x-dates-left-out']).toBe(`${DATES[2]} not signed`);
    writeFileSync(path.join(dir, 'month.zip'), month.rawPayload);
    expect((await verifyEvidencePack(path.join(dir, 'month.zip'))).lines.join('\n')).toContain(`Dates: ${DATES[0]}, ${DATES[1]};`);

    const refused = await ada.get(`/evidence/day?date=${DATES[2]}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain(`${DATES[2]} is not signed`);
  });

  it('an auditor is refused every action with 403, and nothing changes', async () => {
    const ada = new ConsoleClient(app);
    await ada.signIn('ada', PASSWORD.ada);
    await ada.get(`/day?date=${DATES[0]}`);
    const { id } = await t.handle.db.selectFrom('reconciliation_cases').select('id').executeTakeFirstOrThrow();
    const events = await t.handle.db.selectFrom('case_events').select('id').execute();
    const attempts: Array<[string, Record<string, string>]> = [
      [`/cases/${id}/note`, { note: 'looks fine' }],
      [`/cases/${id}/reopen`, { note: 'again' }],
      ['/signoffs/prepare', { date: DATES[2] }],
      ['/signoffs/approve', { date: DATES[2] }],
      ['/signoffs/reopen', { date: DATES[0], note: 'auditor wants it open' }],
      ['/account/password', { current: PASSWORD.ada, next: 'another-password-1', repeated: 'another-password-1' }],
    ];
    for (const [url, fields] of attempts) {
      const answer = await ada.post(url, fields);
      expect({ url, status: answer.statusCode }).toEqual({ url, status: 403 });
      expect(answer.body).toContain('has the auditor role and can look at everything but change nothing');
    }
    expect(await t.handle.db.selectFrom('case_events').select('id').execute()).toEqual(events);
    expect(await t.handle.db.selectFrom('signoffs').select('id').where('business_date', '=', DATES[2]).execute()).toEqual([]);
    const audited = await t.handle.db.selectFrom('console_audit').select(['action', 'outcome']).where('user_name', '=', 'ada').where('outcome', '=', 'refused').where('action', 'like', 'POST %').execute();
    expect(audited).toHaveLength(attempts.length);
  });

  it('a viewer cannot download a pack; an auditor named as the actor of a CLI action or sign-off step is refused', async () => {
    const vic = new ConsoleClient(app);
    await vic.signIn('vic', PASSWORD.vic);
    expect((await vic.get(`/day?date=${DATES[0]}`)).body).not.toContain('/evidence/day');
    expect((await vic.get(`/evidence/day?date=${DATES[0]}`)).statusCode).toBe(403);

    await expect(refuseAuditorActor(ctx, 'ada', 'case.note', 'case #1')).rejects.toThrow('"ada" has the auditor role and can look at everything but change nothing');
    await expect(refuseAuditorActor(ctx, 'anna', 'case.note', 'case #1')).resolves.toBeUndefined();
    await expect(prepareSignoff(ctx, { name: 'ada', role: 'auditor' }, DATES[2], 'cli')).rejects.toThrow('only a preparer or an admin can prepare');
    await expect(approveSignoff(ctx, { id: 9, name: 'ada', role: 'auditor' }, DATES[0], 'cli')).rejects.toThrow();
  });
});
