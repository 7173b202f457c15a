import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importBooksFile } from '../../src/books/index.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { importStatementFiles, writeCamt053 } from '../../src/statements/index.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let app: FastifyInstance;

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-bank-'));
  const accounts = path.join(dir, 'accounts.yaml');
  writeFileSync(accounts, 'bankAccounts:\n  - { name: eu-bank, iban: DE89370400440532013000, currency: EUR }\n  - { name: us-bank, accountId: "US-000123", currency: USD }\n');
  const ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: accounts, RECON_TIMEZONE: 'UTC' }, { clock: new FixedClock(new Date('2026-11-04T06:00:00Z')) });
  const statement = path.join(dir, 'eu.xml');
  writeFileSync(statement, writeCamt053({ iban: 'DE89370400440532013000', currency: 'EUR', opening: 100_000n, days: [{ sequence: 3, date: '2026-11-03', entries: [5_000n] }] }));
  await importStatementFiles(ctx, [statement]);
  const books = path.join(dir, 'books.csv');
  writeFileSync(books, 'account,business_date,currency,balance\neu-bank,2026-11-03,EUR,1050.00\nus-bank,2026-11-03,USD,10.00\n');
  await importBooksFile(ctx, books, {});
  await addUser(ctx, 'vic', 'viewer', 'vic-viewer-pw-333', 'test');
  app = await buildConsoleApp({ ctx });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`bank accounts in the review console (${backend})`, { timeout: 120_000 }, () => {
  it('shows each bank account on the day view with its source and statement, its balance under "bank"', async () => {
    const client = new ConsoleClient(app);
    expect((await client.signIn('vic', 'vic-viewer-pw-333')).statusCode).toBe(303);
    const day = await client.get('/day?date=2026-11-03');
    expect(day.statusCode).toBe(200);
    const eu = /<section class="account"><h2>Account eu-bank \(bank\)<\/h2>([\s\S]*?)<\/section>/.exec(day.body)?.[1];
    expect(eu).toContain('<li>bank statement STMT-2026-11-03-3, proof ok</li>');
    expect(eu).toContain('<th class="amount">bank</th>');
    expect(eu).toMatch(/<tr class="status-matched"><td>EUR<\/td>/);
    const us = /<section class="account"><h2>Account us-bank \(bank\)<\/h2>([\s\S]*?)<\/section>/.exec(day.body)?.[1];
    expect(us).toContain('<li>no bank statement for this date</li>');
    expect(us).toMatch(/<tr class="status-awaiting_statement"><td>USD<\/td>/);
  });
});
