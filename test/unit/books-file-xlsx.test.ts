import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { openBalanceFile, readBalanceFile } from '../../src/books/books-file.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wr-books-xlsx-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A workbook as a finance team keeps books: a title row, a header, real dates and number cells. */
async function workbook(name: string, rows: unknown[][]): Promise<string> {
  const book = new ExcelJS.Workbook();
  const sheet = book.addWorksheet('Balances');
  for (const row of rows) sheet.addRow(row);
  const file = path.join(dir, name);
  writeFileSync(file, Buffer.from(await book.xlsx.writeBuffer()));
  return file;
}
const day = new Date(Date.UTC(2026, 10, 20));

describe('books kept in a workbook (.xlsx)', () => {
  it('reads date cells as dates and number cells exactly, by spreadsheet row, under a title row', async () => {
    const file = await workbook('books.xlsx', [
      ['Closing balances, November'],
      ['business_date', 'currency', 'balance'],
      [day, 'EUR', 1234.56],
      [day, 'JPY', 1500],
      ['20.11.2026', 'KWD', '1.234,567'],
    ]);
    const opened = await openBalanceFile(file, { amounts: 'major', knownAccounts: ['default'], skipRows: 1, dateFormat: 'DD.MM.YYYY', decimalMark: 'comma' });
    expect(opened).toMatchObject({ name: 'books.xlsx', format: 'xlsx', unit: 'row' });
    const rows = [];
    for await (const batch of opened.batches) rows.push(...batch);
    expect(rows).toEqual([
      { line: 3, account: 'default', businessDate: '2026-11-20', currency: 'EUR', balance: 123456n },
      { line: 4, account: 'default', businessDate: '2026-11-20', currency: 'JPY', balance: 1500n },
      { line: 5, account: 'default', businessDate: '2026-11-20', currency: 'KWD', balance: 1234567n },
    ]);
    expect(opened.problems.count).toBe(0);
  });

  it('names the spreadsheet row of each problem, a date cell where a code belongs included', async () => {
    const file = await workbook('bad.xlsx', [
      ['business_date', 'currency', 'balance'],
      [day, 'EUR', 1234.565],
      ['20/11/2026', 'USD', 1],
      [day, day, 1],
      [day, 'GBP', '(1,234.56)'],
    ]);
    await expect(readBalanceFile(file, { amounts: 'major', knownAccounts: ['default'] })).rejects.toThrow(
      'bad.xlsx has 3 problems; nothing was imported:\n' +
        '  - bad.xlsx row 2: balance 1234.565 has 3 decimals but EUR has 2\n' +
        '  - bad.xlsx row 3: business_date "20/11/2026" is not a real date in the form YYYY-MM-DD; pass --date-format, e.g. --date-format DD/MM/YYYY\n' +
        '  - bad.xlsx row 4: currency 2026-11-20 is not a three-letter currency code such as EUR',
    );
  });

  it('reads number cells with a decimal point whatever the text amounts’ mark is', async () => {
    const file = await workbook('comma.xlsx', [
      ['business_date', 'currency', 'balance'],
      [day, 'EUR', 1.5],
    ]);
    const { rows } = await readBalanceFile(file, { amounts: 'major', knownAccounts: ['default'], decimalMark: 'comma' });
    expect(rows.map((r) => r.balance)).toEqual([150n]);
  });
});
