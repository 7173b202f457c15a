import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.types.js';
import { createLedgerDatabase, type LedgerDatabase } from '../helpers/ledger-database.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let ledger: LedgerDatabase;
let dir: string;
let env: Record<string, string>;

// The merchant's general ledger: closing balances and the detail lines behind them, in its own names.
const LEDGER_SCHEMA = `
  create table gl_closing_balances (entity text not null, value_date date not null, ccy text not null, closing numeric(18, 4) not null);
  insert into gl_closing_balances values ('default', '2026-11-19', 'EUR', 1000), ('default', '2026-11-20', 'EUR', 3030.0000);
  create table gl_lines (entity text not null, line_id text not null, posted_on date not null, value_on date, ccy text not null, amt numeric(18, 4) not null, ref text, memo text);
  insert into gl_lines values
    ('default', 'GL-1', '2026-11-20', '2026-11-21', 'EUR', 2500.0000, 'B7-1', 'payout'),
    ('default', 'GL-2', '2026-11-20', null, 'EUR', -400.0000, 'B7-2', 'supplier'),
    ('default', 'GL-3', '2026-11-20', null, 'EUR', -70.0000, null, null),
    ('other-entity', 'GL-9', '2026-11-20', null, 'EUR', 99, null, null);`;
const BOOKS_QUERY = 'select ccy as currency, closing as balance from gl_closing_balances where value_date = $1::date and entity = $2 order by ccy';
const ENTRIES_QUERY = `select line_id as entry_id, posted_on as booking_date, value_on as value_date, ccy as currency, amt as amount, ref as reference, memo as description
  from gl_lines where posted_on = $1::date and entity = $2 order by line_id`;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  ledger = await createLedgerDatabase();
  await ledger.exec(LEDGER_SCHEMA);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-books-pull-entries-'));
  writeFileSync(path.join(dir, 'ledger-books.sql'), BOOKS_QUERY);
  writeFileSync(path.join(dir, 'ledger-entries.sql'), ENTRIES_QUERY);
  writeFileSync(path.join(dir, 'ledger-url'), `${ledger.url}\n`, { mode: 0o600 });
  env = {
    DATABASE_URL: '',
    ...t.childEnv,
    LOG_LEVEL: 'silent',
    RECON_TIMEZONE: 'UTC',
    RECON_BOOKS_SQL_FILE: path.join(dir, 'ledger-books.sql'),
    RECON_BOOKS_ENTRIES_SQL_FILE: path.join(dir, 'ledger-entries.sql'),
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
const storedEntries = () =>
  withDb((db) => db.selectFrom('books_entries').select(['account', 'booking_date', 'value_date', 'currency', 'amount', 'scale', 'reference', 'description', 'entry_key']).orderBy('entry_key').execute());
const entryImports = () =>
  withDb((db) => db.selectFrom('books_imports').select(['source', 'format', 'amounts', 'rows', 'sql_query']).where('source', '=', 'sql:ledger-entries.sql').orderBy('id').execute());
function sqlFile(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe(`books entries pulled from the merchant's ledger database (${backend})`, { timeout: 180_000 }, () => {
  it('books pull runs the entries query beside the books query and imports its lines as ledger import --entries does', async () => {
    await cli(['books', 'pull', '--date', '2026-11-19', '--account', 'default']);
    const pulled = await cli(['books', 'pull', '--date', '2026-11-20']);
    expect(pulled.stderr).toBe('');
    expect(pulled.code).toBe(0);
    expect(pulled.stdout).toContain('Imported 1 expected balance from sql:ledger-books.sql for default, 2026-11-20: 1 new, 0 changed, 0 unchanged, 0 removed.');
    expect(pulled.stdout).toContain('Imported 3 books entries from sql:ledger-entries.sql for default, 2026-11-20: 3 new, 0 changed, 0 unchanged; matching made 0 matches.');
    // Both given: the roll-forward proves them (1,000.00 + 2,030.00 = 3,030.00).
    expect(pulled.stdout).toContain('Roll-forward default EUR 2026-11-20: closing 1,000.00 (2026-11-19) + entries 2,030.00 = closing 3,030.00.');
    expect(await storedEntries()).toEqual([
      { account: 'default', booking_date: '2026-11-20', value_date: '2026-11-21', currency: 'EUR', amount: '250000', scale: 2, reference: 'B7-1', description: 'payout', entry_key: 'id:GL-1' },
      { account: 'default', booking_date: '2026-11-20', value_date: null, currency: 'EUR', amount: '-40000', scale: 2, reference: 'B7-2', description: 'supplier', entry_key: 'id:GL-2' },
      { account: 'default', booking_date: '2026-11-20', value_date: null, currency: 'EUR', amount: '-7000', scale: 2, reference: null, description: null, entry_key: 'id:GL-3' },
    ]);
    expect(await entryImports()).toEqual([{ source: 'sql:ledger-entries.sql', format: 'sql', amounts: 'major', rows: 3, sql_query: ENTRIES_QUERY }]);
  });

  it('imports nothing twice, and imports what the ledger changed or added', async () => {
    const again = await cli(['books', 'pull', '--date', '2026-11-20']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Books entries of account "default" for 2026-11-20 from sql:ledger-entries.sql are already up to date (3 entries); nothing was imported.');
    expect(await entryImports()).toHaveLength(1);

    await ledger.exec(`update gl_lines set amt = -75 where line_id = 'GL-3'; insert into gl_lines values ('default', 'GL-4', '2026-11-20', null, 'EUR', 0.05, null, 'interest')`);
    const dry = await cli(['books', 'pull', '--date', '2026-11-20', '--dry-run']);
    expect(dry.stdout).toContain('Dry run, nothing written: 4 books entries from sql:ledger-entries.sql for default, 2026-11-20 would give 1 new, 1 changed, 2 unchanged; matching would make 0 matches.');
    expect(await entryImports()).toHaveLength(1);
    const changed = await cli(['books', 'pull', '--date', '2026-11-20']);
    expect(changed.code).toBe(0);
    expect(changed.stdout).toContain('Imported 4 books entries from sql:ledger-entries.sql for default, 2026-11-20: 1 new, 1 changed, 2 unchanged; matching made 0 matches.');
    expect(changed.stdout).toContain('entries 2,025.05 ≠ closing 3,030.00: a break, residual 4.95.');
    expect((await storedEntries()).map((e) => [e.entry_key, e.amount])).toEqual([['id:GL-1', '250000'], ['id:GL-2', '-40000'], ['id:GL-3', '-7500'], ['id:GL-4', '5']]);
    expect(await entryImports()).toHaveLength(2);
  });

  it("refuses the ledger's lines as it refuses a file's: naming the row and the value, importing nothing", async () => {
    const before = await storedEntries();
    const precise = sqlFile('precise.sql', "select '2026-11-20' as booking_date, 'EUR' as currency, 1.005::numeric as amount, 'X-1' as entry_id where $1::date is not null");
    const refused = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: '', RECON_BOOKS_ENTRIES_SQL_FILE: precise });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('sql:precise.sql row 1: amount 1.005 has 3 decimals but EUR has 2');
    const twice = sqlFile('twice.sql', "select '2026-11-20' as booking_date, 'EUR' as currency, n::numeric as amount, 'X-1' as entry_id, $2 as account from generate_series(1, 2) n where $1::date is not null");
    const duplicate = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: '', RECON_BOOKS_ENTRIES_SQL_FILE: twice });
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('sql:twice.sql row 2: duplicate of row 1 (account default, entry_id X-1)');
    const odd = sqlFile('odd.sql', "select '2026-11-20' as booking_date, 'EUR' as currency, 1 as amount, 'red' as colour where $1::date is not null");
    const unknown = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: '', RECON_BOOKS_ENTRIES_SQL_FILE: odd });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('sql:odd.sql row 1: unknown field "colour"');
    const columns = sqlFile('columns.sql', 'select ccy, amt from gl_lines where posted_on = $1::date');
    const wrong = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: '', RECON_BOOKS_ENTRIES_SQL_FILE: columns });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('The books entries query columns.sql returned the columns ccy, amt; it must return booking_date, currency and amount (missing booking_date, currency, amount).');
    expect(await storedEntries()).toEqual(before);
    expect(await entryImports()).toHaveLength(2);
  });

  it('respects a signed-off date: the pull is refused whole', async () => {
    await ledger.exec(`insert into gl_lines values ('default', 'GL-5', '2026-11-19', null, 'EUR', 1, null, 'late line')`);
    // Prepared by one person, approved by another: the date is locked.
    await withDb(async (db) => {
      await sql`insert into signoffs (account_set, business_date, prepared_by, prepared_at, report_sha256, report_html, inputs)
        values (array['default'], '2026-11-19', 'anna', now(), repeat('a', 64), '<p>', '{}'::jsonb)`.execute(db);
      await sql`update signoffs set approved_by = 'ben', approved_at = now() where business_date = '2026-11-19'`.execute(db);
    });
    const locked = await cli(['books', 'pull', '--date', '2026-11-19'], { RECON_BOOKS_SQL_FILE: '' });
    expect(locked.code).toBe(2);
    expect(locked.stderr).toContain('2026-11-19 of account "default" is signed off and locked');
    expect((await storedEntries()).map((e) => e.entry_key)).not.toContain('id:GL-5');
  });

  it('never prints the ledger database password; needs the ledger database when only an entries query is set', async () => {
    const url = new URL(ledger.url.startsWith('postgres://postgres@localhost') ? 'postgres://postgres@127.0.0.1:1/ledger' : ledger.url);
    url.password = 'ledger-pw-do-not-print';
    url.port = '1';
    const unreachable = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: '', RECON_BOOKS_DATABASE_URL_FILE: '', RECON_BOOKS_DATABASE_URL: url.toString() });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/The books entries query ledger-entries\.sql failed against RECON_BOOKS_DATABASE_URL for account "default", 2026-11-20: .*ECONNREFUSED/);
    expect(`${unreachable.stdout}${unreachable.stderr}`).not.toContain('ledger-pw-do-not-print');

    const halfConfigured = await cli(['books', 'pull', '--date', '2026-11-20'], { RECON_BOOKS_SQL_FILE: '', RECON_BOOKS_DATABASE_URL_FILE: '' });
    expect(halfConfigured.code).toBe(2);
    expect(halfConfigured.stderr).toContain('RECON_BOOKS_DATABASE_URL (or RECON_BOOKS_DATABASE_URL_FILE) is required when a books query is configured (RECON_BOOKS_ENTRIES_SQL_FILE)');
  });
});
