import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/errors.js';
import { detectFormat, parseBalanceFile, readBalanceFile } from '../../src/reconciliation/books-file.js';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
const one = { knownAccounts: ['default'] };

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputFileError);
    return [...(error as InputFileError).problems];
  }
  throw new Error('expected an InputFileError');
}

describe('books file parsing', () => {
  it('reads CSV with a BOM, CRLF line ends, quoted fields, blank lines and an account column', () => {
    const file = path.join(fixtures, 'books-bom-crlf.csv');
    const rows = parseBalanceFile(readFileSync(file, 'utf8'), file, { knownAccounts: ['acme', 'other'] });
    expect(rows).toEqual([
      { line: 2, account: 'acme', businessDate: '2026-11-20', currency: 'EUR', balance: 1000n },
      { line: 3, account: 'acme', businessDate: '2026-11-20', currency: 'USD', balance: -9007199254740993n },
      { line: 5, account: 'acme', businessDate: '2026-11-21', currency: 'EUR', balance: 0n },
    ]);
  });

  it('reads JSON lines, keeping integers beyond 2^53 exact whether written as numbers or strings', () => {
    const text = '{"business_date":"2026-11-20","currency":"EUR","balance":9007199254740993}\n\n{"business_date":"2026-11-20","currency":"USD","balance":"-12345678901234567890123456789"}\n';
    expect(parseBalanceFile(text, 'books.jsonl', one)).toEqual([
      { line: 1, account: 'default', businessDate: '2026-11-20', currency: 'EUR', balance: 9007199254740993n },
      { line: 3, account: 'default', businessDate: '2026-11-20', currency: 'USD', balance: -12345678901234567890123456789n },
    ]);
  });

  it('names every bad line with its reason and accepts nothing', async () => {
    const file = path.join(fixtures, 'books-bad-rows.csv');
    const error = await readBalanceFile(file, one).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    const problems = (error as InputFileError).problems;
    expect(problems).toEqual([
      'books-bad-rows.csv line 3: business_date "2026-02-30" is not a real date in the form YYYY-MM-DD',
      'books-bad-rows.csv line 4: currency "usd" is not a three-letter upper-case code such as EUR',
      expect.stringMatching(/^books-bad-rows\.csv line 5: balance "12\.50" is not an exact integer in minor units/),
      'books-bad-rows.csv line 6: duplicate of line 2 (account default, business_date 2026-11-20, currency EUR)',
      'books-bad-rows.csv line 7: balance is missing',
      expect.stringMatching(/^books-bad-rows\.csv line 8: balance "1e3" is not an exact integer/),
    ]);
    expect((error as Error).message).toMatch(/^books-bad-rows\.csv has 6 problems; nothing was imported:\n {2}- books-bad-rows\.csv line 3/);
  });

  it('rejects a header without the required columns, naming the allowed ones', () => {
    expect(problemsOf(() => parseBalanceFile('date,currency,amount\n2026-11-20,EUR,1\n', 'b.csv', one))).toEqual([
      'b.csv line 1: the header must name the columns business_date, currency, balance and optionally account (missing business_date, balance; unknown "date", "amount")',
    ]);
  });

  it('reports rows of the wrong width, broken JSON and non-objects by line', () => {
    expect(problemsOf(() => parseBalanceFile('business_date,currency,balance\n2026-11-20,EUR\n', 'b.csv', one))).toEqual(['b.csv line 2: has 2 fields, the header has 3']);
    expect(problemsOf(() => parseBalanceFile('{"business_date":"2026-11-20","currency":"EUR","balance":1}\n{oops\n[1]\n', 'b.jsonl', one))).toEqual([
      expect.stringMatching(/^b\.jsonl line 2: not valid JSON/),
      'b.jsonl line 3: expected an object with business_date, currency, balance, got an array',
    ]);
    expect(problemsOf(() => parseBalanceFile('{"business_date":"2026-11-20","currency":"EUR","balance":1.5,"note":"x"}\n', 'b.jsonl', one))).toEqual([
      'b.jsonl line 1: unknown field "note" (allowed: business_date, currency, balance, account)',
      'b.jsonl line 1: balance (a decimal number) is not an exact integer in minor units (digits with an optional minus, at most 38 digits; no decimal point, exponent or separators)',
    ]);
  });

  it('reports an unclosed quote with its line', () => {
    expect(problemsOf(() => parseBalanceFile('business_date,currency,balance\n2026-11-20,"EUR,1\n', 'b.csv', one))).toEqual([expect.stringMatching(/^b\.csv line 2: not valid CSV: Quote Not Closed/)]);
  });

  describe('account resolution', () => {
    const two = { knownAccounts: ['eu-main', 'us-main'] };
    const csv = 'business_date,currency,balance,account\n2026-11-20,EUR,1,eu-main\n2026-11-20,USD,1,\n';

    it('takes the account column, else --account, else the only configured account', () => {
      expect(parseBalanceFile(csv, 'b.csv', { ...two, account: 'eu-main' }).map((r) => r.account)).toEqual(['eu-main', 'eu-main']);
      expect(parseBalanceFile('business_date,currency,balance\n2026-11-20,EUR,1\n', 'b.csv', one)[0]!.account).toBe('default');
    });

    it('needs an account when several are configured, and refuses a row contradicting --account or naming an unknown one', () => {
      expect(problemsOf(() => parseBalanceFile(csv, 'b.csv', two))).toEqual(['b.csv line 3: no account: add an account column or pass --account (configured: eu-main, us-main)']);
      expect(problemsOf(() => parseBalanceFile(csv, 'b.csv', { ...two, account: 'us-main' }))).toEqual(['b.csv line 2: account "eu-main" contradicts --account us-main']);
      expect(problemsOf(() => parseBalanceFile('business_date,currency,balance,account\n2026-11-20,EUR,1,asia\n', 'b.csv', two))).toEqual([
        'b.csv line 2: account "asia" is not configured (configured: eu-main, us-main)',
      ]);
    });
  });

  it('refuses a file with no rows and a file that does not exist', async () => {
    expect(() => parseBalanceFile('business_date,currency,balance\n', 'b.csv', one)).toThrow(/b\.csv holds no rows/);
    await expect(readBalanceFile(path.join(fixtures, 'no-such-file.csv'), one)).rejects.toThrow(/no-such-file\.csv: there is no such file/);
  });

  it('detects the format by extension, else by the first character', () => {
    expect(detectFormat('a.csv', '{')).toBe('csv');
    expect(detectFormat('a.ndjson', 'x')).toBe('jsonl');
    expect(detectFormat('books', '\uFEFF {"a":1}')).toBe('jsonl');
    expect(detectFormat('books.txt', 'business_date,currency')).toBe('csv');
  });
});
