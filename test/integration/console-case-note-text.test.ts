import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { ConsoleClient, MORNING, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A case note that is not valid text (issue 39): answered 400 and nothing written — no case
// event and no audit row (a malformed request is logged, not audited).
let t: TestDatabase;
let ctx: AppContext;
let dir: string;
let app: FastifyInstance;
let caseId: number;

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-note-'));
  ctx = createTestContext(t, {}, { clock: new FixedClock(MORNING) });
  await produceNightWithBreak(ctx, dir);
  await addUser(ctx, 'anna', 'preparer', 'anna-preparer-pw-1', 'test');
  caseId = (await t.handle.db.selectFrom('reconciliation_cases').select('id').where('kind', '=', 'break').executeTakeFirstOrThrow()).id;
  app = await buildConsoleApp({ ctx });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const counts = async () => ({
  events: (await t.handle.db.selectFrom('case_events').select('id').execute()).length,
  audit: (await t.handle.db.selectFrom('console_audit').select('id').execute()).length,
});

describe(`a case note that is not valid text (${backend})`, { timeout: 120_000 }, () => {
  it('answers 400 to a note with a lone UTF-16 surrogate or a NUL, writing no case event and no audit row', async () => {
    const client = new ConsoleClient(app);
    expect((await client.signIn('anna', 'anna-preparer-pw-1')).statusCode).toBe(303);
    await client.get(`/cases/${caseId}`);
    const before = await counts();
    // JSON carries a lone surrogate as it is (a form would turn invalid UTF-8 into U+FFFD).
    for (const note of ['looked at \ud800 it', 'nul \u0000 inside']) {
      const response = await app.inject({
        method: 'POST',
        url: `/cases/${caseId}/note`,
        headers: { 'content-type': 'application/json', cookie: client.cookieHeader(), origin: client.origin },
        payload: `{"note":${JSON.stringify(note)},"_csrf":${JSON.stringify(client.csrf)}}`,
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.body).toMatch(/not valid text|control character/);
      expect(await counts()).toEqual(before);
    }
    // The same action with a valid note goes through, its event and audit row together.
    const valid = await client.post(`/cases/${caseId}/note`, { note: 'looked at it' });
    expect(valid.statusCode, valid.body).toBe(303);
    expect(await counts()).toEqual({ events: before.events + 1, audit: before.audit + 1 });
  });
});
