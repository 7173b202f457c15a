import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountNames, generateHistory } from '../../bench/history.js';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { createTestContext, writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// 60 accounts of 2 currencies over 3 days, and 120 open cases of one kind: more than a page of each.
const SHAPE = { accounts: 60, currencies: 2, days: 3, lastDate: '2026-11-25' };
const PASSWORD = 'paging-viewer-pw-1';

let t: TestDatabase;
let ctx: AppContext;
let app: FastifyInstance;
let client: ConsoleClient;

beforeAll(async () => {
  t = await createTestDatabase();
  const names = accountNames(SHAPE);
  ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: writeAccountsFile(names.map((name) => ({ name, apiKeyEnv: 'K', apiSecretEnv: 'S' }))), K: 'k', S: 's' }, { clock: new FixedClock('2026-11-26T09:00:00Z') });
  await generateHistory(t.handle.db, SHAPE, (d) => new Date(`${d}T23:00:00Z`), new Date('2026-11-26T08:00:00Z'));
  await sql`
    insert into reconciliation_cases (account, currency, kind, state, opened_on, last_seen_on, occurrences, latest_difference, updated_at)
    select a.account, c.currency, 'missing_in_ledger', 'open', '2026-11-20', '2026-11-25', 1, null, now()
    from unnest(${names}::text[]) as a(account) cross join (values ('USD'), ('EUR')) as c(currency)
    on conflict do nothing`.execute(t.handle.db);
  await addUser(ctx, 'paging-viewer', 'viewer', PASSWORD, 'test');
  app = await buildConsoleApp({ ctx });
  client = new ConsoleClient(app);
  expect((await client.signIn('paging-viewer', PASSWORD)).statusCode).toBe(303);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
});

describe(`console paging (${backend})`, { timeout: 60_000 }, () => {
  it('pages the day view by 25 accounts, with the counts of the whole date and links to the other pages', async () => {
    const first = (await client.get('/day?date=2026-11-24')).body;
    expect(first.match(/<section class="account">/g)).toHaveLength(25);
    expect(first).toContain('Accounts 1–25 of 60; 120 results this date, 0 need attention.');
    expect(first).toContain('page 1 of 3');
    expect(first).toContain('href="/day?date=2026-11-24&amp;page=2" rel="next"');
    const last = (await client.get('/day?date=2026-11-24&page=3')).body;
    expect(last.match(/<section class="account">/g)).toHaveLength(10);
    expect(last).toContain('Account merchant-060');
    expect(last).not.toContain('Account merchant-001<');
    expect(last).toContain('Accounts 51–60 of 60');
    expect((await client.get('/day?date=2026-11-24&page=0')).statusCode).toBe(400);
  });

  it('pages the cases inbox by 50, keeping the filters in its links', async () => {
    const first = (await client.get('/cases?state=open&kind=missing_in_ledger')).body;
    expect(first.match(/<tr><td><a href="\/cases\/\d+">/g)).toHaveLength(50);
    expect(first).toContain('Cases 1–50 of 120.');
    expect(first).toContain('href="/cases?state=open&amp;kind=missing_in_ledger&amp;sort=age&amp;page=2" rel="next"');
    const third = (await client.get('/cases?state=open&kind=missing_in_ledger&page=3')).body;
    expect(third.match(/<tr><td><a href="\/cases\/\d+">/g)).toHaveLength(20);
    expect(third).toContain('Cases 101–120 of 120.');
    const filtered = (await client.get('/cases?currency=EUR&kind=missing_in_ledger')).body;
    expect(filtered).toContain('Cases 1–50 of 60.');
  });
});
