import { describe, expect, it } from 'vitest';
import { readMajorAmount } from '../../src/books/amount-text.js';
import { parseBalanceFile } from '../../src/books/books-file.js';
import { parseColumnMap, resolveColumns } from '../../src/books/column-map.js';
import { detectDelimiter } from '../../src/books/csv-table.js';
import { parseDateFormat, readDate } from '../../src/books/date-text.js';
import { InputFileError, UsageError } from '../../src/errors.js';

const point = { decimalMark: 'point' } as const;
const comma = { decimalMark: 'comma' } as const;
const unstated = { decimalMark: 'unstated' } as const;
const minor = (text: string, decimals = 2, style: { decimalMark: 'point' | 'comma' | 'unstated' } = point) => {
  const r = readMajorAmount(text, decimals, style, 'EUR');
  return r.ok ? r.minor : r.problem;
};

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InputFileError);
    return [...(error as InputFileError).problems];
  }
  throw new Error('expected an InputFileError');
}

describe('major-unit amounts', () => {
  it('reads the ways an export writes an amount, exactly, into minor units', () => {
    expect(minor('1234.56')).toBe(123456n);
    expect(minor('-1234.56')).toBe(-123456n);
    expect(minor('1,234.56')).toBe(123456n);
    expect(minor('(1,234.56)')).toBe(-123456n);
    expect(minor('1500')).toBe(150000n);
    expect(minor('0.5')).toBe(50n);
    expect(minor('1,234,567,890,123,456,789,012,345,678.99')).toBe(123456789012345678901234567899n);
    expect(minor('1.234,56', 2, comma)).toBe(123456n);
    expect(minor('(1.234,56)', 2, comma)).toBe(-123456n);
    expect(minor('1234,5', 2, comma)).toBe(123450n);
    expect(minor('1 234,56', 2, comma)).toBe(123456n);
    expect(minor('1500', 0)).toBe(1500n);
    expect(minor('1.234', 3)).toBe(1234n);
  });

  it('refuses more decimals than the currency has, naming the value, and never rounds', () => {
    expect(minor('1234.565')).toBe('balance 1234.565 has 3 decimals but EUR has 2');
    expect(readMajorAmount('1500.5', 0, point, 'JPY')).toEqual({ ok: false, problem: 'balance 1500.5 has 1 decimal but JPY has 0' });
    // Trailing zeros carry nothing (a numeric(18,4) column writes 1234.5600).
    expect(minor('1234.5600')).toBe(123456n);
  });

  it('refuses what is not an amount, and says when a decimal comma was meant', () => {
    expect(minor('1.234,56')).toMatch(/looks like a decimal comma; pass --decimal-comma/);
    expect(minor('12,5')).toMatch(/looks like a decimal comma; pass --decimal-comma/);
    expect(minor('1,23.4')).toMatch(/is not an amount such as/);
    expect(minor('1e3')).toMatch(/is not an amount such as/);
    expect(minor('-(5.00)')).toMatch(/is not an amount such as|both a minus and parentheses/);
    expect(minor('1.2.3')).toMatch(/more than one decimal point/);
    expect(minor('1234.56', 2, comma)).toMatch(/is not an amount such as 1234,56/);
    expect(minor('')).toMatch(/is not an amount/);
  });
});

describe('amounts whose decimal mark nobody stated', () => {
  const read = (text: string, currency: string, decimals: number) => {
    const r = readMajorAmount(text, decimals, unstated, currency);
    return r.ok ? r.minor : r.problem;
  };

  it('refuses a separator that could group thousands for the currency, naming both readings', () => {
    expect(read('250.000', 'JPY', 0)).toBe(
      'balance "250.000" is ambiguous for JPY: 250 if "." is the decimal mark, 250000 if it groups thousands; say which with --decimal-point or --decimal-comma (or books.decimalMark: point|comma for the account)',
    );
    expect(read('1.500', 'EUR', 2)).toMatch(/^balance "1.500" is ambiguous for EUR: 1.50 if "\." is the decimal mark, 1500.00 if it groups thousands/);
    expect(read('1,234', 'KWD', 3)).toMatch(/^balance "1,234" is ambiguous for KWD: 1\.234 if "," is the decimal mark, 1234\.000 if it groups thousands/);
    expect(read('-1,500', 'KWD', 3)).toMatch(/is ambiguous for KWD/);
    expect(read('(250.000)', 'JPY', 0)).toMatch(/is ambiguous for JPY/);
  });

  it('reads what has one reading for the currency, and an explicit mark decides the rest', () => {
    // 1,234 for EUR cannot be 1.234 (three decimals): only the thousands reading is an amount.
    expect(read('1,234', 'EUR', 2)).toBe(123400n);
    expect(read('1,234.56', 'EUR', 2)).toBe(123456n);
    expect(read('1234.567', 'KWD', 3)).toBe(1234567n);
    expect(read('250', 'JPY', 0)).toBe(250n);
    expect(read('0.5', 'EUR', 2)).toBe(50n);
    expect(read('1.234,56', 'EUR', 2)).toMatch(/looks like a decimal comma; pass --decimal-comma/);
    expect(read('1,5', 'KWD', 3)).toMatch(/looks like a decimal comma; pass --decimal-comma/);
    expect(minor('250.000', 0, point)).toBe(250n);
    expect(minor('250.000', 0, comma)).toBe(250000n);
    expect(minor('1.500', 2, point)).toBe(150n);
    expect(minor('1.500', 2, comma)).toBe(150000n);
    expect(minor('1,234', 3, point)).toBe(1234000n);
    expect(minor('1,234', 3, comma)).toBe(1234n);
    expect(minor('1,5', 3, comma)).toBe(1500n);
  });

  it('names the file, line, column and value of an ambiguous balance, and reads the file once the mark is given', () => {
    const text = 'Datum;Währung;Schlusssaldo\n27/11/2026;JPY;250.000\n27/11/2026;EUR;1.500\n27/11/2026;USD;12.50\n';
    const german = { amounts: 'major' as const, knownAccounts: ['default'], dateFormat: 'DD/MM/YYYY' as const, map: { business_date: 'Datum', currency: 'Währung', balance: 'Schlusssaldo' } };
    expect(problemsOf(() => parseBalanceFile(text, 'export.csv', { ...german, decimalMark: 'unstated' }))).toEqual([
      expect.stringMatching(/^export\.csv line 2, column "Schlusssaldo": balance "250\.000" is ambiguous for JPY/),
      expect.stringMatching(/^export\.csv line 3, column "Schlusssaldo": balance "1\.500" is ambiguous for EUR/),
    ]);
    expect(parseBalanceFile(text, 'export.csv', { ...german, decimalMark: 'point' }).map((r) => r.balance)).toEqual([250n, 150n, 1250n]);
  });
});

describe('dates and date formats', () => {
  it('reads each supported order into YYYY-MM-DD and refuses days that do not exist', () => {
    expect(readDate('21/11/2026', 'DD/MM/YYYY')).toBe('2026-11-21');
    expect(readDate('11/21/2026', 'MM/DD/YYYY')).toBe('2026-11-21');
    expect(readDate('2026/11/21', 'YYYY/MM/DD')).toBe('2026-11-21');
    expect(readDate('21.11.2026', 'DD.MM.YYYY')).toBe('2026-11-21');
    expect(readDate('1-2-2026', 'DD-MM-YYYY')).toBe('2026-02-01');
    expect(readDate('30/02/2026', 'DD/MM/YYYY')).toBeUndefined();
    expect(readDate('2026-11-21', 'DD/MM/YYYY')).toBeUndefined();
    expect(parseDateFormat('dd/mm/yyyy')).toBe('DD/MM/YYYY');
    expect(parseDateFormat('D/M/Y')).toBeUndefined();
  });
});

describe('column maps and delimiters', () => {
  it('parses --map with quoted headers, refusing unknown fields', () => {
    expect(parseColumnMap('business_date="Value date",currency=Curr,balance="Closing balance"')).toEqual({ business_date: 'Value date', currency: 'Curr', balance: 'Closing balance' });
    expect(parseColumnMap('balance="Balance, closing"')).toEqual({ balance: 'Balance, closing' });
    expect(() => parseColumnMap('amount=Balance')).toThrow(UsageError);
    expect(() => parseColumnMap('balance=')).toThrow(/names no header/);
  });

  it('finds mapped columns in any case, ignores the others, and says which is missing', () => {
    expect(resolveColumns(['Date', 'Description', 'CURRENCY', 'Closing balance'], { business_date: 'date', balance: 'Closing Balance' })).toEqual({ fields: ['business_date', undefined, 'currency', 'balance'] });
    expect(resolveColumns(['Date', 'Currency'], { business_date: 'Date', balance: 'Closing balance' })).toEqual({ problem: 'no column "Closing balance" for balance (the header has: "Date", "Currency")' });
  });

  it('takes the separator from the header line, whatever the data lines hold', () => {
    expect(detectDelimiter('Date;Currency;Closing balance\r\n21/11/2026;EUR;1.234,56\r\n')).toBe(';');
    expect(detectDelimiter('\uFEFFbusiness_date\tcurrency\tbalance\n')).toBe('\t');
    expect(detectDelimiter('business_date,currency,balance\n')).toBe(',');
    expect(detectDelimiter('"a;b",c,d\n')).toBe(',');
  });
});

describe('books files in major units', () => {
  const options = { amounts: 'major', knownAccounts: ['default'] } as const;

  it('reads a semicolon export with decimal commas, day-first dates, lower-case codes, a BOM, CRLF and a column map', () => {
    const text = '\uFEFFDate;Currency;Closing balance\r\n21/11/2026;eur;1.234,56\r\n21/11/2026;JPY;-1.500\r\n21/11/2026;usd;(2.000,10)\r\n';
    expect(parseBalanceFile(text, 'export.csv', { ...options, decimalMark: 'comma', dateFormat: 'DD/MM/YYYY', map: { business_date: 'Date', balance: 'Closing balance' } })).toEqual([
      { line: 2, account: 'default', businessDate: '2026-11-21', currency: 'EUR', balance: 123456n },
      { line: 3, account: 'default', businessDate: '2026-11-21', currency: 'JPY', balance: -1500n },
      { line: 4, account: 'default', businessDate: '2026-11-21', currency: 'USD', balance: -200010n },
    ]);
  });

  it('refuses more decimals than the currency has, naming the line and the value', () => {
    expect(problemsOf(() => parseBalanceFile('business_date,currency,balance\n2026-11-20,USD,1.00\n2026-11-20,EUR,1234.565\n', 'b.csv', options))).toEqual([
      'b.csv line 3: balance 1234.565 has 3 decimals but EUR has 2',
    ]);
  });

  it('reads JSON numbers with a decimal point whatever --decimal-comma says, and JSON strings as text', () => {
    const text = '{"business_date":"2026-11-20","currency":"EUR","balance":1234.5}\n{"business_date":"2026-11-20","currency":"USD","balance":"1.000,01"}\n';
    expect(parseBalanceFile(text, 'b.jsonl', { ...options, decimalMark: 'comma' }).map((r) => r.balance)).toEqual([123450n, 100001n]);
  });

  it('says when dates need --date-format and when a code has no known decimals', () => {
    expect(problemsOf(() => parseBalanceFile('business_date,currency,balance\n21/11/2026,EUR,1\n2026-11-20,XYZ,1\n', 'b.csv', options))).toEqual([
      'b.csv line 2: business_date "21/11/2026" is not a real date in the form YYYY-MM-DD; pass --date-format, e.g. --date-format DD/MM/YYYY',
      'b.csv line 3: currency XYZ is not an ISO 4217 currency, so its decimals are unknown; write its books in minor units with --amounts minor',
    ]);
  });

  it('reads tab-separated files', () => {
    expect(parseBalanceFile('business_date\tcurrency\tbalance\n2026-11-20\tEUR\t1,000.00\n', 'b.tsv', options)[0]!.balance).toBe(100000n);
  });
});
