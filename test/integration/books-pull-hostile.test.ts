import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerDatabase, type LedgerDatabase } from '../helpers/ledger-database.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// A books query file written by someone who wants more than to read: the ledger database must
// come out of `books pull` exactly as it went in, and no query of ours may outlive its timeout.

let t: TestDatabase;
let ledger: LedgerDatabase;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  ledger = await createLedgerDatabase();
  await ledger.exec(`create table gl (ccy text not null, closing numeric(18, 4) not null); insert into gl values ('EUR', 10.5)`);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-books-hostile-'));
  env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_BOOKS_DATABASE_URL: ledger.url };
}, 180_000);

afterAll(async () => {
  await ledger?.drop();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

function sqlFile(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const pull = (file: string, extra: string[] = [], extraEnv: Record<string, string> = {}) => runCliInProcess(['books', 'pull', '--date', '2026-11-20', ...extra], { ...env, RECON_BOOKS_SQL_FILE: file, ...extraEnv });
const ledgerTables = async () => ((await ledger.rows(`select table_name from information_schema.tables where table_schema = 'public' order by 1`)) as Array<{ table_name: string }>).map((r) => r.table_name);
const importCount = () => withDatabase(t, async (db) => Number((await db.selectFrom('books_imports').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n));

describe(`a hostile books query (${backend})`, { timeout: 120_000 }, () => {
  it('refuses a file of several statements, naming the file, and creates nothing (with or without --dry-run)', async () => {
    const file = sqlFile('hostile.sql', "commit; create table t(x int); select ccy as currency, closing as balance from gl");
    for (const extra of [['--dry-run'], []]) {
      const result = await pull(file, extra);
      expect(result.code, result.stderr).not.toBe(0);
      expect(result.stderr).toContain(`The books query ${file} holds more than one SQL statement`);
      expect(result.stderr).toContain('Nothing was run.');
    }
    expect(await ledgerTables()).toEqual(['gl']);
    expect(await importCount()).toBe(0);
    // With the parameters too: a trailing statement after a valid one is no way round it.
    const withParams = await pull(sqlFile('hostile-params.sql', "select ccy as currency, closing as balance from gl where $1::date is not null; drop table gl"));
    expect(withParams.code).not.toBe(0);
    expect(await ledgerTables()).toEqual(['gl']);
  });

  it('runs the query read only whatever it says, in one statement without parameters too', async () => {
    const writer = await pull(sqlFile('writer.sql', "with w as (insert into gl values ('USD', 1) returning ccy, closing) select ccy as currency, closing as balance from w"));
    expect(writer.code).not.toBe(0);
    expect(writer.stderr).toContain('read-only transaction');
    expect(await ledger.rows(`select ccy from gl order by ccy`)).toEqual([{ ccy: 'EUR' }]);
    const fine = await pull(sqlFile('fine.sql', 'select ccy as currency, closing as balance from gl'), ['--dry-run']);
    expect(fine.code, fine.stderr).toBe(0);
  });

  it.runIf(backend === 'postgres')('sets read-only and the statement timeout for the whole connection, where the query cannot lift them', async () => {
    const probe = await pull(
      sqlFile('probe.sql', "select 'EUR' as currency, case when current_setting('default_transaction_read_only') = 'on' and current_setting('statement_timeout') = '3s' then 1 else 0 end as balance"),
      ['--dry-run'],
      { RECON_BOOKS_STATEMENT_TIMEOUT: '3s' },
    );
    expect(probe.code, probe.stderr).toBe(0);
    expect(probe.stdout).toMatch(/EUR\s+1\.00|EUR.*\b1\b/);
  });

  it.runIf(backend === 'postgres')('leaves no query running on the ledger server once a pg_sleep outlived its timeout', async () => {
    const marker = `wr_sleep_${Date.now()}`;
    const started = Date.now();
    const slow = await pull(sqlFile('sleep.sql', `select 'EUR' as currency, 1 as balance from pg_sleep(30) where '${marker}' <> ''`), [], { RECON_BOOKS_STATEMENT_TIMEOUT: '1s' });
    expect(slow.code).not.toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
    const running = await ledger.rows(`select pid, state, query from pg_stat_activity where query like '%${marker}%' and pid <> pg_backend_pid()`);
    expect(running).toEqual([]);
  });
});
