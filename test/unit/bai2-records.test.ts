import { describe, expect, it } from 'vitest';
import { looksLikeBai2, readBai2 } from '../../src/statements/bai2-reader.js';
import { ledgerAccount, oneGroup, writeBai2File, type Bai2Account, type Bai2Detail } from '../helpers/bai2-builder.js';
import { refusal } from '../helpers/statement-refusal.js';

/** The file of one account holding `details`, read: its one statement. */
function readDetails(details: Bai2Detail[]) {
  const [statement, ...rest] = readBai2(oneGroup([ledgerAccount('123', 0n, 0n, details)]).text, 'd.bai');
  expect(rest).toEqual([]);
  return statement!;
}

const detailRefusal = (details: Bai2Detail[]) => refusal(() => readBai2(oneGroup([ledgerAccount('123', 0n, 0n, details)]).text, 'd.bai'));
const accountRefusal = (account: Bai2Account, group = {}) => refusal(() => readBai2(oneGroup([account], group).text, 'a.bai'));

// A small well-formed file written by hand, totals worked out: 03 amounts 100 + 90 = 190, 16 amount 10; 200.
const SMALL = ['01,S,R,261127,0600,5,,,2/', '02,R,S,1,261126,2400,EUR,2/', '03,42,,010,+100,,,015,+90,,/', '16,475,10,,B1,R1,PAID/', '49,200,3/', '98,200,1,5/', '99,200,1,7/', ''].join('\n');

describe('what a BAI2 file is', () => {
  it('is recognised by its file header (01) first, after a byte order mark or blank lines', () => {
    expect(looksLikeBai2(SMALL)).toBe(true);
    expect(looksLikeBai2(`\uFEFF${SMALL}`)).toBe(true);
    expect(looksLikeBai2(`\n  \r\n${SMALL}`)).toBe(true);
    for (const other of ['02,R,S,1/', '16,01,5/', 'x01,S,R', '01 ,S,R', '0,1,S', ':20:01,', '']) expect(looksLikeBai2(other)).toBe(false);
  });

  it('reads a file with a byte order mark, CRLF line ends, blank lines and records padded to fixed length', () => {
    const padded = SMALL.split('\n').map((l) => (l === '' ? l : l.replace(/\/$/, '').padEnd(80, ' '))).join('\r\n');
    for (const text of [`\uFEFF${SMALL}`, SMALL.replaceAll('\n', '\r\n'), SMALL.replaceAll('\n', '\n\n'), padded, `${SMALL}   \n\n`]) {
      const [statement] = readBai2(text, 'p.bai');
      expect(statement).toMatchObject({ accountId: '42', currency: 'EUR', businessDate: '2026-11-26', statementId: '2026-11-26/5', createdAt: '2026-11-27T06:00:00' });
      expect(statement!.balances).toEqual([
        { code: 'OPBD', amount: 100n, date: '2026-11-26' },
        { code: 'CLBD', amount: 90n, date: '2026-11-26' },
      ]);
      expect(statement!.entries.map((e) => [e.amount, e.bankReference, e.reference, e.details])).toEqual([[-10n, 'B1', 'R1', 'PAID']]);
    }
  });

  it('refuses a file without records, and a line that is not a record, quoting at most 40 characters of it', () => {
    expect(refusal(() => readBai2('', 'e.bai'))).toBe('e.bai: no BAI2 record.');
    expect(refusal(() => readBai2('\n   \n', 'e.bai'))).toBe('e.bai: no BAI2 record.');
    const long = `SOME TEXT THAT IS NOT A RECORD AT ALL, NOT EVEN CLOSE TO ONE`;
    expect(refusal(() => readBai2(SMALL.replace('16,475', long), 'x.bai'))).toBe(`x.bai, line 4: ${JSON.stringify(long.slice(0, 40))} is not a BAI2 record (a record starts with its two-digit code and a comma, such as 16,).`);
    for (const line of [' 16,475,10/', 'X16,475,10/', '1,475/', '166,475/', '16;475/']) {
      expect(refusal(() => readBai2(SMALL.replace('16,475,10,,B1,R1,PAID/', line), 'x.bai'))).toMatch(/^x\.bai, line 4: .* is not a BAI2 record/);
    }
  });

  it('refuses every control character but the tab, naming the line and the character', () => {
    for (const [char, name] of [['\u0000', '0000'], ['\u0001', '0001'], ['\u0008', '0008'], ['\u000B', '000B'], ['\u000C', '000C'], ['\u000E', '000E'], ['\u001B', '001B'], ['\u001F', '001F'], ['\u007F', '007F']] as const) {
      expect(refusal(() => readBai2(SMALL.replace('PAID', `PA${char}ID`), 'c.bai'))).toBe(`c.bai, line 4: holds the control character U+${name}, which no statement has.`);
    }
    expect(readBai2(SMALL.replace('PAID', 'PA\tID'), 'c.bai')[0]!.entries[0]!.details).toBe('PA\tID');
    // Only a byte order mark that starts the file is dropped; one inside a text is kept.
    expect(readBai2(SMALL.replace('PAID', 'PA\uFEFFID'), 'c.bai')[0]!.entries[0]!.details).toBe('PA\uFEFFID');
  });
});

describe('the file header (01)', () => {
  const header = (fields: string) => SMALL.replace('01,S,R,261127,0600,5,,,2/', `01,${fields}`);

  it('needs sender, receiver, creation date and time and a file id; the version, when written, is 2', () => {
    expect(refusal(() => readBai2(header('S,R,261127,0600/'), 'h.bai'))).toBe('h.bai, line 1: the file header has 4 fields, at least 5 are needed (sender, receiver, creation date, creation time, file id).');
    expect(readBai2(header('S,R,261127,0600,5/'), 'h.bai')[0]!.statementId).toBe('2026-11-26/5');
    expect(readBai2(header('S,R,261127,0600, 77 ,,,2/'), 'h.bai')[0]!.statementId).toBe('2026-11-26/77');
    expect(refusal(() => readBai2(header('S,R,261127,0600, ,,,2/'), 'h.bai'))).toBe('h.bai, line 1: the file header has no file identification number.');
    expect(refusal(() => readBai2(header('S,R,261127,0600,5,,,3/'), 'h.bai'))).toBe('h.bai, line 1: version "3" is not BAI version 2.');
    expect(readBai2(header('S,R,261127,0600,5,,,/'), 'h.bai')).toHaveLength(1);
    expect(readBai2(header('S,R,261127,0600,5,,,2,EXTRA/'), 'h.bai')).toHaveLength(1);
  });

  it('reads the header across its continuations', () => {
    const text = SMALL.replace('01,S,R,261127,0600,5,,,2/', '01,S,R,261127/\n88,0600,5,,,2/').replace('99,200,1,7/', '99,200,1,8/');
    expect(readBai2(text, 'h.bai')[0]!.createdAt).toBe('2026-11-27T06:00:00');
    expect(refusal(() => readBai2(text.replace('88,0600,5,,,2/', '88,0600,5,,,4/'), 'h.bai'))).toBe('h.bai, line 1: version "4" is not BAI version 2.');
  });

  it('takes a creation time of 0000 to 2359, and 2400 or 9999 as the end of the day; none leaves the creation time unknown', () => {
    const created = (time: string) => readBai2(header(`S,R,261127,${time},5/`), 'h.bai')[0]!.createdAt;
    expect(['0000', '0959', '1000', '1959', '2000', '2359', '2400', '9999', ''].map(created)).toEqual([
      '2026-11-27T00:00:00',
      '2026-11-27T09:59:00',
      '2026-11-27T10:00:00',
      '2026-11-27T19:59:00',
      '2026-11-27T20:00:00',
      '2026-11-27T23:59:00',
      '2026-11-27T23:59:59',
      '2026-11-27T23:59:59',
      null,
    ]);
    for (const time of ['2360', '2401', '2460', '3000', '0060', '9998', '600', '06000', '10600', 'ab12', '-100']) {
      expect(refusal(() => readBai2(header(`S,R,261127,${time},5/`), 'h.bai'))).toBe(`h.bai, line 1: file creation time ${JSON.stringify(time)} is not a time (HHMM, 0000 to 2400).`);
    }
  });

  it('refuses a creation date that is not YYMMDD or not a day', () => {
    for (const date of ['26112', '2611270', 'x61127', '']) {
      expect(refusal(() => readBai2(header(`S,R,${date},0600,5/`), 'h.bai'))).toBe(`h.bai, line 1: file creation date ${JSON.stringify(date)} is not a date (YYMMDD).`);
    }
    expect(refusal(() => readBai2(header('S,R,270229,0600,5/'), 'h.bai'))).toBe('h.bai, line 1: file creation date 270229 is not a date (2027-02-29 does not exist).');
    expect(readBai2(header('S,R,280229,0600,5/'), 'h.bai')[0]!.createdAt).toBe('2028-02-29T06:00:00');
  });
});

describe('groups (02 … 98)', () => {
  const group = (fields: string) => SMALL.replace('02,R,S,1,261126,2400,EUR,2/', `02,${fields}`);

  it('imports only a group of status 1 (update)', () => {
    expect(refusal(() => readBai2(group('R,S,2,261126,2400,EUR,2/'), 'g.bai'))).toBe('g.bai, line 2: group status 2 (deletion) is not imported: only a group of status 1 (update) is a statement of the account.');
    expect(refusal(() => readBai2(group('R,S,3,261126,2400,EUR,2/'), 'g.bai'))).toBe('g.bai, line 2: group status 3 (correction) is not imported: only a group of status 1 (update) is a statement of the account.');
    expect(refusal(() => readBai2(group('R,S,4,261126,2400,EUR,2/'), 'g.bai'))).toBe('g.bai, line 2: group status 4 (test only) is not imported: only a group of status 1 (update) is a statement of the account.');
    for (const status of ['5', '0', '', '11']) {
      expect(refusal(() => readBai2(group(`R,S,${status},261126,2400,EUR,2/`), 'g.bai'))).toBe(`g.bai, line 2: group status ${JSON.stringify(status)} is not 1 (update), 2 (deletion), 3 (correction) or 4 (test only).`);
    }
    expect(refusal(() => readBai2(group('R,S/'), 'g.bai'))).toBe('g.bai, line 2: group status "" is not 1 (update), 2 (deletion), 3 (correction) or 4 (test only).');
  });

  it('needs an as-of date; its time may be left out', () => {
    expect(refusal(() => readBai2(group('R,S,1/'), 'g.bai'))).toBe('g.bai, line 2: as-of date "" is not a date (YYMMDD).');
    expect(refusal(() => readBai2(group('R,S,1,261131/'), 'g.bai'))).toBe('g.bai, line 2: as-of date 261131 is not a date (2026-11-31 does not exist).');
    expect(refusal(() => readBai2(group('R,S,1,261126,2500,EUR/'), 'g.bai'))).toBe('g.bai, line 2: as-of time "2500" is not a time (HHMM, 0000 to 2400).');
    // Without a currency in the group or the account, amounts are in US dollars.
    const [statement] = readBai2(group('R,S,1,261126/'), 'g.bai');
    expect([statement!.businessDate, statement!.currency, statement!.intraday]).toEqual(['2026-11-26', 'USD', false]);
  });

  it('an interim as-of date (modifier 1 or 3) is an intraday report; a final one (2 or 4), or none, is not', () => {
    const intraday = (modifier: string) => readBai2(group(`R,S,1,261126,2400,EUR,${modifier}/`), 'g.bai')[0]!.intraday;
    expect(['1', '2', '3', '4', ''].map(intraday)).toEqual([true, false, true, false, false]);
    for (const modifier of ['5', '0', 'X', '12']) {
      expect(refusal(() => readBai2(group(`R,S,1,261126,2400,EUR,${modifier}/`), 'g.bai'))).toBe(`g.bai, line 2: as-of date modifier ${JSON.stringify(modifier)} is not 1 to 4.`);
    }
  });

  it('reads a group without accounts, and a file without groups, as no statement', () => {
    expect(readBai2(['01,S,R,261127,0600,5/', '02,R,S,1,261126/', '98,0,0,2/', '99,0,1,4/'].join('\n'), 'e.bai')).toEqual([]);
    expect(readBai2(['01,S,R,261127,0600,5/', '99,0,0,2/'].join('\n'), 'e.bai')).toEqual([]);
  });

  it('reads every group\'s accounts as statements of the group\'s as-of date, in the order written', () => {
    const written = writeBai2File({
      fileId: '9',
      groups: [
        { asOfDate: '261126', currency: 'USD', accounts: [ledgerAccount('111', 5n, 7n, [{ type: '195', amount: '2' }]), ledgerAccount('222', 0n, -3n, [{ type: '495', amount: '3' }], 'JPY')] },
        { asOfDate: '261127', currency: 'KWD', accounts: [ledgerAccount('111', 7n, 7n)] },
      ],
    });
    const statements = readBai2(written.text, 'm.bai');
    expect(statements.map((s) => [s.accountId, s.currency, s.businessDate, s.statementId, s.where])).toEqual([
      ['111', 'USD', '2026-11-26', '2026-11-26/9', 'm.bai, line 3 (account 111)'],
      ['222', 'JPY', '2026-11-26', '2026-11-26/9', 'm.bai, line 6 (account 222)'],
      ['111', 'KWD', '2026-11-27', '2026-11-27/9', 'm.bai, line 11 (account 111)'],
    ]);
  });
});

describe('the order of records', () => {
  it('names the record found where another belongs, or the end of the file', () => {
    const lines = SMALL.trimEnd().split('\n');
    const without = (n: number) => lines.filter((_, i) => i !== n).join('\n');
    expect(refusal(() => readBai2(without(0), 'o.bai'))).toBe('o.bai, line 1: a 02 record where the file header (01) belongs.');
    expect(refusal(() => readBai2(lines.slice(0, 1).join('\n'), 'o.bai'))).toBe('o.bai: ends before its first group header (02) (99).');
    expect(refusal(() => readBai2([lines[0], lines[2]].join('\n'), 'o.bai'))).toBe('o.bai, line 2: a 03 record where the first group header (02) (99) belongs.');
    expect(refusal(() => readBai2(lines.slice(0, 2).join('\n'), 'o.bai'))).toBe('o.bai: ends before its first account identifier (03) (98).');
    expect(refusal(() => readBai2([lines[0], lines[1], lines[3]].join('\n'), 'o.bai'))).toBe('o.bai, line 3: a 16 record where the first account identifier (03) (98) belongs.');
    expect(refusal(() => readBai2(lines.slice(0, 4).join('\n'), 'o.bai'))).toBe('o.bai: ends before its account trailer (49).');
    expect(refusal(() => readBai2(lines.slice(0, 5).join('\n'), 'o.bai'))).toBe('o.bai: ends before its group trailer (98).');
    expect(refusal(() => readBai2([...lines.slice(0, 5), lines[3]].join('\n'), 'o.bai'))).toBe('o.bai, line 6: a 16 record where the group trailer (98) belongs.');
    expect(refusal(() => readBai2(lines.slice(0, 6).join('\n'), 'o.bai'))).toBe('o.bai: ends before its file trailer (99).');
    expect(refusal(() => readBai2([...lines.slice(0, 6), lines[2]].join('\n'), 'o.bai'))).toBe('o.bai, line 7: a 03 record where the file trailer (99) belongs.');
    expect(refusal(() => readBai2(`${SMALL}\n\n03,9/`, 'o.bai'))).toBe('o.bai, line 10: a 03 record after the file trailer (99).');
    expect(refusal(() => readBai2(`88,X/\n${SMALL}`, 'o.bai'))).toBe('o.bai, line 1: a continuation (88) before any record.');
    expect(refusal(() => readBai2(SMALL.replace('16,475', '17,475'), 'o.bai'))).toBe("o.bai, line 4: record code 17 is not one of BAI2's (01, 02, 03, 16, 88, 49, 98, 99).");
  });
});

describe('the account identifier (03) and its summary', () => {
  it('takes the account number without surrounding spaces, and refuses none', () => {
    expect(readBai2(oneGroup([ledgerAccount(' 0975312468 ', 1n, 1n)]).text, 'a.bai')[0]!.accountId).toBe('0975312468');
    expect(accountRefusal(ledgerAccount(' ', 1n, 1n))).toBe('a.bai, line 3: the account identifier has no account number.');
  });

  it('takes its own currency, else the group\'s; refuses one without ISO 4217 minor units', () => {
    expect(readBai2(oneGroup([ledgerAccount('1', 1n, 1n, [], 'BHD')]).text, 'a.bai')[0]!.currency).toBe('BHD');
    expect(readBai2(oneGroup([{ number: '1', summaries: [], details: [] }], { currency: 'JPY' }).text.replace('03,1,/', '03,1/'), 'a.bai')[0]!.currency).toBe('JPY');
    for (const currency of ['XYZ', 'usd', 'XAU', 'US', 'USDX', 'constructor', 'toString']) {
      expect(accountRefusal(ledgerAccount('1', 1n, 1n, [], currency))).toBe(`a.bai, line 3: currency ${JSON.stringify(currency)} is not an ISO 4217 currency with known minor units.`);
    }
  });

  it('keeps opening and closing ledger (010, 015) and available (040, 045) as balances, with their sign; other codes only count in the total', () => {
    const [statement] = readBai2(
      oneGroup([
        {
          number: '1',
          summaries: [
            { type: '010', amount: '-500' },
            { type: '015', amount: '+700' },
            { type: '040', amount: '0' },
            { type: '045', amount: '-1' },
            { type: '072', amount: '-9', count: '', funds: ['Z'] },
            { type: '100', amount: '1200', count: '3' },
            { type: '400', amount: '', count: '0' },
          ],
          perLine: 2,
          details: [{ type: '195', amount: '1200', text: ['IN'] }],
        },
      ]).text,
      'b.bai',
    );
    expect(statement!.balances).toEqual([
      { code: 'OPBD', amount: -500n, date: '2026-11-26' },
      { code: 'CLBD', amount: 700n, date: '2026-11-26' },
      { code: 'OPAV', amount: 0n, date: '2026-11-26' },
      { code: 'CLAV', amount: -1n, date: '2026-11-26' },
    ]);
    expect(statement!.intraday).toBe(false);
  });

  it('a type code without an amount is no balance', () => {
    const [statement] = readBai2(oneGroup([{ number: '1', summaries: [{ type: '010', amount: '' }, { type: '015', amount: '+5' }], details: [] }]).text, 'b.bai');
    expect(statement!.balances).toEqual([{ code: 'CLBD', amount: 5n, date: '2026-11-26' }]);
  });

  it('without a closing ledger (015) it is an intraday report, on any as-of date modifier', () => {
    const [statement] = readBai2(oneGroup([{ number: '1', summaries: [{ type: '010', amount: '+5' }, { type: '045', amount: '+5' }], details: [] }]).text, 'b.bai');
    expect(statement!.intraday).toBe(true);
    expect(readBai2(oneGroup([ledgerAccount('1', 5n, 5n)], { modifier: '1' }).text, 'b.bai')[0]!.intraday).toBe(true);
    expect(readBai2(oneGroup([ledgerAccount('1', 5n, 5n)], { modifier: '4' }).text, 'b.bai')[0]!.intraday).toBe(false);
  });

  it('refuses a balance type code twice, naming both lines; a summary code may repeat', () => {
    const twice = { number: '1', summaries: [{ type: '010', amount: '+5' }, { type: '015', amount: '+5' }, { type: '015', amount: '+6' }], perLine: 2, details: [] };
    expect(accountRefusal(twice)).toBe('a.bai, line 4: type code 015 a second time for the account (first on line 3).');
    const [statement] = readBai2(oneGroup([{ number: '1', summaries: [{ type: '100', amount: '5' }, { type: '100', amount: '6' }], details: [] }]).text, 'b.bai');
    expect(statement!.balances).toEqual([]);
  });

  it('refuses a type code that is not three digits, an item count that is not a number, an amount that is not whole minor units', () => {
    for (const type of ['10', '0100', 'A10', 'X100', '']) {
      expect(accountRefusal({ number: '1', summaries: [{ type, amount: '5' }], details: [] })).toBe(`a.bai, line 3: type code ${JSON.stringify(type)} is not three digits.`);
    }
    for (const count of ['x', '-1', '1234567890', '1.5']) {
      expect(accountRefusal({ number: '1', summaries: [{ type: '100', amount: '5', count }], details: [] })).toBe(`a.bai, line 3: item count ${JSON.stringify(count)} of type code 100 is not a number.`);
    }
    expect(readBai2(oneGroup([{ number: '1', summaries: [{ type: '100', amount: '5', count: '123456789' }], details: [] }]).text, 'b.bai')).toHaveLength(1);
    // Status codes (below 100) are balances and may be signed; summary codes (100 on) are not.
    for (const amount of ['+5', '-5', '5.00', `1${'0'.repeat(20)}`]) {
      expect(accountRefusal({ number: '1', summaries: [{ type: '100', amount }], details: [] })).toBe(`a.bai, line 3: amount ${JSON.stringify(amount)} of type code 100 is not an unsigned whole number of minor units.`);
    }
    for (const amount of ['5.00', 'x', '--5', `1${'0'.repeat(20)}`]) {
      expect(accountRefusal({ number: '1', summaries: [{ type: '099', amount }], details: [] })).toBe(`a.bai, line 3: amount ${JSON.stringify(amount)} of type code 099 is not a whole number of minor units (a sign allowed).`);
    }
    const big = `9${'0'.repeat(19)}`;
    const [statement] = readBai2(oneGroup([{ number: '1', summaries: [{ type: '010', amount: `-${big}` }, { type: '100', amount: big }], details: [] }]).text, 'b.bai');
    expect(statement!.balances[0]!.amount).toBe(-BigInt(big));
  });

  it('continues the summary on 88 records, each read on its own: a part that ends inside a type code group leaves the rest of it empty', () => {
    const text = oneGroup([ledgerAccount('1', 5n, 5n)]).text.replace('03,1,,010,+5,,,015,+5,,/', '03,1,,010,+5/\n88,015,+5/').replace(/^49,10,2\//m, '49,10,3/').replace(/^98,10,1,4\//m, '98,10,1,5/').replace(/^99,10,1,6\//m, '99,10,1,7/');
    const [statement] = readBai2(text, 'c.bai');
    expect(statement!.balances.map((b) => [b.code, b.amount])).toEqual([
      ['OPBD', 5n],
      ['CLBD', 5n],
    ]);
    // A last field left empty (a trailing comma, no `/`) reads the same.
    expect(readBai2(text.replace('88,015,+5/', '88,015,+5,,,'), 'c.bai')[0]!.balances).toEqual(statement!.balances);
    expect(readBai2(text.replace('88,015,+5/', '88,015,+5,/'), 'c.bai')[0]!.balances).toEqual(statement!.balances);
  });
});

describe('transaction details (16)', () => {
  it('credits are type codes 100 to 399, debits 400 to 699; any other is refused, never guessed', () => {
    const signs = ['100', '399', '400', '699'].map((type) => readDetails([{ type, amount: '7' }]).entries[0]!);
    expect(signs.map((e) => [e.amount, e.creditDebit, e.status, e.bookingDate, e.reversal])).toEqual([
      [7n, 'credit', 'BOOK', '2026-11-26', false],
      [7n, 'credit', 'BOOK', '2026-11-26', false],
      [-7n, 'debit', 'BOOK', '2026-11-26', false],
      [-7n, 'debit', 'BOOK', '2026-11-26', false],
    ]);
    for (const type of ['099', '700', '901', '000']) {
      expect(detailRefusal([{ type, amount: '7' }])).toBe(`d.bai, line 4: transaction type code ${type} is neither a credit (100 to 399) nor a debit (400 to 699): its direction is not defined, and an amount's sign is never guessed.`);
    }
    for (const type of ['19', '1950', 'X195', 'ABC', '']) {
      expect(detailRefusal([{ type, amount: '7' }])).toBe(`d.bai, line 4: transaction type code ${JSON.stringify(type)} is not three digits.`);
    }
  });

  it('refuses an amount that is not an unsigned whole number of at most 20 digits', () => {
    for (const amount of ['', '+7', '-7', '7.00', `1${'0'.repeat(20)}`]) {
      expect(detailRefusal([{ type: '195', amount }])).toBe(`d.bai, line 4: amount ${JSON.stringify(amount)} of the transaction is not an unsigned whole number of minor units.`);
    }
    const max = '9'.repeat(20);
    expect(readDetails([{ type: '495', amount: max }]).entries[0]!.amount).toBe(-BigInt(max));
  });

  it('keeps bank and customer references, empty ones as none, and the text with its commas and slashes, continued by 88s', () => {
    const [a, b, c] = readDetails([
      { type: '195', amount: '1', bankReference: 'B1', reference: 'R1', text: ['PAID, WITH THANKS', 'FOR INVOICE 7/2026', 'AND A/B'] },
      { type: '195', amount: '2', bankReference: '', reference: '', text: [] },
      { type: '195', amount: '3', text: ['', '  ', 'ONLY IN THE 88  '] },
    ]).entries;
    expect([a!.bankReference, a!.reference, a!.details]).toEqual(['B1', 'R1', 'PAID, WITH THANKS FOR INVOICE 7/2026 AND A/B']);
    expect([b!.bankReference, b!.reference, b!.details]).toEqual([null, null, null]);
    expect(c!.details).toBe('ONLY IN THE 88');
  });

  it('a record ended early by its `/` leaves every later field empty', () => {
    const text = SMALL.replace('16,475,10,,B1,R1,PAID/', '16,475,10/');
    const [entry] = readBai2(text, 'e.bai')[0]!.entries;
    expect([entry!.amount, entry!.valueDate, entry!.bankReference, entry!.reference, entry!.details]).toEqual([-10n, null, null, null, null]);
    const [after] = readBai2(SMALL.replace('16,475,10,,B1,R1,PAID/', '16,475,10,/'), 'e.bai')[0]!.entries;
    expect([after!.bankReference, after!.details]).toEqual([null, null]);
    const [slashInField] = readBai2(SMALL.replace('16,475,10,,B1,R1,PAID/', '16,475,10,,B1/,R1,PAID'), 'e.bai')[0]!.entries;
    expect([slashInField!.bankReference, slashInField!.reference, slashInField!.details]).toEqual(['B1', null, null]);
  });
});

describe('funds types', () => {
  const entry = (funds: string[]) => readDetails([{ type: '195', amount: '1', funds, bankReference: 'BANKREF', reference: 'REF', text: ['TEXT'] }]).entries[0]!;
  const fundsRefusal = (funds: string[]) => detailRefusal([{ type: '195', amount: '1', funds, bankReference: 'BANKREF' }]);

  it('blank, Z, 1 and 2 give no value date; 0 (immediate) the as-of date; V its own date', () => {
    const read = (funds: string[]) => {
      const e = entry(funds);
      return [e.valueDate, e.bankReference, e.reference, e.details];
    };
    expect(read([''])).toEqual([null, 'BANKREF', 'REF', 'TEXT']);
    expect(read(['Z'])).toEqual([null, 'BANKREF', 'REF', 'TEXT']);
    expect(read(['1'])).toEqual([null, 'BANKREF', 'REF', 'TEXT']);
    expect(read(['2'])).toEqual([null, 'BANKREF', 'REF', 'TEXT']);
    expect(read(['0'])).toEqual(['2026-11-26', 'BANKREF', 'REF', 'TEXT']);
    expect(read(['V', '261124', '1530'])).toEqual(['2026-11-24', 'BANKREF', 'REF', 'TEXT']);
    expect(read(['V', '261124', ''])).toEqual(['2026-11-24', 'BANKREF', 'REF', 'TEXT']);
  });

  it('skips S (three availability amounts) and D (distributions: days and amount each) before the references', () => {
    expect(entry(['S', '100', '-200', '']).bankReference).toBe('BANKREF');
    expect(entry(['D', '0']).bankReference).toBe('BANKREF');
    expect(entry(['D', '1', '0', '5']).bankReference).toBe('BANKREF');
    expect(entry(['D', '3', '0', '5', '1', '+6', '2', '']).bankReference).toBe('BANKREF');
    // Their amounts move no money: the account's control total leaves them out.
    const s = entry(['S', '900000', '900000', '900000']);
    expect([s.amount, s.reference]).toEqual([1n, 'REF']);
  });

  it('refuses a funds type it does not know, and fields of a funds type that are not what they must be', () => {
    for (const type of ['X', '3', 's', 'VV']) expect(fundsRefusal([type])).toBe(`d.bai, line 4: funds type ${JSON.stringify(type)} is not one of 0, 1, 2, S, V, D, Z.`);
    expect(fundsRefusal(['S', '1', 'x', '3'])).toBe('d.bai, line 4: availability amount "x" is not a whole number of minor units.');
    for (const amount of ['3.5', 'x5', '+-5', `1${'0'.repeat(20)}`]) {
      expect(fundsRefusal(['S', '1', '2', amount])).toBe(`d.bai, line 4: availability amount ${JSON.stringify(amount)} is not a whole number of minor units.`);
    }
    expect(entry(['S', '+1', '-2', `9${'0'.repeat(19)}`]).bankReference).toBe('BANKREF');
    expect(fundsRefusal(['V', '261131', ''])).toBe('d.bai, line 4: value date 261131 is not a date (2026-11-31 does not exist).');
    expect(fundsRefusal(['V', '', ''])).toBe('d.bai, line 4: value date "" is not a date (YYMMDD).');
    expect(fundsRefusal(['V', '261124', '2561'])).toBe('d.bai, line 4: value time "2561" is not a time (HHMM, 0000 to 2400).');
    expect(fundsRefusal(['D', 'x'])).toBe('d.bai, line 4: number of distributions "x" is not a number.');
    expect(fundsRefusal(['D', '1', 'y', '5'])).toBe('d.bai, line 4: days of a distribution "y" is not a number.');
    expect(fundsRefusal(['D', '2', '0', '5', '1', 'z'])).toBe('d.bai, line 4: availability amount "z" is not a whole number of minor units.');
  });

  it('reads funds types in the 03 summary too, their amounts in no total', () => {
    const [statement] = readBai2(
      oneGroup([{ number: '1', summaries: [{ type: '010', amount: '+5', count: '', funds: ['S', '1', '2', '3'] }, { type: '015', amount: '+5', count: '', funds: ['D', '1', '0', '9'] }, { type: '040', amount: '+4', count: '', funds: ['V', '261125', '0900'] }], details: [] }]).text,
      'f.bai',
    );
    expect(statement!.balances.map((b) => [b.code, b.amount])).toEqual([
      ['OPBD', 5n],
      ['CLBD', 5n],
      ['OPAV', 4n],
    ]);
    expect(accountRefusal({ number: '1', summaries: [{ type: '010', amount: '+5', count: '', funds: ['Q'] }], details: [] })).toBe('a.bai, line 3: funds type "Q" is not one of 0, 1, 2, S, V, D, Z.');
  });
});
