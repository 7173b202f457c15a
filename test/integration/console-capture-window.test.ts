import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Berlin, cut-off 00:00, a 3 h capture window: 2026-11-21 ends at 2026-11-21T23:00Z and its window
// closes at 2026-11-22T02:00Z (03:00 CET), when the date is settled and reconciled.
const DATE = '2026-11-21';
const PASSWORD = 'paula-preparer-pw-1';
const clock = new FixedClock('2026-11-22T00:30:00Z');

let t: TestDatabase;
let ctx: AppContext;
let app: FastifyInstance;

beforeAll(async () => {
  t = await createTestDatabase();
  ctx = createTestContext(t, { RECON_TIMEZONE: 'Europe/Berlin', RECON_CUTOFF: '00:00', RECON_CAPTURE_WINDOW: '3h' }, { clock });
  await addUser(ctx, 'paula', 'preparer', PASSWORD, 'test');
  app = await buildConsoleApp({ ctx });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
});

async function dayView(): Promise<{ client: ConsoleClient; body: string }> {
  const client = new ConsoleClient(app);
  expect((await client.signIn('paula', PASSWORD)).statusCode).toBe(303);
  return { client, body: (await client.get(`/day?date=${DATE}`)).body };
}

describe(`the day view while a date's capture window is open (${backend})`, { timeout: 120_000 }, () => {
  it('says until when the window is open, and offers no sign-off the server would refuse', async () => {
    clock.set('2026-11-22T00:30:00Z');
    const { client, body } = await dayView();
    expect(body).toContain('Capture window open until 2026-11-22 03:00 CET (cut-off 2026-11-22 00:00 CET), then reconciled.');
    expect(body).toContain('The sign-off can be prepared after that.');
    expect(body).not.toContain('Not reconciled for this date');
    expect(body).not.toContain('Prepare sign-off');
    // The server refuses it all the same: the page offered nothing that ends here.
    const refused = await client.post('/signoffs/prepare', { date: DATE });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('capture window until 2026-11-22 03:00 CET');
  });

  it('before the cut-off, says the day is not over and when its window closes', async () => {
    clock.set('2026-11-21T20:00:00Z');
    const { body } = await dayView();
    expect(body).toContain('The day is not over: its cut-off is at 2026-11-22 00:00 CET, its capture window open until 2026-11-22 03:00 CET, then reconciled.');
    expect(body).not.toContain('Prepare sign-off');
  });

  it('once the window has closed, says the date is not reconciled and offers the sign-off again', async () => {
    clock.set('2026-11-22T02:30:00Z');
    const { body } = await dayView();
    expect(body).toContain('Not reconciled for this date.');
    expect(body).not.toContain('Capture window open');
    expect(body).toContain('Prepare sign-off');
  });
});
