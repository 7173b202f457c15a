import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectFormat, duplicateProblem, noRows, openBalanceFile, parseBalanceFile, readBalanceFile, validateRows } from '../../src/books/books-file.js';
import { InputFileError } from '../../src/errors.js';

const dir = mkdtempSync(path.join(tmpdir(), 'wr-books-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const at = path.join(dir, name);
  writeFileSync(at, text);
  return at;
};
const major = { amounts: 'major', knownAccounts: ['default'] } as const;
const minor = { amounts: 'minor', knownAccounts: ['default'] } as const;

function problemsOf(fn: () => unknown): { message: string; problems: string[] } {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputFileError);
    return { message: (error as InputFileError).message, problems: [...(error as InputFileError).problems] };
  }
  throw new Error('expected an InputFileError');
}

async function collect(filePath: string, options: Parameters<typeof openBalanceFile>[1], batchRows?: number) {
  const opened = await openBalanceFile(filePath, options, batchRows);
  const batches = [];
  for await (const batch of opened.batches) batches.push(batch);
  return { ...opened, batches };
}

describe('books files opened for streaming (openBalanceFile)', () => {
  it('hands the valid rows over in batches of at most batchRows, problems apart', async () => {
    const csv = file('five.csv', 'business_date,currency,balance\n2026-11-20,EUR,1.00\n2026-11-20,USD,2.00\n2026-11-20,JPY,3\n2026-11-20,GBP,x\n2026-11-20,KWD,0.005\n2026-11-20,CHF,6.00\n');
    const opened = await collect(csv, major, 2);
    expect(opened).toMatchObject({ name: 'five.csv', format: 'csv', unit: 'line' });
    expect(opened.batches.map((b) => b.map((r) => [r.line, r.currency, r.balance]))).toEqual([
      [
        [2, 'EUR', 100n],
        [3, 'USD', 200n],
      ],
      [
        [4, 'JPY', 3n],
        [6, 'KWD', 5n],
      ],
      [[7, 'CHF', 600n]],
    ]);
    expect(opened.problems.listed).toEqual(['five.csv line 5: balance "x" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)']);
    expect(opened.problems.count).toBe(1);
    // A whole batch is not followed by an empty one.
    expect((await collect(csv, { ...major, knownAccounts: ['default'] }, 5)).batches.map((b) => b.length)).toEqual([5]);
  });

  it('reads JSON lines leaving title lines, blank lines, a BOM and footer lines out', async () => {
    const jsonl = file(
      'export.jsonl',
      [
        'Balances as of 2026-11-20',
        '{"business_date":"2026-11-20","currency":"EUR","balance":"9007199254740993"}',
        '   ',
        '{"business_date":"2026-11-20","currency":"JPY","balance":5}',
        '{"total":"9007199254740998"}',
      ].join('\n'),
    );
    const opened = await collect(jsonl, { ...minor, skipRows: 1, skipFooter: 1 });
    expect(opened).toMatchObject({ format: 'jsonl', unit: 'line' });
    expect(opened.batches.flat()).toEqual([
      { line: 2, account: 'default', businessDate: '2026-11-20', currency: 'EUR', balance: 9007199254740993n },
      { line: 4, account: 'default', businessDate: '2026-11-20', currency: 'JPY', balance: 5n },
    ]);
    expect(opened.skipped).toEqual([expect.objectContaining({ line: 5 })]);
    expect(opened.problems.count).toBe(0);

    const bom = file('bom.jsonl', '\uFEFF{"business_date":"2026-11-20","currency":"EUR","balance":1}\n\n{"business_date":"2026-11-20","currency":"USD","balance":2}\n');
    expect((await readBalanceFile(bom, minor)).rows.map((r) => [r.line, r.currency])).toEqual([
      [1, 'EUR'],
      [3, 'USD'],
    ]);
  });

  it('reads a CSV file skipping the lines above its header and footer rows', async () => {
    const csv = file('titled.csv', 'Export of 2026-11-20\nbusiness_date,currency,balance\n2026-11-20,EUR,1.00\n2026-11-20,USD,2.00\nprinted by ledger\n');
    const { rows, format, skipped } = await readBalanceFile(csv, { ...major, skipRows: 1, skipFooter: 1 });
    expect(format).toBe('csv');
    expect(rows.map((r) => [r.line, r.currency, r.balance])).toEqual([
      [3, 'EUR', 100n],
      [4, 'USD', 200n],
    ]);
    expect(skipped).toEqual([expect.objectContaining({ line: 5 })]);
  });

  it('refuses a file holding duplicates or bad rows, naming every line, and a file without rows', async () => {
    const csv = file('dup.csv', 'business_date,currency,balance\n2026-11-20,EUR,1.00\n2026-11-20,EUR,2.00\n2026-11-20,USD,x\n');
    await expect(readBalanceFile(csv, major)).rejects.toThrow(
      'dup.csv has 2 problems; nothing was imported:\n' +
        '  - dup.csv line 3: duplicate of line 2 (account default, business_date 2026-11-20, currency EUR)\n' +
        '  - dup.csv line 4: balance "x" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)',
    );
    await expect(readBalanceFile(file('empty.jsonl', '\n\n'), minor)).rejects.toThrow('empty.jsonl holds no rows: expected a header business_date,currency,balance[,account] and at least one row.');
  });
});

describe('a balance of only spaces is missing, never a row dropped without a word', () => {
  it('refuses the whole file naming the line, in CSV and in JSON lines', () => {
    expect(problemsOf(() => parseBalanceFile('business_date,currency,balance\n2026-11-20,EUR,   \n2026-11-20,USD,1.00\n', 'b.csv', major)).problems).toEqual(['b.csv line 2: balance is missing']);
    expect(problemsOf(() => parseBalanceFile('{"business_date":"2026-11-20","currency":"EUR","balance":" "}\n', 'b.jsonl', minor)).message).toBe('b.jsonl line 1: balance is missing; nothing was imported.');
  });

  it('still refuses an amount with spaces around it, suggesting the amount alone', () => {
    expect(problemsOf(() => parseBalanceFile('business_date,currency,balance\n2026-11-20,EUR,"1.00 "\n', 'b.csv', major)).problems).toEqual([
      'b.csv line 2: balance "1.00 " has spaces around it; write the amount alone, e.g. 1.00',
    ]);
  });
});

describe('problems are listed in line order and counted past the first thousand', () => {
  it('puts a duplicate found after reading back in its line’s place', () => {
    const text = 'business_date,currency,balance\n2026-11-20,EUR,1.00\n2026-11-20,EUR,1.00\n2026-11-20,USD,bad\n';
    expect(problemsOf(() => parseBalanceFile(text, 'b.csv', major)).problems).toEqual([
      'b.csv line 3: duplicate of line 2 (account default, business_date 2026-11-20, currency EUR)',
      'b.csv line 4: balance "bad" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)',
    ]);
  });

  it('lists the first 1000 problems and counts the rest', () => {
    const lines = Array.from({ length: 1003 }, (_, i) => `2026-11-20,EUR,x${i}`);
    const { message, problems } = problemsOf(() => parseBalanceFile(`business_date,currency,balance\n${lines.join('\n')}\n`, 'many.csv', major));
    expect(problems).toHaveLength(1000);
    expect(problems[0]).toBe('many.csv line 2: balance "x0" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)');
    expect(problems[999]).toBe('many.csv line 1001: balance "x999" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)');
    expect(message.startsWith('many.csv has 1003 problems; nothing was imported:\n  - many.csv line 2: ')).toBe(true);
    expect(message.endsWith('x999" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)\n  … and 3 more')).toBe(true);
  });

  it('says nothing of more when every problem is listed', () => {
    const { message } = problemsOf(() => parseBalanceFile('business_date,currency,balance\n2026-11-20,EUR,x\n2026-11-20,USD,y\n', 'two.csv', major));
    expect(message).toBe(
      'two.csv has 2 problems; nothing was imported:\n' +
        '  - two.csv line 2: balance "x" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)\n' +
        '  - two.csv line 3: balance "y" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)',
    );
  });
});

describe('rows checked one by one (validateRows)', () => {
  const raw = (line: number, fields: Record<string, unknown>, unit: 'line' | 'row' = 'row') => ({ line, unit, fields });

  it('refuses a day that has not begun, naming today and its zone', () => {
    const notAfter = { date: '2026-11-20', timezone: 'Europe/Berlin' };
    expect(validateRows([raw(2, { business_date: '2026-11-20', currency: 'EUR', balance: '1' })], 'ledger', { ...major, notAfter })).toHaveLength(1);
    expect(problemsOf(() => validateRows([raw(3, { business_date: '2026-11-21', currency: 'EUR', balance: '1' })], 'ledger', { ...major, notAfter })).problems).toEqual([
      'ledger row 3: business_date 2026-11-21 is after the current business date (2026-11-20 in Europe/Berlin); books cannot hold a day that has not begun',
    ]);
  });

  it('names duplicates by the unit of the rows (spreadsheet rows, query rows)', () => {
    const row = { business_date: '2026-11-20', currency: 'EUR', balance: '1' };
    expect(problemsOf(() => validateRows([raw(2, row), raw(5, row)], 'query', major)).problems).toEqual(['query row 5: duplicate of row 2 (account default, business_date 2026-11-20, currency EUR)']);
    expect(duplicateProblem('b.xlsx', 'row', 7, 4, { account: 'a', businessDate: '2026-11-01', currency: 'JPY' })).toBe('b.xlsx row 7: duplicate of row 4 (account a, business_date 2026-11-01, currency JPY)');
    expect(() => validateRows([], 'query', major)).toThrow(noRows('query'));
    expect(noRows('query').problems).toEqual(['query: no rows']);
  });

  it('keeps problems found while reading, in line order with the rows’ own', () => {
    const { problems } = problemsOf(() => validateRows([raw(4, { business_date: '2026-11-20', currency: 'EUR', balance: 'x' }, 'line')], 'b.csv', major, ['b.csv line 2: has 2 fields']));
    expect(problems).toEqual(['b.csv line 2: has 2 fields', 'b.csv line 4: balance "x" is not an amount such as 1234.56, -1234.56, 1,234.56 or (1,234.56)']);
  });
});

describe('the format of a file', () => {
  it('goes by the extension, then by the bytes: a zip is a workbook, a brace JSON lines', () => {
    expect(detectFormat('a.TSV', '{')).toBe('csv');
    expect(detectFormat('a.xlsx', 'x')).toBe('xlsx');
    expect(detectFormat('upload', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14]))).toBe('xlsx');
    expect(detectFormat('upload', Buffer.from([0x50, 0x4b, 0x03, 0x05]))).toBe('csv');
    expect(detectFormat('upload', Buffer.from('\uFEFF\n  {"a":1}'))).toBe('jsonl');
    expect(detectFormat('upload', Buffer.from('business_date,{'))).toBe('csv');
    expect(detectFormat('upload', `${' '.repeat(70)}{`)).toBe('jsonl');
  });
});
