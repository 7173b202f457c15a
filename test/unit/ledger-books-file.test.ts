import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/errors.js';
import { detectFormat, parseBalanceFile, readBalanceFile } from '../../src/books/books-file.js';

const fixtures = path.join(import.meta.dirname, '..', 'fixtures');
// These files hold minor-unit integers (the form kept as --amounts minor); major units have their own tests.
const one = { amounts: 'minor', knownAccounts: ['default'] } as const;

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
    const rows = parseBalanceFile(readFileSync(file, 'utf8'), file, { amounts: 'minor', knownAccounts: ['acme', 'other'] });
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
      expect.stringMatching(/^books-bad-rows\.csv line 5: balance "12\.50" is not an exact integer in minor units/),
      'books-bad-rows.csv line 6: duplicate of line 2 (account default, business_date 2026-11-20, currency EUR)',
      'books-bad-rows.csv line 7: balance is missing',
      expect.stringMatching(/^books-bad-rows\.csv line 8: balance "1e3" is not an exact integer/),
    ]);
    expect((error as Error).message).toMatch(/^books-bad-rows\.csv has 5 problems; nothing was imported:\n {2}- books-bad-rows\.csv line 3/);
  });

  it('rejects a header without the required columns, naming the allowed ones', () => {
    expect(problemsOf(() => parseBalanceFile('date,currency,amount\n2026-11-20,EUR,1\n', 'b.csv', one))).toEqual([
      'b.csv line 1: the header must name the columns business_date, currency, balance and optionally account (missing business_date, balance; unknown "date", "amount"); for other headers pass a column map such as --map business_date="Value date",balance="Closing balance"',
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

  it('says what is wrong with a balance that is an integer to a person: leading zeros, a plus sign, too many digits', () => {
    const csv = `business_date,currency,balance\n2026-11-20,EUR,007\n2026-11-20,USD,-0012\n2026-11-20,GBP,+5\n2026-11-20,CHF,${'9'.repeat(39)}\n`;
    expect(problemsOf(() => parseBalanceFile(csv, 'b.csv', one))).toEqual([
      'b.csv line 2: balance "007" has leading zeros; write the amount without them, e.g. 7',
      'b.csv line 3: balance "-0012" has leading zeros; write the amount without them, e.g. -12',
      'b.csv line 4: balance "+5" has a plus sign; write the amount without it, e.g. 5',
      'b.csv line 5: balance "999999999999999999999999999999999999999" has 39 digits, more than the 38 a balance can hold',
    ]);
  });

  it('reports an unclosed quote with its line', () => {
    expect(problemsOf(() => parseBalanceFile('business_date,currency,balance\n2026-11-20,"EUR,1\n', 'b.csv', one))).toEqual([expect.stringMatching(/^b\.csv line 2: not valid CSV: Quote Not Closed/)]);
  });

  describe('account resolution', () => {
    const two = { amounts: 'minor', knownAccounts: ['eu-main', 'us-main'] } as const;
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

  describe('every guard names the line and says what is wrong', () => {
    const header = 'business_date,currency,balance';
    const jsonl = (...lines: string[]) => lines.join('\n');
    const row = (fields: string) => `{"business_date":"2026-11-20","currency":"EUR","balance":1${fields}}`;

    it('says only "is missing" for an absent or empty field, in JSON lines and in CSV', () => {
      expect(problemsOf(() => parseBalanceFile(jsonl('{"currency":"EUR","balance":1}', '{"business_date":"2026-11-20","balance":1}', '{"business_date":"2026-11-20","currency":"EUR"}'), 'b.jsonl', one))).toEqual([
        'b.jsonl line 1: business_date is missing',
        'b.jsonl line 2: currency is missing',
        'b.jsonl line 3: balance is missing',
      ]);
      expect(problemsOf(() => parseBalanceFile(`${header}\n,EUR,1\n2026-11-20,,1\n`, 'b.csv', one))).toEqual([
        'b.csv line 2: business_date is missing',
        'b.csv line 3: currency is missing',
      ]);
    });

    it('describes a field of the wrong JSON type by its kind', () => {
      expect(
        problemsOf(() => parseBalanceFile(jsonl('{"business_date":20261120,"currency":"EUR","balance":1}', '{"business_date":"2026-11-20","currency":978,"balance":1}'), 'b.jsonl', one)),
      ).toEqual([
        'b.jsonl line 1: business_date (an integer) is not a real date in the form YYYY-MM-DD',
        'b.jsonl line 2: currency (an integer) is not a three-letter currency code such as EUR',
      ]);
      expect(problemsOf(() => parseBalanceFile('{"business_date":["2026-11-20"],"currency":["EUR"],"balance":1}', 'b.jsonl', one))).toEqual([
        'b.jsonl line 1: business_date (an array) is not a real date in the form YYYY-MM-DD',
        'b.jsonl line 1: currency (an array) is not a three-letter currency code such as EUR',
      ]);
    });

    it('accepts a balance only as digits: not an array or an object that looks like one', () => {
      expect(problemsOf(() => parseBalanceFile(jsonl('{"business_date":"2026-11-20","currency":"EUR","balance":["12"]}', '{"business_date":"2026-11-20","currency":"USD","balance":{"value":"12"}}'), 'b.jsonl', one))).toEqual([
        expect.stringMatching(/^b\.jsonl line 1: balance \(an array\) is not an exact integer in minor units/),
        expect.stringMatching(/^b\.jsonl line 2: balance \(an object\) is not an exact integer in minor units/),
      ]);
    });

    it('lists every unknown field', () => {
      expect(problemsOf(() => parseBalanceFile(row(',"note":"x","memo":"y"'), 'b.jsonl', one))).toEqual([
        'b.jsonl line 1: unknown field "note", "memo" (allowed: business_date, currency, balance, account)',
      ]);
    });

    it('refuses an account that is not a name, suggesting a configured one', () => {
      expect(problemsOf(() => parseBalanceFile(row(',"account":7'), 'b.jsonl', { amounts: 'minor', knownAccounts: ['eu-main'] }))).toEqual(['b.jsonl line 1: account (an integer) must be a name such as eu-main']);
      expect(problemsOf(() => parseBalanceFile(row(',"account":7'), 'b.jsonl', { amounts: 'minor', knownAccounts: [] }))).toEqual(['b.jsonl line 1: account (an integer) must be a name such as default']);
    });

    it('shortens a long value to 60 characters in the message', () => {
      const sixty = 'X'.repeat(60);
      expect(problemsOf(() => parseBalanceFile(`${header}\n2026-11-20,${sixty},1\n2026-11-20,${sixty}Y,1\n`, 'b.csv', one))).toEqual([
        `b.csv line 2: currency "${sixty}" is not a three-letter currency code such as EUR`,
        `b.csv line 3: currency "${sixty}…" is not a three-letter currency code such as EUR`,
      ]);
    });

    it('says "1 problem" or "n problems" and lists each on its own line', () => {
      const single = () => parseBalanceFile(`${header}\n2026-11-20,EUR,x\n`, 'b.csv', one);
      expect(single).toThrow(InputFileError);
      expect(single).toThrow(/^b\.csv line 2: balance "x" .*; nothing was imported\.$/);
      const double = () => parseBalanceFile(`${header}\n2026-11-20,EUR,x\n2026-11-20,USD,y\n`, 'b.csv', one);
      expect(double).toThrow(/^b\.csv has 2 problems; nothing was imported:\n {2}- b\.csv line 2: balance "x".*\n {2}- b\.csv line 3: balance "y"/);
    });

    it('says a row has 1 field, not 1 fields', () => {
      expect(problemsOf(() => parseBalanceFile(`${header}\n2026-11-20\n`, 'b.csv', one))).toEqual(['b.csv line 2: has 1 field, the header has 3']);
    });

    it('names each header fault on its own: missing, unknown or repeated columns', () => {
      const headerProblem = (h: string) => problemsOf(() => parseBalanceFile(`${h}\n2026-11-20,EUR,1,2\n`, 'b.csv', one));
      const intro = 'b.csv line 1: the header must name the columns business_date, currency, balance and optionally account';
      const hint = '; for other headers pass a column map such as --map business_date="Value date",balance="Closing balance"';
      expect(headerProblem('business_date,currency')).toEqual([`${intro} (missing balance)${hint}`]);
      expect(headerProblem('business_date,currency,balance,note')).toEqual([`${intro} (unknown "note")${hint}`]);
      expect(headerProblem('business_date,currency,balance,currency')).toEqual([`${intro} (repeated currency)${hint}`]);
      expect(headerProblem('business_date,currency,balance,currency,balance')).toEqual([`${intro} (repeated currency, balance)${hint}`]);
    });

    it('finds no rows in an empty file, and says what it expected', () => {
      for (const [text, name] of [['', 'b.csv'], ['\n\n', 'b.jsonl']] as const) {
        const error = (() => {
          try {
            return parseBalanceFile(text, name, one);
          } catch (e) {
            return e;
          }
        })();
        expect(error).toBeInstanceOf(InputFileError);
        expect((error as InputFileError).message).toBe(`${name} holds no rows: expected a header business_date,currency,balance[,account] and at least one row.`);
        expect((error as InputFileError).problems).toEqual([`${name}: no rows`]);
      }
    });

    it('reads JSON lines with a BOM, skips lines of only spaces, and keeps a BOM that is not at the start', () => {
      expect(parseBalanceFile(`\uFEFF${row('')}\n   \n`, 'b.jsonl', one)).toEqual([{ line: 1, account: 'default', businessDate: '2026-11-20', currency: 'EUR', balance: 1n }]);
      expect(problemsOf(() => parseBalanceFile('{"business_date":"2026-11-20","currency":"EUR\uFEFF","balance":1}', 'b.jsonl', one))).toEqual([
        'b.jsonl line 1: currency "EUR\uFEFF" is not a three-letter currency code such as EUR',
      ]);
    });

    it('refuses a JSON line that is not an object, naming its kind', () => {
      expect(problemsOf(() => parseBalanceFile(jsonl('null', '"row"', '5'), 'b.jsonl', one))).toEqual([
        'b.jsonl line 1: expected an object with business_date, currency, balance, got null',
        'b.jsonl line 2: expected an object with business_date, currency, balance, got a string',
        'b.jsonl line 3: expected an object with business_date, currency, balance, got an integer',
      ]);
    });
  });

  it('reads a file from disk, CSV or JSON lines', async () => {
    const { rows } = await readBalanceFile(path.join(fixtures, 'books-bom-crlf.csv'), { amounts: 'minor', knownAccounts: ['acme'] });
    expect(rows.map((r) => r.currency)).toEqual(['EUR', 'USD', 'EUR']);
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-books-'));
    try {
      const file = path.join(dir, 'books.jsonl');
      writeFileSync(file, '{"business_date":"2026-11-20","currency":"EUR","balance":-7}\n');
      expect((await readBalanceFile(file, one)).rows).toEqual([{ line: 1, account: 'default', businessDate: '2026-11-20', currency: 'EUR', balance: -7n }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says why a file could not be read when it exists but is not a file', async () => {
    const error = await readBalanceFile(fixtures, one).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).message).toMatch(/^Could not read .*fixtures: EISDIR: illegal operation on a directory/);
    expect((error as InputFileError).problems).toEqual([]);
    expect((error as InputFileError).cause).toMatchObject({ code: 'EISDIR' });
  });

  it('refuses a file with no rows and a file that does not exist', async () => {
    expect(() => parseBalanceFile('business_date,currency,balance\n', 'b.csv', one)).toThrow(/b\.csv holds no rows/);
    await expect(readBalanceFile(path.join(fixtures, 'no-such-file.csv'), one)).rejects.toThrow(/no-such-file\.csv: there is no such file/);
  });

  it('detects the format by extension, else by the first character', () => {
    expect(detectFormat('a.csv', '{')).toBe('csv');
    expect(detectFormat('a.ndjson', 'x')).toBe('jsonl');
    expect(detectFormat('a.jsonl', 'x')).toBe('jsonl');
    expect(detectFormat('A.JSON', 'x')).toBe('jsonl');
    expect(detectFormat('books', '\uFEFF {"a":1}')).toBe('jsonl');
    expect(detectFormat('books.txt', 'business_date,currency')).toBe('csv');
  });
});
