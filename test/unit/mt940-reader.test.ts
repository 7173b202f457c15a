import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { looksLikeMt940, readMt940 } from '../../src/statements/mt940-reader.js';
import { readStatementText } from '../../src/statements/read-statement-file.js';
import { StatementFileError } from '../../src/statements/statement-file-error.js';

// MT940/MT942 as the standard writes them, line by line: every test builds its own message.
const mt = (...lines: string[]) => [...lines, ''].join('\r\n');

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StatementFileError);
    expect((error as StatementFileError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

/** One page of statement `number` on account DE89…: opening, entries (with their :86:), closing. */
function page(number: string, opening: string, body: string[], closing: string, account = 'DE89370400440532013000'): string[] {
  return [':20:STARTUMS', `:25:${account}`, `:28C:${number}`, opening, ...body, closing];
}

const oneStatement = mt(...page('7/1', ':60F:C261129EUR100,00', [':61:2611301130C25,50NTRFREF-1//BANK-1', ':86:payout'], ':62F:C261130EUR125,50'));

describe('telling an MT940 message from other files', () => {
  it('recognises a message starting with :20: or {1: (after a byte order mark or blank lines)', () => {
    expect(looksLikeMt940(':20:STARTUMS')).toBe(true);
    expect(looksLikeMt940('\uFEFF:20:STARTUMS')).toBe(true);
    expect(looksLikeMt940('\uFEFF{1:F01BANKDEFFAXXX0000000000}')).toBe(true);
    expect(looksLikeMt940(' \r\n\t{1:F01BANKDEFFAXXX0000000000}')).toBe(true);
    expect(looksLikeMt940('  :20:STARTUMS')).toBe(true);
  });

  it('recognises a :20: line followed later by :60F: or :60M: after a header line', () => {
    expect(looksLikeMt940('BANK EXPORT\r\n:20:STARTUMS\r\n:25:X\r\n:60F:C261130EUR1,00')).toBe(true);
    expect(looksLikeMt940('BANK EXPORT\n:20:A\n:60M:C261130EUR1,00')).toBe(true);
  });

  it('does not take other text for a message', () => {
    expect(looksLikeMt940('01,BANK,CUST,261130,2300,1,,,2/')).toBe(false);
    expect(looksLikeMt940('BANK EXPORT :20:STARTUMS')).toBe(false);
    expect(looksLikeMt940('{2:O940}')).toBe(false);
    expect(looksLikeMt940('BANK EXPORT\n:20:A\n:62F:C261130EUR1,00')).toBe(false);
    expect(looksLikeMt940('BANK EXPORT\n:60F:C261130EUR1,00\n:20:A')).toBe(false);
    expect(looksLikeMt940('BANK EXPORT\n:20:A\n:60X:C261130EUR1,00')).toBe(false);
    expect(looksLikeMt940('BANK EXPORT\n:20:A\nx:60F:C261130EUR1,00')).toBe(false);
    expect(looksLikeMt940('BANK EXPORT\nx:20:A\n:60F:C261130EUR1,00')).toBe(false);
  });

  it('reads a file whose :20: follows a header line only as far as the header, which it names', () => {
    const text = `BANK EXPORT 2026\r\n${oneStatement}`;
    expect(refusal(() => readStatementText(text, 'h.sta'))).toBe('h.sta, line 1: "BANK EXPORT 2026" is not inside a tag (a line must start with a tag such as :20:).');
  });
});

describe('MT940 statements read field by field', () => {
  it('reads balances, entries, references, details and the account exactly', () => {
    const [statement, ...rest] = readMt940(oneStatement, 's.sta');
    expect(rest).toEqual([]);
    expect(statement).toEqual({
      format: 'mt940',
      where: 's.sta, line 1 (statement 7)',
      iban: 'DE89370400440532013000',
      accountId: 'DE89370400440532013000',
      statementId: '7/2026-11-30',
      sequence: 7n,
      currency: 'EUR',
      intraday: false,
      businessDate: '2026-11-30',
      fromDate: '2026-11-29',
      toDate: '2026-11-30',
      balances: [
        { code: 'OPBD', amount: 10_000n, date: '2026-11-29' },
        { code: 'CLBD', amount: 12_550n, date: '2026-11-30' },
      ],
      entries: [{ amount: 2_550n, creditDebit: 'credit', status: 'BOOK', bookingDate: '2026-11-30', valueDate: '2026-11-30', reference: 'REF-1', bankReference: 'BANK-1', details: 'payout', reversal: false }],
    });
  });

  it('reads debit balances as negative and keeps :64: (CLAV) and :65: (FWAV) of the last page in order', () => {
    const text = mt(...page('12', ':60F:D261129JPY1500,', [], ':62F:D261130JPY1500,'), ':64:C261130JPY20,', ':65:D261201JPY3,');
    const [statement] = readMt940(text, 'j.sta');
    expect(statement!.balances).toEqual([
      { code: 'OPBD', amount: -1_500n, date: '2026-11-29' },
      { code: 'CLBD', amount: -1_500n, date: '2026-11-30' },
      { code: 'CLAV', amount: 20n, date: '2026-11-30' },
      { code: 'FWAV', amount: -3n, date: '2026-12-01' },
    ]);
    expect(statement!.statementId).toBe('12/2026-11-30');
    expect(statement!.sequence).toBe(12n);
  });

  it('names an account that is no IBAN only as its identifier, and upper-cases an IBAN written in lower case', () => {
    const other = readMt940(mt(...page('1/1', ':60F:C261129EUR1,00', [], ':62F:C261130EUR1,00', '37040044/0532013000')), 'o.sta');
    expect([other[0]!.iban, other[0]!.accountId]).toEqual([null, '37040044/0532013000']);
    const lower = readMt940(mt(...page('1/1', ':60F:C261129EUR1,00', [], ':62F:C261130EUR1,00', 'de89 3704 0044 0532 0130 00')), 'l.sta');
    expect([lower[0]!.iban, lower[0]!.accountId]).toEqual(['DE89370400440532013000', 'de89370400440532013000']);
    const short = readMt940(mt(...page('1/1', ':60F:C261129EUR1,00', [], ':62F:C261130EUR1,00', 'DE8937040044')), 's.sta');
    expect(short[0]!.iban).toBeNull();
  });

  it('accepts :25P:, :28: and :NS: and ignores :21: and :NS:', () => {
    const text = mt(':20:A', ':21:NONREF', ':25P:DE89370400440532013000', ':28:3', ':NS:22bank note', ':60F:C261129EUR1,00', ':62F:C261130EUR1,00');
    const [statement] = readMt940(text, 'p.sta');
    expect([statement!.accountId, statement!.statementId, statement!.entries]).toEqual(['DE89370400440532013000', '3/2026-11-30', []]);
  });

  it('reads every form of :61: — entry date, RC/RD reversals, funds code, no bank reference, supplementary details', () => {
    const text = mt(
      ...page(
        '9/1',
        ':60F:C261129EUR1000,00',
        [
          ':61:261130C1,00NTRFREF-A',
          ':61:2611301201D2,NCHGNONREF//BK-B',
          ':61:2611301130RCR3,1NTRFREF-C//',
          'supplementary one',
          'two',
          ':61:2611301130RD4,05FMSCREF-D//BK-D',
          ':86:?00line',
          'continued',
          ':61:2611301130DR5,00S202',
        ],
        ':62F:C261130EUR1000,00',
      ),
    );
    const entries = readMt940(text, 'e.sta')[0]!.entries;
    expect(entries.map((e) => [e.amount, e.creditDebit, e.reversal, e.bookingDate, e.valueDate, e.reference, e.bankReference, e.details])).toEqual([
      [100n, 'credit', false, null, '2026-11-30', 'REF-A', null, null],
      [-200n, 'debit', false, '2026-12-01', '2026-11-30', 'NONREF', 'BK-B', null],
      [-310n, 'debit', true, '2026-11-30', '2026-11-30', 'REF-C', null, 'supplementary one two'],
      [405n, 'credit', true, '2026-11-30', '2026-11-30', 'REF-D', 'BK-D', '?00linecontinued'],
      [-500n, 'debit', false, '2026-11-30', '2026-11-30', null, null, null],
    ]);
  });

  it('puts an entry date across New Year into the year nearest its value date', () => {
    const december = mt(...page('1/1', ':60F:C261230EUR1,00', [':61:2612310102C1,00NTRFX'], ':62F:C261231EUR2,00'));
    expect(readMt940(december, 'd.sta')[0]!.entries[0]!.bookingDate).toBe('2027-01-02');
    const january = mt(...page('1/1', ':60F:C261231EUR1,00', [':61:2701021231C1,00NTRFX'], ':62F:C270102EUR2,00'));
    expect(readMt940(january, 'j.sta')[0]!.entries[0]!.bookingDate).toBe('2026-12-31');
    const november = mt(...page('1/1', ':60F:C261129EUR1,00', [':61:2611301201C1,00NTRFX', ':61:2612011130C1,00NTRFX'], ':62F:C261201EUR3,00'));
    expect(readMt940(november, 'n.sta')[0]!.entries.map((e) => e.bookingDate)).toEqual(['2026-12-01', '2026-11-30']);
    const leap = mt(...page('1/1', ':60F:C271230EUR1,00', [':61:2712310229C1,00NTRFX'], ':62F:C271231EUR2,00'));
    expect(refusal(() => readMt940(leap, 'l.sta'))).toBe('l.sta, line 5: :61: entry date 0229 is not a date (2027-02-29 does not exist).');
  });

  it('joins the message blocks away: {1:}{2:}{3:{108:}} before :20:, -} and -}{5:} after the last tag', () => {
    const text = mt(
      '{1:F01BANKDEFFAXXX0000000000}{2:O9400610261127BANKDEFFAXXX00000000002611270610N}{3:{108:MUR-1}}{4::20:STARTUMS',
      ':25:DE89370400440532013000',
      ':28C:5/1',
      ':60F:C261129EUR1,00   ',
      ':61:2611301130C1,00NTRFX',
      ':86:one',
      '',
      'two',
      '}',
      'three',
      ':62F:C261130EUR2,00',
      '-}{5:{CHK:123456789ABC}}',
      '{1:F01BANKDEFFAXXX0000000000}{4:',
      ':20:STARTUMS',
      ':25:DE89370400440532013000',
      ':28C:6/1',
      ':60F:C261130EUR2,00',
      ':62F:C261201EUR2,00',
      '-',
    );
    const statements = readMt940(text, 'b.sta');
    expect(statements.map((s) => [s.where, s.statementId, s.entries.map((e) => e.details)])).toEqual([
      ['b.sta, line 1 (statement 5)', '5/2026-11-30', ['onetwothree']],
      ['b.sta, line 14 (statement 6)', '6/2026-12-01', []],
    ]);
  });

  it('ends a tag at -}: a line after it that is no tag is refused', () => {
    const text = mt(...page('5/1', ':60F:C261129EUR1,00', [], ':62F:C261130EUR1,00'), '-}', 'stray text that is no tag at all and long');
    expect(refusal(() => readMt940(text, 'x.sta'))).toBe('x.sta, line 7: "stray text that is no tag at all and lon" is not inside a tag (a line must start with a tag such as :20:).');
  });

  it('reads a file with LF line ends and a byte order mark like one with CRLF', () => {
    const lf = `\uFEFF${oneStatement.replaceAll('\r\n', '\n')}`;
    expect(readMt940(lf, 's.sta')).toEqual(readMt940(oneStatement, 's.sta'));
  });

  it('accepts a tab in a text field', () => {
    const text = oneStatement.replace(':86:payout', ':86:pay\tout');
    expect(readMt940(text, 't.sta')[0]!.entries[0]!.details).toBe('pay\tout');
  });
});

describe('MT940 pages', () => {
  const pages = (second: string[], secondNumber = '41/2') =>
    mt(
      ...page('41/1', ':60F:C261124EUR100,00', [':61:2611251125C25,00NTRFA'], ':62M:C261125EUR125,00'),
      ...second.length === 0 ? [] : page(secondNumber, second[0]!, second.slice(1, -1), second.at(-1)!),
    );

  it('joins the pages of one statement: the first page opens it, the last closes it, entries of all pages in order', () => {
    const text = pages([':60M:C261125EUR125,00', ':61:2611251125D5,00NTRFB', ':62F:C261125EUR120,00', ':64:C261125EUR119,00']);
    const [statement, ...rest] = readMt940(text, 'p.sta');
    expect(rest).toEqual([]);
    expect(statement!.balances).toEqual([
      { code: 'OPBD', amount: 10_000n, date: '2026-11-24' },
      { code: 'CLBD', amount: 12_000n, date: '2026-11-25' },
      { code: 'CLAV', amount: 11_900n, date: '2026-11-25' },
    ]);
    expect(statement!.entries.map((e) => e.amount)).toEqual([2_500n, -500n]);
    expect([statement!.where, statement!.statementId, statement!.fromDate]).toEqual(['p.sta, line 1 (statement 41)', '41/2026-11-25', '2026-11-24']);
  });

  it('refuses a statement whose last page closes with :62M:, naming its line', () => {
    expect(refusal(() => readMt940(pages([]), 'm.sta'))).toBe('m.sta, line 6: statement 41 (line 1) ends with an intermediate :62M: balance but its next page is missing.');
  });

  it('refuses a next page of another statement, another account, or opening with :60F:', () => {
    const other = pages([':60M:C261125EUR125,00', ':62F:C261125EUR125,00'], '42/2');
    expect(refusal(() => readMt940(other, 'o.sta'))).toBe('o.sta, line 6: statement 41 (line 1) ends with an intermediate :62M: balance but its next page is missing.');
    const account = mt(...page('41/1', ':60F:C261124EUR100,00', [], ':62M:C261125EUR100,00'), ...page('41/2', ':60M:C261125EUR100,00', [], ':62F:C261125EUR100,00', 'DE02120300000000202051'));
    expect(refusal(() => readMt940(account, 'a.sta'))).toBe('a.sta, line 5: statement 41 (line 1) ends with an intermediate :62M: balance but its next page is missing.');
    const fresh = pages([':60F:C261125EUR125,00', ':62F:C261125EUR125,00']);
    expect(refusal(() => readMt940(fresh, 'f.sta'))).toBe('f.sta, line 6: statement 41 (line 1) ends with an intermediate :62M: balance but its next page is missing.');
  });

  it('refuses a page opening with :60M: whose first page is not before it', () => {
    const text = mt(...page('41/2', ':60M:C261125EUR100,00', [], ':62F:C261125EUR100,00'));
    expect(refusal(() => readMt940(text, 'c.sta'))).toBe('c.sta, line 4: :60M: opens a continuation page of statement 41 whose first page (with :60F:) is not before it.');
  });
});

describe('MT940 files refused, naming the file and the line', () => {
  it('refuses a tag before the first :20: and a message without :20:', () => {
    expect(refusal(() => readMt940(mt(':25:X', ':20:A'), 'b.sta'))).toBe('b.sta, line 1: :25: comes before the first :20: (every statement starts with :20:).');
    expect(refusal(() => readMt940(mt('{1:F01BANKDEFFAXXX0000000000}{4:', '-}'), 'n.sta'))).toBe('n.sta: no MT940 statement (no :20: tag).');
  });

  it('names each control character it refuses in U+ notation', () => {
    for (const [character, code] of [['\u0000', '0000'], ['\u0008', '0008'], ['\u000B', '000B'], ['\u000C', '000C'], ['\u000E', '000E'], ['\u001B', '001B'], ['\u001F', '001F'], ['\u007F', '007F']] as const) {
      const text = oneStatement.replace(':86:payout', `:86:pay${character}out`);
      expect(refusal(() => readMt940(text, 'c.sta'))).toBe(`c.sta, line 6: holds the control character U+${code}, which no statement has.`);
    }
  });

  it('refuses a missing or repeated tag of a statement', () => {
    const without = (tag: string) => oneStatement.replace(new RegExp(`${tag}[^\\r]*\\r\\n`), '');
    expect(refusal(() => readMt940(without(':25:'), 'a.sta'))).toBe('a.sta, line 1 (statement 1): no :25: account identification.');
    expect(refusal(() => readMt940(without(':28C:'), 'a.sta'))).toBe('a.sta, line 1 (statement 1): no :28C: statement number.');
    expect(refusal(() => readMt940(without(':60F:'), 'a.sta'))).toBe('a.sta, line 1 (statement 1): no :60F: or :60M: opening balance.');
    const twice = oneStatement.replace(':62F:C261130EUR125,50', ':62F:C261130EUR125,50\r\n:62M:C261130EUR125,50');
    expect(refusal(() => readMt940(twice, 't.sta'))).toBe('t.sta, line 8: a second :62F: or :62M: closing balance in the statement of line 1.');
    const second = `${oneStatement}${oneStatement.replace(':25:DE89370400440532013000\r\n', '')}`;
    expect(refusal(() => readMt940(second, 's.sta'))).toBe('s.sta, line 8 (statement 2): no :25: account identification.');
  });

  it('refuses a statement number that is not digits with an optional /page', () => {
    for (const number of ['123456', '1/123456', '1/', '/1', 'A1']) {
      expect(refusal(() => readMt940(oneStatement.replace(':28C:7/1', `:28C:${number}`), 'n.sta'))).toBe(`n.sta, line 3: :28C: ${JSON.stringify(number)} is not a statement number (up to 5 digits, then /page).`);
    }
    expect(readMt940(oneStatement.replace(':28C:7/1', ':28C:12345/12345'), 'n.sta')[0]!.sequence).toBe(12_345n);
  });

  it('refuses a tag no MT940 statement has', () => {
    expect(refusal(() => readMt940(oneStatement.replace(':86:payout', ':99:payout'), 'u.sta'))).toBe('u.sta, line 6: :99: is not a tag of an MT940 statement.');
  });

  it('refuses a balance not written as the standard writes it', () => {
    for (const balance of ['X261130EUR1,00', 'C26113EUR1,00', 'C261130EU1,00', 'C261130eur1,00', 'C261130EUR1.00', 'C261130EUR,50', 'C261130EUR1234567890123456,00', 'C261130EUR1,000000000000000', 'C261130EUR1,00X', ' C261130EUR1,00']) {
      expect(refusal(() => readMt940(oneStatement.replace(':62F:C261130EUR125,50', `:62F:${balance}`), 'b.sta'))).toBe(
        `b.sta, line 7: :62F: ${JSON.stringify(balance.trimEnd())} is not a balance (C or D, date YYMMDD, currency, amount with a decimal comma such as 1234,56).`,
      );
    }
  });

  it('reads the longest amounts the standard allows exactly', () => {
    const text = mt(...page('1', ':60F:C261129EUR1234567890123,45', [':61:261130C123456789012345,NTRFX'], ':62F:C261130EUR1,00000000000000'));
    const [statement] = readMt940(text, 'l.sta');
    expect(statement!.balances.map((b) => b.amount)).toEqual([123_456_789_012_345n, 100n]);
    expect(statement!.entries[0]!.amount).toBe(12_345_678_901_234_500n);
  });

  it('refuses an amount with more decimals than its currency, naming how many it has', () => {
    const cases = [
      ['EUR', '1,001', 'EUR has 2 decimals (ISO 4217)'],
      ['JPY', '1,5', 'JPY has 0 decimals (ISO 4217)'],
      ['KWD', '1,0001', 'KWD has 3 decimals (ISO 4217)'],
      ['CLF', '1,00001', 'CLF has 4 decimals (ISO 4217)'],
      ['XAU', '1,', 'XAU has no ISO 4217 decimals known'],
      ['QQQ', '1,', 'QQQ has no ISO 4217 decimals known'],
    ] as const;
    for (const [currency, amount, says] of cases) {
      const text = mt(...page('1', `:60F:C261129${currency}${amount}`, [], `:62F:C261130${currency}1,`));
      expect(refusal(() => readMt940(text, 'd.sta'))).toBe(`d.sta, line 4: :60F: amount ${amount} is not an amount in ${currency}: ${says}, and an amount is never rounded.`);
    }
  });

  it('refuses a statement line not written as the standard writes it', () => {
    for (const line of ['2611301130X1,00NTRFA', '26113C1,00NTRFA', '261130C1.00NTRFA', '261130C1,00XTRFA', '261130C1,00NTR', '261130CXY1,00NTRFA', '261130C,00NTRFA', 'A261130C1,00NTRFA']) {
      const text = oneStatement.replace(':61:2611301130C25,50NTRFREF-1//BANK-1', `:61:${line}\r\nmore`);
      expect(refusal(() => readMt940(text, 'l.sta'))).toBe(
        `l.sta, line 5: :61: ${JSON.stringify(line)} is not a statement line (value date YYMMDD, [entry date MMDD], C/D/RC/RD, amount with a decimal comma, transaction type such as NTRF).`,
      );
    }
  });

  it('refuses impossible value and entry dates and too many decimals in an entry', () => {
    const entry = (line: string) => oneStatement.replace(':61:2611301130C25,50NTRFREF-1//BANK-1', `:61:${line}`);
    expect(refusal(() => readMt940(entry('2613011130C1,00NTRFA'), 'v.sta'))).toBe('v.sta, line 5: :61: value date 261301 is not a date (2026-13-01 does not exist).');
    expect(refusal(() => readMt940(entry('2611301131C1,00NTRFA'), 'v.sta'))).toBe('v.sta, line 5: :61: entry date 1131 is not a date (2026-11-31 does not exist).');
    expect(refusal(() => readMt940(entry('2611301130C1,001NTRFA'), 'v.sta'))).toBe('v.sta, line 5: :61: amount 1,001 is not an amount in EUR: EUR has 2 decimals (ISO 4217), and an amount is never rounded.');
  });

  it('refuses a closing, :64: or :65: balance in another currency than the opening one', () => {
    expect(refusal(() => readMt940(oneStatement.replace(':62F:C261130EUR', ':62F:C261130USD'), 'c.sta'))).toBe('c.sta, line 7: :62F: is in USD, the statement (its opening balance) in EUR.');
    expect(refusal(() => readMt940(mt(...page('1', ':60F:C261129EUR1,00', [], ':62F:C261130EUR1,00'), ':65:C261201CHF1,00'), 'f.sta'))).toBe('f.sta, line 6: :65: is in CHF, the statement (its opening balance) in EUR.');
  });
});

describe('MT942 interim reports', () => {
  const report = (...extra: string[]) =>
    mt(':20:INTRA-1', ':25:DE89370400440532013000', ':28C:5/1', ':34F:EURD0,', ':13D:2611301200+0100', ':61:2611301130C10,00NTRFA//B', ':86:in', ':61:2611301130D2,50NCHGB', ':61:2611301130RD1,00NTRFC', ...extra);

  it('reads the report, its entries and its account; checks :90D: and :90C:', () => {
    const [read, ...rest] = readMt940(report(':90D:1EUR2,50', ':90C:2EUR11,00'), 'i.sta');
    expect(rest).toEqual([]);
    expect(read).toEqual({
      format: 'mt942',
      where: 'i.sta, line 1 (report 5)',
      iban: 'DE89370400440532013000',
      accountId: 'DE89370400440532013000',
      statementId: '5/2026-11-30/2611301200+0100',
      sequence: null,
      currency: 'EUR',
      intraday: true,
      businessDate: '2026-11-30',
      fromDate: '2026-11-30',
      toDate: '2026-11-30',
      balances: [],
      entries: [
        { amount: 1_000n, creditDebit: 'credit', status: 'BOOK', bookingDate: '2026-11-30', valueDate: '2026-11-30', reference: 'A', bankReference: 'B', details: 'in', reversal: false },
        { amount: -250n, creditDebit: 'debit', status: 'BOOK', bookingDate: '2026-11-30', valueDate: '2026-11-30', reference: 'B', bankReference: null, details: null, reversal: false },
        { amount: 100n, creditDebit: 'credit', status: 'BOOK', bookingDate: '2026-11-30', valueDate: '2026-11-30', reference: 'C', bankReference: null, details: null, reversal: true },
      ],
    });
  });

  it('is recognised by :34F: or :13D: or :13: alone, each message one report', () => {
    const thirteen = mt(':20:I', ':25P:ACC-1', ':28C:8', ':34F:JPY5,', ':13:2611301200', ':20:J', ':25:ACC-1', ':28C:9', ':34F:JPY0,', ':13D:2612011200');
    const read = readMt940(thirteen, 't.sta');
    expect(read.map((r) => [r.format, r.where, r.accountId, r.iban, r.currency, r.businessDate, r.statementId])).toEqual([
      ['mt942', 't.sta, line 1 (report 8)', 'ACC-1', null, 'JPY', '2026-11-30', '8/2026-11-30/2611301200'],
      ['mt942', 't.sta, line 6 (report 9)', 'ACC-1', null, 'JPY', '2026-12-01', '9/2026-12-01/2612011200'],
    ]);
  });

  it('refuses wrong :90D:/:90C: counts, sums and currencies naming the line', () => {
    expect(refusal(() => readMt940(report(':90D:2EUR2,50'), 'a.sta'))).toBe("a.sta, line 10: :90D: says 2 entries of 2,50, the report's :61: lines are 1 (sum in minor units 250).");
    expect(refusal(() => readMt940(report(':90D:1EUR2,51'), 'a.sta'))).toBe("a.sta, line 10: :90D: says 1 entries of 2,51, the report's :61: lines are 1 (sum in minor units 250).");
    expect(refusal(() => readMt940(report(':90C:1EUR11,00'), 'a.sta'))).toBe("a.sta, line 10: :90C: says 1 entries of 11,00, the report's :61: lines are 2 (sum in minor units 1100).");
    expect(refusal(() => readMt940(report(':90C:2EUR10,00'), 'a.sta'))).toBe("a.sta, line 10: :90C: says 2 entries of 10,00, the report's :61: lines are 2 (sum in minor units 1100).");
    expect(refusal(() => readMt940(report(':90C:2USD11,00'), 'a.sta'))).toBe('a.sta, line 10: :90C: is in USD, the report (its :34F:) in EUR.');
    expect(refusal(() => readMt940(report(':90C:2EUR11,001'), 'a.sta'))).toBe('a.sta, line 10: :90C: amount 11,001 is not an amount in EUR: EUR has 2 decimals (ISO 4217), and an amount is never rounded.');
    for (const total of ['2EUR11', '123456EUR11,00', 'EUR11,00', '2EU11,00', '2EUR11,00X', 'X2EUR11,00']) {
      expect(refusal(() => readMt940(report(`:90C:${total}`), 'a.sta'))).toBe(`a.sta, line 10: :90C: ${JSON.stringify(total)} is not a count, currency and sum.`);
    }
  });

  it('refuses a report without its account, number, floor limit or date, naming the report', () => {
    const base = [':20:I', ':25:ACC', ':28C:1', ':34F:EUR0,', ':13D:2611301200'];
    const without = (tag: string) => mt(...base.filter((l) => !l.startsWith(tag)));
    expect(refusal(() => readMt940(without(':25:'), 'r.sta'))).toBe('r.sta, line 1 (report 1): no :25: account identification.');
    expect(refusal(() => readMt940(without(':28C:'), 'r.sta'))).toBe('r.sta, line 1 (report 1): no :28C: statement number.');
    expect(refusal(() => readMt940(mt(':20:I', ':25:ACC', ':28C:1', ':13D:2611301200'), 'r.sta'))).toBe('r.sta, line 1 (report 1): no :34F: floor limit (an MT942 names its currency there).');
    expect(refusal(() => readMt940(mt(':20:I', ':25:ACC', ':28C:1', ':34F:EUR0,'), 'r.sta'))).toBe('r.sta, line 1 (report 1): no :13D: date and time of the report.');
    expect(refusal(() => readMt940(mt(...base, ':20:J', ':25:ACC', ':28C:2', ':34F:EUR0,'), 'r.sta'))).toBe('r.sta, line 6 (report 2): no :13D: date and time of the report.');
  });

  it('refuses a wrong statement number, floor limit or date naming the line', () => {
    const base = [':20:I', ':25:ACC', ':28C:1', ':34F:EUR0,', ':13D:2611301200'];
    const replace = (i: number, line: string) => mt(...base.map((l, j) => (j === i ? line : l)));
    for (const number of ['123456', '1/', 'x']) {
      expect(refusal(() => readMt940(replace(2, `:28C:${number}`), 'r.sta'))).toBe(`r.sta, line 3: :28C: ${JSON.stringify(number)} is not a statement number.`);
    }
    for (const floor of ['EUR', 'EURX0,', 'EU0,', '1EUR0,', 'EUR0,X']) {
      expect(refusal(() => readMt940(replace(3, `:34F:${floor}`), 'r.sta'))).toBe(`r.sta, line 4: :34F: ${JSON.stringify(floor)} is not a floor limit (currency, [D or C], amount).`);
    }
    expect(refusal(() => readMt940(replace(3, ':34F:EURC0,001'), 'r.sta'))).toBe('r.sta, line 4: :34F: amount 0,001 is not an amount in EUR: EUR has 2 decimals (ISO 4217), and an amount is never rounded.');
    for (const stamp of ['26113', 'x2611301200']) {
      expect(refusal(() => readMt940(replace(4, `:13D:${stamp}`), 'r.sta'))).toBe(`r.sta, line 5: :13D: ${JSON.stringify(stamp)} is not a date and time (YYMMDDhhmm±hhmm).`);
    }
    expect(refusal(() => readMt940(replace(4, ':13D:2602301200'), 'r.sta'))).toBe('r.sta, line 5: :13D: 260230 is not a date (2026-02-30 does not exist).');
  });
});

describe('MT940 properties', () => {
  const eur = fc.bigInt({ min: 0n, max: 10n ** 15n - 1n });
  const text = (minor: bigint) => `${minor / 100n},${String(minor % 100n).padStart(2, '0')}`;

  it('reads any amount written with two decimals exactly, credit positive and debit negative, and never a third decimal', () => {
    fc.assert(
      fc.property(eur, fc.boolean(), fc.integer({ min: 1, max: 9 }), (minor, debit, third) => {
        const written = mt(...page('1', `:60F:${debit ? 'D' : 'C'}261129EUR${text(minor)}`, [`:61:261130${debit ? 'D' : 'C'}${text(minor)}NTRFX`], ':62F:C261130EUR0,'));
        const [statement] = readMt940(written, 'p.sta');
        expect(statement!.balances[0]!.amount).toBe(debit ? -minor : minor);
        expect(statement!.entries[0]!.amount).toBe(debit ? -minor : minor);
        expect(() => readMt940(written.replace(`EUR${text(minor)}`, `EUR${text(minor)}${third}`), 'p.sta')).toThrow(/is not an amount in EUR/);
      }),
      { numRuns: 40 },
    );
  });

  it('accepts every day of the calendar as YYMMDD and refuses every day after a month ends', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }), (yy, month, day) => {
        const last = new Date(Date.UTC(2000 + yy, month, 0)).getUTCDate();
        const yymmdd = [yy, month, day].map((n) => String(n).padStart(2, '0')).join('');
        const written = mt(...page('1', ':60F:C261129EUR1,00', [], `:62F:C${yymmdd}EUR1,00`));
        if (day <= last) expect(readMt940(written, 'p.sta')[0]!.businessDate).toBe(`20${yymmdd.slice(0, 2)}-${yymmdd.slice(2, 4)}-${yymmdd.slice(4)}`);
        else expect(refusal(() => readMt940(written, 'p.sta'))).toMatch(/^p\.sta, line 5: :62F: date \d{6} is not a date/);
      }),
      { numRuns: 60 },
    );
  });
});
