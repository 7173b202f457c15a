import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { pullBooksIfDue } from '../../src/books/index.js';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/database.types.js';
import { openDatabase } from '../../src/db/open-database.js';
import { createSilentLogger } from '../../src/logger.js';
import { systemClock } from '../../src/clock.js';
import { createLedgerDatabase, type LedgerDatabase } from '../helpers/ledger-database.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let ledger: LedgerDatabase;
let dir: string;
let env: Record<string, string>;

// The merchant's general ledger: its own names, a numeric(18,4) column, several entities.
const LEDGER_SCHEMA = `
  create table gl_closing_balances (entity text not null, value_date date not null, ccy text not null, closing numeric(18, 4) not null);
  insert into gl_closing_balances values
    ('default', '2026-11-20', 'EUR', 1234.5600), ('default', '2026-11-20', 'USD', -50.1000), ('default', '2026-11-20', 'JPY', 1500),
    ('other-entity', '2026-11-20', 'EUR', 99);`;
const BOOKS_QUERY = 'select ccy as currency, closing as balance\n  from gl_closing_balances\n where value_date = $1::date and entity = $2\n order by ccy\n';

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  ledger = await createLedgerDatabase();
  await ledger.exec(LEDGER_SCHEMA);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-books-pull-'));
  writeFileSync(path.join(dir, 'ledger-books.sql'), BOOKS_QUERY);
  // The URL is a secret: given as a file, as in a container.
  writeFileSync(path.join(dir, 'ledger-url'), `${ledger.url}\n`, { mode: 0o600 });
  env = {
    DATABASE_URL: '',
    ...t.childEnv,
    LOG_LEVEL: 'silent',
    RECON_TIMEZONE: 'UTC',
    RECON_BOOKS_SQL_FILE: path.join(dir, 'ledger-books.sql'),
    RECON_BOOKS_DATABASE_URL_FILE: path.join(dir, 'ledger-url'),
  };
  // Two databases to start (one of them a PGlite on the embedded suite): more than the default minute on a busy machine.
}, 180_000);
afterAll(async () => {
  await ledger?.drop();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (args: string[], extraEnv: Record<string, string> = {}) => runCliInProcess(args, { ...env, ...extraEnv });

async function storedBooks(date: string) {
  return withDb((db) => db.selectFrom('expected_balances').select(['currency', 'balance', 'source']).where('business_date', '=', date).orderBy('currency').execute());
}
const importCount = () => withDb(async (db) => (await db.selectFrom('books_imports').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

/** A context as the worker has one, over the test database (opened for the call on the embedded suite). */
async function withWorkerContext<T>(extraEnv: Record<string, string | undefined>, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const config = loadConfig({ env: { ...env, ...extraEnv }, ignoreDotEnv: true });
  const handle = backend === 'postgres' ? t.handle : await openDatabase({ dataDir: t.childEnv.RECON_DATA_DIR!, command: 'test worker' });
  try {
    return await fn({ config, database: handle, logger: createSilentLogger(), clock: systemClock, close: async () => undefined });
  } finally {
    if (backend !== 'postgres') await handle.close();
  }
}

function sqlFile(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe(`books pulled from the merchant's ledger database (${backend})`, () => {
  it('books pull runs the query for the date and account and imports its rows as books with source sql:<file>', async () => {
    const pulled = await cli(['books', 'pull', '--date', '2026-11-20']);
    expect(pulled.stderr).toBe('');
    expect(pulled).toMatchObject({ code: 0, stdout: 'Imported 3 expected balances from sql:ledger-books.sql for default, 2026-11-20: 3 new, 0 changed, 0 unchanged, 0 removed.' });
    expect(await storedBooks('2026-11-20')).toEqual([
      { currency: 'EUR', balance: '123456', source: 'sql:ledger-books.sql' },
      { currency: 'JPY', balance: '1500', source: 'sql:ledger-books.sql' },
      { currency: 'USD', balance: '-5010', source: 'sql:ledger-books.sql' },
    ]);
    expect(await withDb((db) => db.selectFrom('books_imports').select(['source', 'format', 'amounts', 'rows']).execute())).toEqual([{ source: 'sql:ledger-books.sql', format: 'sql', amounts: 'major', rows: 3 }]);
  });

  it('does not import the same books twice, and imports what the ledger changed', async () => {
    const again = await cli(['books', 'pull', '--date', '2026-11-20', '--account', 'default']);
    expect(again).toMatchObject({ code: 0, stdout: 'Books of account "default" for 2026-11-20 from sql:ledger-books.sql are already up to date (3 expected balances); nothing was imported.' });
    expect(await importCount()).toBe('1');

    await ledger.exec(`update gl_closing_balances set closing = 1300 where ccy = 'EUR' and entity = 'default'`);
    const dry = await cli(['books', 'pull', '--date', '2026-11-20', '--dry-run']);
    expect(dry.stdout.split('\n')).toEqual([
      'Dry run, nothing written: 3 expected balances from sql:ledger-books.sql for default, 2026-11-20 would give 0 new, 1 changed, 2 unchanged, 0 removed.',
      '  changed   default 2026-11-20 EUR: 1,234.56 -> 1,300.00',
    ]);
    expect(await importCount()).toBe('1');
    const changed = await cli(['books', 'pull', '--date', '2026-11-20']);
    expect(changed.stdout).toBe('Imported 3 expected balances from sql:ledger-books.sql for default, 2026-11-20: 0 new, 1 changed, 2 unchanged, 0 removed.');
    expect((await storedBooks('2026-11-20'))[0]).toEqual({ currency: 'EUR', balance: '130000', source: 'sql:ledger-books.sql' });
  });

  it('gives the worker a result it can act on: imported, unchanged, no-rows, not-configured, failed', async () => {
    await ledger.exec(`insert into gl_closing_balances values ('default', '2026-11-19', 'EUR', 10)`);
    await withWorkerContext({}, async (ctx) => {
      expect(await pullBooksIfDue(ctx, { account: 'default', businessDate: '2026-11-19' })).toBe('imported');
      expect(await pullBooksIfDue(ctx, { account: 'default', businessDate: '2026-11-19' })).toBe('unchanged');
      expect(await pullBooksIfDue(ctx, { account: 'default', businessDate: '2026-11-18' })).toBe('no-rows');
    });
    await withWorkerContext({ RECON_BOOKS_SQL_FILE: undefined, RECON_BOOKS_DATABASE_URL_FILE: undefined }, async (ctx) => {
      expect(await pullBooksIfDue(ctx, { account: 'default', businessDate: '2026-11-19' })).toBe('not-configured');
    });
    // Read only, whatever the query says: the ledger is never written.
    const writer = sqlFile('writer.sql', "insert into gl_closing_balances values ($2, $1::date, 'GBP', 1) returning ccy as currency, closing as balance");
    await withWorkerContext({ RECON_BOOKS_SQL_FILE: writer }, async (ctx) => {
      const outcome = await pullBooksIfDue(ctx, { account: 'default', businessDate: '2026-11-19' });
      expect(outcome).toEqual({ failed: expect.stringContaining('cannot execute INSERT in a read-only transaction') });
    });
    expect(await ledger.rows(`select * from gl_closing_balances where ccy = 'GBP'`)).toEqual([]);
  });

  it("refuses the ledger's rows as it refuses a file's: naming the row and the value, importing nothing", async () => {
    const before = await importCount();
    const precise = sqlFile('precise.sql', "select 'EUR' as currency, 1234.565::numeric as balance where $1::date is not null");
    const refused = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: precise });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('sql:precise.sql row 1: balance 1234.565 has 3 decimals but EUR has 2');
    const columns = sqlFile('columns.sql', 'select ccy, closing from gl_closing_balances where value_date = $1::date');
    const wrong = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: columns });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('The books query columns.sql returned the columns ccy, closing; it must return currency and balance (missing currency, balance).');
    expect(await importCount()).toBe(before);
  });

  it("fails with the database's message and never its password; exit 2 without a books query", async () => {
    const url = new URL(ledger.url.startsWith('postgres://postgres@localhost') ? 'postgres://postgres@127.0.0.1:1/ledger' : ledger.url);
    url.password = 'ledger-pw-do-not-print';
    url.port = '1';
    const unreachable = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_DATABASE_URL_FILE: '', RECON_BOOKS_DATABASE_URL: url.toString() });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/The books query ledger-books\.sql failed against RECON_BOOKS_DATABASE_URL for account "default", 2026-11-20: .*ECONNREFUSED/);
    expect(`${unreachable.stdout}${unreachable.stderr}`).not.toContain('ledger-pw-do-not-print');

    const syntax = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: sqlFile('typo.sql', 'selec currency, balance from x where $1 = $2') });
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toContain('syntax error at or near "selec"');

    const none = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: '', RECON_BOOKS_DATABASE_URL_FILE: '' });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No account has a books query: set RECON_BOOKS_SQL_FILE or RECON_BOOKS_ENTRIES_SQL_FILE (and RECON_BOOKS_DATABASE_URL), or books.sqlFile or books.entriesSqlFile in the accounts file.');
    const halfConfigured = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_DATABASE_URL_FILE: '' });
    expect(halfConfigured.code).toBe(2);
    expect(halfConfigured.stderr).toContain('RECON_BOOKS_DATABASE_URL (or RECON_BOOKS_DATABASE_URL_FILE) is required when a books query is configured (RECON_BOOKS_SQL_FILE)');
    const noDate = await cli(['books', 'pull']);
    expect(noDate.code).toBe(2);
  });

  it.runIf(backend === 'postgres')('stops a query that runs longer than RECON_BOOKS_STATEMENT_TIMEOUT', async () => {
    const slow = sqlFile('slow.sql', "select 'EUR' as currency, 1 as balance from pg_sleep(5) where $1::date is not null");
    const stopped = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: slow, RECON_BOOKS_STATEMENT_TIMEOUT: '1s' });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toContain('canceling statement due to statement timeout');
  });
});
