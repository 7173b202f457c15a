import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { datesBetween, FixedClock } from '../../src/clock.js';
import { listExpectedBalances } from '../../src/db/expected-balance.repository.js';
import { InputFileError, UsageError } from '../../src/errors.js';
import { importBooksFile } from '../../src/books/index.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let ctx: AppContext;
let dir: string;

beforeAll(async () => {
  t = await createTestDatabase();
  ctx = createTestContext(t, {});
  dir = mkdtempSync(path.join(tmpdir(), 'wr-ledger-'));
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe(`ledger import (${backend})`, () => {
  it('imports a year of books for many currencies in batches, exactly', async () => {
    const dates = datesBetween('2025-01-01', '2025-12-31');
    const currencies = ['AUD', 'CAD', 'CHF', 'EUR', 'GBP', 'JPY', 'NOK', 'SEK', 'USD', 'ZAR', 'XAU', 'XAG', 'HKD', 'SGD', 'NZD'];
    const lines = dates.flatMap((d, i) => currencies.map((c, j) => `${d},${c},${9_007_199_254_740_993n * BigInt(i + 1) + BigInt(j)}`));
    const result = await importBooksFile(ctx, write('books-2025.csv', `business_date,currency,balance\n${lines.join('\n')}\n`), { amounts: 'minor' });
    expect(result).toMatchObject({ source: 'books-2025.csv', rows: 5475, inserted: 5475, replaced: 0, accounts: ['default'], firstDate: '2025-01-01', lastDate: '2025-12-31' });
    const lastDay = await listExpectedBalances(ctx.database.db, 'default', '2025-12-31');
    expect(lastDay.find((b) => b.currency === 'USD')!.balance).toBe(9_007_199_254_740_993n * 365n + 8n);
  });

  it('replaces a re-imported key and records the new file as its source', async () => {
    const result = await importBooksFile(ctx, write('fix.jsonl', '{"business_date":"2025-12-31","currency":"USD","balance":"-1"}\n{"business_date":"2026-01-01","currency":"USD","balance":0}\n'), { amounts: 'minor', replaceDay: true });
    expect(result).toMatchObject({ inserted: 1, replaced: 1 });
    const usd = (await listExpectedBalances(ctx.database.db, 'default', '2025-12-31')).find((b) => b.currency === 'USD');
    expect(usd).toMatchObject({ balance: -1n, source: 'fix.jsonl' });
  });

  it('takes each (account, business date) in a file as that day\'s complete books: currencies it lacks are removed, other days kept', async () => {
    const first = await importBooksFile(ctx, write('day.csv', 'business_date,currency,balance\n2026-02-01,EUR,1\n2026-02-01,USD,2\n2026-02-01,JPY,3\n2026-02-02,JPY,4\n'), { amounts: 'minor' });
    expect(first).toMatchObject({ inserted: 4, replaced: 0, removed: 0 });
    // The corrected 1 February: JPY was never the merchant's. The 2nd is not in the file.
    const fixed = write('day-fixed.jsonl', '{"business_date":"2026-02-01","currency":"USD","balance":20}\n{"business_date":"2026-02-01","currency":"EUR","balance":1}\n');
    // Without consent the removal is refused, naming what it would remove, and nothing changes.
    const before = await listExpectedBalances(ctx.database.db, 'default', '2026-02-01');
    await expect(importBooksFile(ctx, fixed, { amounts: 'minor' })).rejects.toThrow(
      "day-fixed.jsonl would remove 1 stored balance of the days it lists, because it lacks their currencies: default 2026-02-01 JPY (3). Each day in a books file is taken as that day's complete books: pass --replace-day to remove them",
    );
    expect(await listExpectedBalances(ctx.database.db, 'default', '2026-02-01')).toEqual(before);
    const corrected = await importBooksFile(ctx, fixed, { amounts: 'minor', replaceDay: true });
    expect(corrected).toMatchObject({ rows: 2, inserted: 0, replaced: 2, changed: 1, unchanged: 1, removed: 1 });
    const day = await listExpectedBalances(ctx.database.db, 'default', '2026-02-01');
    expect(day.map((b) => [b.currency, b.balance, b.source])).toEqual([
      ['EUR', 1n, 'day-fixed.jsonl'],
      ['USD', 20n, 'day-fixed.jsonl'],
    ]);
    expect((await listExpectedBalances(ctx.database.db, 'default', '2026-02-02')).map((b) => [b.currency, b.balance])).toEqual([['JPY', 4n]]);
  });

  it('refuses dates after today and balances with spaces around them, listing each line', async () => {
    const ahead = new FixedClock(new Date('2026-11-22T10:00:00Z'));
    const clocked = createTestContext(t, { RECON_TIMEZONE: 'Pacific/Kiritimati' }, { clock: ahead });
    const error = await importBooksFile(clocked, write('ahead.csv', 'business_date,currency,balance\n2026-11-22,EUR,1\n2026-11-23,EUR,2\n2026-11-24,EUR,3\n2026-11-21,USD, 100\n'), { amounts: 'minor' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    // In Kiritimati (UTC+14) it is already the 23rd: the 24th has not begun.
    expect((error as InputFileError).problems).toEqual([
      'ahead.csv line 4: business_date 2026-11-24 is after the current business date (2026-11-23 in Pacific/Kiritimati); books cannot hold a day that has not begun',
      'ahead.csv line 5: balance " 100" has spaces around it; write the amount alone, e.g. 100',
    ]);
  });

  it('refuses an --account that is not configured once, before reading the file', async () => {
    await expect(importBooksFile(ctx, write('any.csv', 'business_date,currency,balance\n2026-02-03,EUR,1\n2026-02-03,USD,1\n'), { account: 'typo', amounts: 'minor' })).rejects.toThrow(
      new UsageError('There is no account named "typo". Configured accounts: default.'),
    );
  });

  it('imports nothing when any row is bad', async () => {
    const before = await ctx.database.db.selectFrom('expected_balances').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const error = await importBooksFile(ctx, write('half.csv', 'business_date,currency,balance\n2026-03-01,EUR,1\n2026-03-02,EUR,one\n'), { amounts: 'minor' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).problems).toEqual([expect.stringMatching(/^half\.csv line 3: balance "one"/)]);
    const after = await ctx.database.db.selectFrom('expected_balances').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });
});
