import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectFormat, openBalanceFile, parseBalanceFile, ProblemList } from '../../src/books/books-file.js';
import { InputFileError } from '../../src/errors.js';

// The edges of books files that the main tests (books-file-stream, ledger-books-file) leave out:
// text files read whole with --skip-rows and --skip-footer, JSON values that are not text, and
// the precise reasons given for refused minor-unit balances.

const dir = mkdtempSync(path.join(tmpdir(), 'wr-books-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const major = { amounts: 'major', knownAccounts: ['default'] } as const;
const minor = { amounts: 'minor', knownAccounts: ['default'] } as const;
const jsonLine = (fields: Record<string, unknown>) => `${JSON.stringify({ business_date: '2026-11-20', currency: 'EUR', ...fields })}\n`;
const rowsOf = (rows: ReturnType<typeof parseBalanceFile>) => rows.map((r) => [r.line, r.businessDate, r.balance]);

/** The problems of a refused file, one sentence each. */
function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputFileError);
    return [...(error as InputFileError).problems];
  }
  throw new Error('expected an InputFileError');
}

describe('a books file read whole (parseBalanceFile)', () => {
  it('leaves out the lines above the header and the footer of a CSV text', () => {
    const text = 'Export of 2026-11-21\nbusiness_date,currency,balance\n2026-11-20,EUR,1.00\n2026-11-21,EUR,2.00\nprinted by x,,\n';
    expect(rowsOf(parseBalanceFile(text, 'b.csv', { ...major, skipRows: 1, skipFooter: 1 }))).toEqual([
      [3, '2026-11-20', 100n],
      [4, '2026-11-21', 200n],
    ]);
  });

  it('leaves out the first lines and the footer of a JSON lines text, counting lines from 1', () => {
    const text = `# export\n${jsonLine({ balance: '1.00' })}${jsonLine({ business_date: '2026-11-21', balance: '2.00' })}{"count":2}\n`;
    expect(rowsOf(parseBalanceFile(text, 'b.jsonl', { ...major, skipRows: 1, skipFooter: 1 }))).toEqual([
      [2, '2026-11-20', 100n],
      [3, '2026-11-21', 200n],
    ]);
  });

  it('reads JSON keys through the column map', () => {
    expect(rowsOf(parseBalanceFile('{"business_date":"2026-11-20","currency":"EUR","saldo":"12.00"}\n', 'b.jsonl', { ...major, map: { balance: 'saldo' } }))).toEqual([[1, '2026-11-20', 1200n]]);
  });

  it('refuses a last line "Total" in JSON lines as not JSON: JSON lines have no total rows to leave out', () => {
    expect(problemsOf(() => parseBalanceFile(`${jsonLine({ balance: '1.00' })}Total\n`, 'b.jsonl', major))).toEqual([expect.stringMatching(/^b\.jsonl line 2: not valid JSON: /)]);
  });

  it('reads a .txt file as CSV whatever its first character', () => {
    expect(detectFormat('books.txt', '{"business_date":"2026-11-20"}')).toBe('csv');
  });
});

describe('JSON values that are not text', () => {
  it('says once that a null field is missing', () => {
    expect(problemsOf(() => parseBalanceFile('{"business_date":null,"currency":null,"balance":null}\n', 'b.jsonl', major))).toEqual([
      'b.jsonl line 1: business_date is missing',
      'b.jsonl line 1: currency is missing',
      'b.jsonl line 1: balance is missing',
    ]);
  });

  it('refuses a balance that is neither text nor a number, and a date number in a text date format', () => {
    expect(problemsOf(() => parseBalanceFile(jsonLine({ balance: true }), 'b.jsonl', major))).toEqual(['b.jsonl line 1: balance (a boolean) is not an amount such as 1234.56']);
    expect(problemsOf(() => parseBalanceFile(jsonLine({ business_date: 20261120, balance: '1.00' }), 'b.jsonl', { ...major, dateFormat: 'DD.MM.YYYY' }))).toEqual([
      'b.jsonl line 1: business_date (an integer) is not a real date in the form DD.MM.YYYY',
    ]);
  });

  it('names the balance column of an ambiguous amount in a row without a header', () => {
    expect(problemsOf(() => parseBalanceFile(jsonLine({ balance: '1.500' }), 'b.jsonl', { ...major, decimalMark: 'unstated' }))).toEqual([
      expect.stringMatching(/^b\.jsonl line 1, column "balance": balance "1\.500" is ambiguous for EUR/),
    ]);
  });
});

describe('dates in the wrong form', () => {
  const dateProblem = (date: string, options: object = {}) => problemsOf(() => parseBalanceFile(jsonLine({ business_date: date, balance: '1.00' }), 'b.jsonl', { ...major, ...options }))[0];

  it('suggests --date-format only for an ISO file given a whole day.month.year date', () => {
    expect(dateProblem('31.02.2026')).toMatch(/in the form YYYY-MM-DD; pass --date-format, e\.g\. --date-format DD\.MM\.YYYY$/);
    // Already given a format: the date is wrong, not the format.
    expect(dateProblem('31.02.2026', { dateFormat: 'DD.MM.YYYY' })).toBe('b.jsonl line 1: business_date "31.02.2026" is not a real date in the form DD.MM.YYYY');
    for (const date of ['120.11.2026', '20.11.20261']) expect(dateProblem(date)).toBe(`b.jsonl line 1: business_date "${date}" is not a real date in the form YYYY-MM-DD`);
  });
});

describe('refused minor-unit balances: the reason given fits the text', () => {
  const minorProblem = (balance: unknown) => problemsOf(() => parseBalanceFile(jsonLine({ balance }), 'b.jsonl', minor))[0];
  const general = 'is not an exact integer in minor units (digits with an optional minus, at most 38 digits; no decimal point, exponent or separators)';

  it('points at leading zeros, a plus sign or too many digits only when that is the whole fault', () => {
    expect(minorProblem('-0012')).toBe('b.jsonl line 1: balance "-0012" has leading zeros; write the amount without them, e.g. -12');
    expect(minorProblem('+12')).toBe('b.jsonl line 1: balance "+12" has a plus sign; write the amount without it, e.g. 12');
    expect(minorProblem(`-${'1'.repeat(39)}`)).toBe(`b.jsonl line 1: balance "-${'1'.repeat(39)}" has 39 digits, more than the 38 a balance can hold`);
    // Advice that would leave the amount still refused is not given.
    for (const balance of ['2026-05', '007.50', '+5.00', '1+5', `${'1'.repeat(39)}.00`]) {
      expect(minorProblem(balance)).toBe(`b.jsonl line 1: balance ${JSON.stringify(balance)} ${general}`);
    }
  });

  it('refuses a JSON integer of more than 38 digits with the general reason', () => {
    expect(problemsOf(() => parseBalanceFile(`{"business_date":"2026-11-20","currency":"EUR","balance":${'1'.repeat(40)}}\n`, 'b.jsonl', minor))).toEqual([`b.jsonl line 1: balance (an integer) ${general}`]);
  });
});

describe('problems of a file', () => {
  it('lists a problem of the whole file before those of its lines', () => {
    const list = new ProblemList();
    list.add('b.csv line 3: balance "x" is not an amount such as 1234.56');
    list.add('b.csv: the header has no balance column');
    expect(() => list.throwIfAny('b.csv')).toThrow('b.csv has 2 problems; nothing was imported:\n  - b.csv: the header has no balance column\n  - b.csv line 3: balance "x" is not an amount such as 1234.56');
  });

  it('says when a path cannot be read as a file, keeping the system error as the cause', async () => {
    const error: unknown = await openBalanceFile(dir, major).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).message).toBe(`Could not read ${dir}: EISDIR: illegal operation on a directory, read.`);
    expect(((error as InputFileError).cause as NodeJS.ErrnoException).code).toBe('EISDIR');
  });

  it('lists a JSON line that is not JSON while streaming, and reads the lines around it', async () => {
    const at = path.join(dir, 'one-bad.jsonl');
    writeFileSync(at, `${jsonLine({ balance: '1.00' })}{oops\n${jsonLine({ business_date: '2026-11-19', balance: '2.00' })}`);
    const opened = await openBalanceFile(at, major);
    const rows = [];
    for await (const batch of opened.batches) rows.push(...batch);
    expect(rows.map((r) => [r.line, r.balance])).toEqual([
      [1, 100n],
      [3, 200n],
    ]);
    expect(opened.problems.listed).toEqual([expect.stringMatching(/^one-bad\.jsonl line 2: not valid JSON: /)]);
  });

  it('records the footer lines of streamed JSON lines as skipped lines, and lists a CSV header problem', async () => {
    const jsonl = path.join(dir, 'footer.jsonl');
    writeFileSync(jsonl, `${jsonLine({ balance: '1.00' })}{"count":1}\n`);
    const opened = await openBalanceFile(jsonl, { ...major, skipFooter: 1 });
    for await (const batch of opened.batches) expect(batch.map((r) => r.line)).toEqual([1]);
    expect(opened.skipped).toEqual([{ line: 2, unit: 'line', why: 'footer (--skip-footer)' }]);

    const csv = path.join(dir, 'no-balance.csv');
    writeFileSync(csv, 'business_date,currency\n2026-11-20,EUR\n');
    const table = await openBalanceFile(csv, major);
    for await (const batch of table.batches) expect(batch).toEqual([]);
    expect(table.problems.count).toBeGreaterThan(0);
    expect(table.problems.listed[0]).toMatch(/^no-balance\.csv/);
  });
});
