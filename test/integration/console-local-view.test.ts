import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { ConsoleClient, GATEWAY_EUR, NIGHT, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A company in Berlin whose accountants read German numbers, three mornings after the night
// with the break: the console speaks their time and numbers, and opens where the work is.
const NOW = '2026-11-24T06:00:00Z';
const PASSWORD = 'paula-preparer-pw-1';

let t: TestDatabase;
let ctx: AppContext;
let dir: string;
let app: FastifyInstance;

/** A captured day of an account, as a snapshot would record it. */
async function captured(account: string, date: string, eur: bigint): Promise<void> {
  const db = ctx.database.db;
  const at = new Date(`${date}T22:55:00Z`);
  const runId = await insertRunningRun(db, { account, environment: 'sandbox', trigger: 'schedule', businessDate: date, startedAt: at, timing: { cutoffAt: new Date(`${date}T23:00:00Z`), driftSeconds: -300, endOfDay: true } });
  await insertSnapshotRows(db, runId, account, at, [{ currency: 'EUR', balance: eur, singleBalance: eur }]);
  await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 2 });
}

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-local-'));
  ctx = createTestContext(t, { RECON_TIMEZONE: 'Europe/Berlin', RECON_LOCALE: 'de-DE' }, { clock: new FixedClock(NOW) });
  // Two earlier days of the configured account, for its balance trend, then the night with the break.
  await captured('default', '2026-11-19', GATEWAY_EUR - 5_000_000n);
  await captured('default', '2026-11-20', GATEWAY_EUR + 2_000_000n);
  await produceNightWithBreak(ctx, dir);
  // An account no configuration names any more, with a captured day: still the database's data.
  await captured('legacy-eu', '2026-11-20', 100_000n);
  await addUser(ctx, 'paula', 'preparer', PASSWORD, 'test');
  app = await buildConsoleApp({ ctx });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function signedIn(): Promise<ConsoleClient> {
  const client = new ConsoleClient(app);
  expect((await client.signIn('paula', PASSWORD)).statusCode).toBe(303);
  return client;
}

describe(`the console in the business's time zone and locale (${backend})`, { timeout: 120_000 }, () => {
  it('opens the day view on the latest date with results, not on the empty latest closed date', async () => {
    const client = await signedIn();
    const day = await client.get('/day');
    expect(day.body).toContain(`Business date ${NIGHT}`);
    expect(day.body).toContain('<tr class="status-break">');
  });

  it('writes amounts as de-DE reads them and times in Europe/Berlin with the zone', async () => {
    const client = await signedIn();
    const day = (await client.get(`/day?date=${NIGHT}`)).body;
    expect(day).toContain('<td class="amount">12.345.678,90</td><td class="amount">12.345.555,45</td><td class="amount">123,45</td>');
    // The books were imported at the fixed clock: 06:00 UTC is 07:00 in Berlin in November.
    expect(day).toContain('2026-11-24 07:00 CET');
    expect(day).not.toContain('2026-11-24T06:00');
    const caseId = (await t.handle.db.selectFrom('reconciliation_cases').select('id').executeTakeFirstOrThrow()).id;
    const casePage = (await client.get(`/cases/${caseId}`)).body;
    expect(casePage).toContain('<th>at</th>');
    expect(casePage).toContain('2026-11-24 07:00:00 CET');
    // The history's stored sentences are canonical; the page writes their amounts in the locale.
    const history = casePage.slice(casePage.indexOf('<table id="history">'));
    expect(history).toContain('difference EUR 123,45');
    expect(history).not.toContain('EUR 123.45');
    expect(casePage).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
  });

  it('lists every account with data, the unconfigured one included, and draws a trend of each currency with history', async () => {
    const client = await signedIn();
    const day = (await client.get('/day?date=2026-11-20')).body;
    expect(day).toContain('<h2>Account default</h2>');
    expect(day).toContain('<h2>Account legacy-eu</h2>');
    const night = (await client.get(`/day?date=${NIGHT}`)).body;
    const trend = /<svg class="trend"[^>]*aria-label="EUR closing balance, 2026-11-19 to 2026-11-21"[\s\S]*?<\/svg>/.exec(night);
    expect(trend).not.toBeNull();
    // Three points (low, high, between) drawn as one path, with no style attribute (the CSP forbids them).
    expect(/d="M[\d.]+ [\d.]+ L[\d.]+ [\d.]+ L[\d.]+ [\d.]+"/.test(trend![0])).toBe(true);
    expect(night).not.toMatch(/ style="/);
    const overview = (await client.get('/overview')).body;
    expect([...overview.matchAll(/<th scope="row">([^<]+)<\/th>/g)].map((m) => m[1])).toEqual(['default', 'legacy-eu']);
    expect([...overview.matchAll(/<th class="date">/g)]).toHaveLength(14);
  });

  it('names the end of a sign-in lockout in the business zone', async () => {
    await addUser(ctx, 'lara', 'viewer', 'lara-password-1234', 'test');
    const client = new ConsoleClient(app);
    for (let i = 0; i < 5; i++) expect((await client.signIn('lara', 'wrong')).statusCode).toBe(401);
    const refused = await client.signIn('lara', 'lara-password-1234');
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('wait until 07:15 CET and try again');
  });
});
