import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.types.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one handle at a time: the CLI opens it per command.
  if (backend === 'embedded') await t.handle.close();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-books-cli-'));
  // DATABASE_URL '' keeps a developer's .env from pointing the embedded run elsewhere.
  env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (args: string[], extraEnv: Record<string, string> = {}) => runCliInProcess(args, { ...env, ...extraEnv });

function file(name: string, content: string | Buffer): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

/** Every stored books row and import, to compare a database before and after a command. */
async function booksTables() {
  return withDb(async (db) => ({
    balances: await db.selectFrom('expected_balances').selectAll().orderBy('business_date').orderBy('currency').execute(),
    imports: await db.selectFrom('books_imports').selectAll().orderBy('id').execute(),
  }));
}

async function storedBooks(date: string) {
  return withDb((db) => db.selectFrom('expected_balances').select(['account', 'business_date', 'currency', 'balance']).where('business_date', '=', date).orderBy('currency').execute());
}

/** The same books an ERP exports as CSV, as a finance team keeps them in a workbook: real dates, number cells, a float sum. */
async function booksWorkbook(rows: Array<[Date | string, string, number | string]>): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Balances');
  sheet.addRow(['Date', 'Currency', 'Closing balance']);
  for (const row of rows) sheet.addRow(row);
  sheet.getColumn(1).numFmt = 'dd/mm/yyyy';
  sheet.getColumn(3).numFmt = '#,##0.00;(#,##0.00)';
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

describe(`ledger import of books as they are exported (${backend})`, () => {
  it('imports a semicolon CSV with decimal commas and DD/MM/YYYY dates, and the same books as an .xlsx, to identical stored books', async () => {
    const csv = file('erp-export.csv', '\uFEFFDate;Currency;Closing balance\r\n21/11/2026;eur;1.234,56\r\n21/11/2026;USD;(2.000,10)\r\n21/11/2026;JPY;1.500\r\n21/11/2026;KWD;0,125\r\n');
    const fromCsv = await cli(['ledger', 'import', csv, '--decimal-comma', '--date-format', 'DD/MM/YYYY', '--map', 'business_date=Date,currency=Currency,balance="Closing balance"']);
    expect(fromCsv.stderr).toBe('');
    expect(fromCsv).toMatchObject({ code: 0, stdout: 'Imported 4 expected balances from erp-export.csv for default, 2026-11-21: 4 new, 0 changed, 0 unchanged, 0 removed.' });
    const stored = await storedBooks('2026-11-21');
    expect(stored).toEqual([
      { account: 'default', business_date: '2026-11-21', currency: 'EUR', balance: '123456' },
      { account: 'default', business_date: '2026-11-21', currency: 'JPY', balance: '1500' },
      { account: 'default', business_date: '2026-11-21', currency: 'KWD', balance: '125' },
      { account: 'default', business_date: '2026-11-21', currency: 'USD', balance: '-200010' },
    ]);

    // The workbook's map, date format and decimal comma are the account's saved books settings.
    const accounts = file(
      'accounts.json',
      JSON.stringify({
        accounts: [{ name: 'default', environment: 'sandbox', apiKeyEnv: 'GATEWAY_API_KEY', apiSecretEnv: 'GATEWAY_API_SECRET', books: { map: { business_date: 'Date', balance: 'Closing balance' }, dateFormat: 'DD/MM/YYYY', decimalComma: true } }],
      }),
    );
    const day = new Date(Date.UTC(2026, 10, 21));
    // 1234.56 as a spreadsheet sum (1000.11 + 234.45 is 1234.5600000000002 in binary floating point).
    const xlsx = file('books.xlsx', await booksWorkbook([[day, 'EUR', 1000.11 + 234.45], [day, 'usd', -2000.1], ['21/11/2026', 'JPY', 1500], [day, 'KWD', '0,125']]));
    const fromXlsx = await cli(['ledger', 'import', xlsx], { RECON_ACCOUNTS_FILE: accounts });
    expect(fromXlsx.stderr).toBe('');
    expect(fromXlsx).toMatchObject({ code: 0, stdout: 'Imported 4 expected balances from books.xlsx for default, 2026-11-21: 0 new, 0 changed, 4 unchanged, 0 removed.' });
    expect(await storedBooks('2026-11-21')).toEqual(stored);
    const imports = await withDb((db) => db.selectFrom('books_imports').select(['source', 'format', 'amounts', 'rows']).orderBy('id').execute());
    expect(imports).toEqual([
      { source: 'erp-export.csv', format: 'csv', amounts: 'major', rows: 4 },
      { source: 'books.xlsx', format: 'xlsx', amounts: 'major', rows: 4 },
    ]);
  });

  it('refuses 1234.565 for EUR naming the line and the value, in a CSV and in a workbook, and imports nothing', async () => {
    const before = await booksTables();
    const csv = file('too-precise.csv', 'business_date,currency,balance\n2026-11-20,USD,10.00\n2026-11-20,EUR,1234.565\n');
    const refused = await cli(['ledger', 'import', csv]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('too-precise.csv line 3: balance 1234.565 has 3 decimals but EUR has 2');

    const xlsx = file('too-precise.xlsx', await booksWorkbook([[new Date(Date.UTC(2026, 10, 20)), 'EUR', 1234.565]]));
    const refusedXlsx = await cli(['ledger', 'import', xlsx, '--map', 'business_date=Date,balance=Closing balance']);
    expect(refusedXlsx.code).toBe(1);
    expect(refusedXlsx.stderr).toContain('too-precise.xlsx row 2: balance 1234.565 has 3 decimals but EUR has 2');
    expect(await booksTables()).toEqual(before);
  });

  it('--dry-run prints what would change and writes nothing', async () => {
    const before = await booksTables();
    const corrected = file('corrected.csv', 'business_date,currency,balance\n2026-11-21,EUR,"1,300.00"\n2026-11-21,JPY,1500\n2026-11-21,USD,-2000.10\n2026-11-21,GBP,5\n');
    const dry = await cli(['ledger', 'import', corrected, '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.stdout.split('\n')).toEqual([
      'Dry run, nothing written: 4 expected balances from corrected.csv for default, 2026-11-21 would give 1 new, 1 changed, 2 unchanged, 1 removed.',
      '  changed   default 2026-11-21 EUR: 1,234.56 -> 1,300.00',
      '  new       default 2026-11-21 GBP: 5.00',
      '  removed   default 2026-11-21 KWD: 0.125',
      "The import would be refused: it removes a day's stored currencies the file lacks; pass --replace-day to allow that, or add their rows.",
    ]);
    expect(await booksTables()).toEqual(before);

    // The same file for real gives the counts the dry run announced.
    const real = await cli(['ledger', 'import', corrected, '--replace-day']);
    expect(real.stdout).toBe('Imported 4 expected balances from corrected.csv for default, 2026-11-21: 1 new, 1 changed, 2 unchanged, 1 removed.');
  });

  it('keeps minor-unit integers available as --amounts minor, and refuses a bad --date-format or --map before opening the database', async () => {
    const integers = file('minor.csv', 'business_date,currency,balance\n2026-11-19,EUR,150000\n');
    expect((await cli(['ledger', 'import', integers, '--amounts', 'minor'])).code).toBe(0);
    expect(await storedBooks('2026-11-19')).toEqual([{ account: 'default', business_date: '2026-11-19', currency: 'EUR', balance: '150000' }]);
    const badFormat = await cli(['ledger', 'import', integers, '--date-format', 'YY/MM/DD']);
    expect(badFormat).toMatchObject({ code: 2 });
    expect(badFormat.stderr).toContain('--date-format "YY/MM/DD" is not one of: YYYY-MM-DD, DD/MM/YYYY, MM/DD/YYYY, YYYY/MM/DD, DD.MM.YYYY, DD-MM-YYYY.');
    const badMap = await cli(['ledger', 'import', integers, '--map', 'amount=Balance']);
    expect(badMap.code).toBe(2);
    expect(badMap.stderr).toContain('FIELD one of business_date, currency, balance, account');
  });

  it('refuses JPY 250.000 and EUR 1.500 when no decimal mark is stated, and reads them as --decimal-point, --decimal-comma or books.decimalMark say', async () => {
    const before = await booksTables();
    const csv = file('ambiguous.csv', 'business_date;currency;balance\n2026-11-18;JPY;250.000\n2026-11-18;EUR;1.500\n2026-11-18;USD;12.50\n');
    const refused = await cli(['ledger', 'import', csv]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('ambiguous.csv line 2, column "balance": balance "250.000" is ambiguous for JPY: 250 if "." is the decimal mark, 250000 if it groups thousands; say which with --decimal-point or --decimal-comma');
    expect(refused.stderr).toContain('ambiguous.csv line 3, column "balance": balance "1.500" is ambiguous for EUR: 1.50 if "." is the decimal mark, 1500.00 if it groups thousands');
    expect(await booksTables()).toEqual(before);

    const asPoint = await cli(['ledger', 'import', csv, '--decimal-point']);
    expect(asPoint).toMatchObject({ code: 0, stderr: '' });
    expect((await storedBooks('2026-11-18')).map((r) => [r.currency, r.balance])).toEqual([['EUR', '150'], ['JPY', '250'], ['USD', '1250']]);

    const both = await cli(['ledger', 'import', csv, '--decimal-point', '--decimal-comma']);
    expect(both.code).toBe(2);

    // Saved for the account in the accounts file: a comma is the decimal mark, so "." groups thousands.
    const commaCsv = file('ambiguous-comma.csv', 'business_date;currency;balance\n2026-11-18;JPY;250.000\n2026-11-18;EUR;1.500\n2026-11-18;USD;12,50\n');
    const accounts = file(
      'accounts-comma.json',
      JSON.stringify({ accounts: [{ name: 'default', environment: 'sandbox', apiKeyEnv: 'GATEWAY_API_KEY', apiSecretEnv: 'GATEWAY_API_SECRET', books: { decimalMark: 'comma' } }] }),
    );
    const asComma = await cli(['ledger', 'import', commaCsv], { RECON_ACCOUNTS_FILE: accounts });
    expect(asComma).toMatchObject({ code: 0, stderr: '' });
    expect((await storedBooks('2026-11-18')).map((r) => [r.currency, r.balance])).toEqual([['EUR', '150000'], ['JPY', '250000'], ['USD', '1250']]);
  });
});
