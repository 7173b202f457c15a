import { describe, expect, it } from 'vitest';
import { looksLikeMt940, readMt940 } from '../../src/statements/mt940-reader.js';
import { refusal } from '../helpers/statement-refusal.js';

// The edges of the MT940 syntax: where a tag, a block end or a text field starts and stops.
const mt = (...lines: string[]) => [...lines, ''].join('\r\n');
const statement = (...body: string[]) => mt(':20:A', ':25:DE89370400440532013000', ':28C:1', ':60F:C261129EUR1,00', ...body, ':62F:C261130EUR1,00');

describe('MT940 text fields and block ends', () => {
  it('ignores only a byte order mark at the very start', () => {
    expect(looksLikeMt940(':2\uFEFF0:A')).toBe(false);
  });

  it('takes a line for a block end only when it is -}, - or -}{5:…} alone, and } alone', () => {
    const text = statement(':61:261130C1,00NTRFX', ':86:a', '-->b', '}c', 'd-}', 'ref :20:e', '  f');
    expect(readMt940(text, 'f.sta')[0]!.entries[0]!.details).toBe('a-->b}cd-}ref :20:e  f');
  });

  it('joins every line of supplementary details with a space, and reads an empty :86: as no details', () => {
    const text = statement(':61:261130C1,00NTRFX//B', 'one', 'two', 'three', ':61:261130C1,00NTRFY', ':86:');
    expect(readMt940(text, 's.sta')[0]!.entries.map((e) => e.details)).toEqual(['one two three', null]);
  });

  it('reads an account of more than 34 characters as no IBAN', () => {
    const account = `DE89${'1'.repeat(31)}`;
    const [read] = readMt940(statement().replace(':25:DE89370400440532013000', `:25:${account}`), 'a.sta');
    expect([read!.iban, read!.accountId]).toEqual([null, account]);
    const longest = `DE89${'1'.repeat(30)}`;
    expect(readMt940(statement().replace(':25:DE89370400440532013000', `:25:${longest}`), 'a.sta')[0]!.iban).toBe(longest);
  });
});

describe('MT940 statements, more edges', () => {
  it('keeps a U+FEFF inside a field as written; only a leading one is dropped', () => {
    const text = statement(':61:261130C1,00NTRFX', ':86:pay\uFEFFout');
    expect(readMt940(text, 'f.sta')[0]!.entries[0]!.details).toBe('pay\uFEFFout');
  });

  it('reads block headers on a line of their own, {4: on the next', () => {
    const text = mt('{1:F01BANKDEFFAXXX0000000000}{2:O940BANKDEFFAXXXN}', '{3:{108:MUR}}', '{4:', ...statement().split('\r\n').filter((l) => l !== ''), '-}');
    expect(readMt940(text, 'h.sta')[0]!.where).toBe('h.sta, line 4 (statement 1)');
  });

  it('reads a :61: after the closing balance as an entry of its statement', () => {
    const text = mt(':20:A', ':25:ACC', ':28C:1', ':60F:C261129EUR1,00', ':62F:C261130EUR2,00', ':61:261130C1,00NTRFX');
    expect(readMt940(text, 'l.sta')[0]!.entries.map((e) => e.amount)).toEqual([100n]);
  });

  it('reads as an IBAN only two letters, two digits, then 11 to 30 letters or digits', () => {
    for (const account of ['1DE89370400440532013000', 'DE8A370400440532013000']) {
      expect(readMt940(statement().replace(':25:DE89370400440532013000', `:25:${account}`), 'a.sta')[0]!.iban).toBeNull();
    }
  });

  it('refuses a file of an MT942 report and an MT940 statement, reading it as MT942', () => {
    const text = mt(':20:I', ':25:ACC', ':28C:1', ':34F:EUR0,', ':13D:2611301200', ':20:A', ':25:ACC', ':28C:2', ':60F:C261129EUR1,00', ':62F:C261130EUR1,00');
    expect(() => readMt940(text, 'm.sta')).toThrow('m.sta, line 6 (report 2): no :34F: floor limit (an MT942 names its currency there).');
  });
});

describe('MT942 edges', () => {
  it('reads long statement numbers, floor limits and counts, a :13D: of a date only, a last :61: without :86:', () => {
    const text = mt(':20:I', ':25:ACC', ':28C:12345/12345', ':34F:EURD123,45', ':13D:261130', ':61:261130C1,00NTRFX', ':61:261130C2,00NTRFY', ':90C:02EUR3,00');
    const [report] = readMt940(text, 'r.sta');
    expect([report!.where, report!.statementId, report!.entries.map((e) => e.amount)]).toEqual(['r.sta, line 1 (report 12345)', '12345/2026-11-30/261130', [100n, 200n]]);
  });

  it('reads a report whose last tag is a :61:', () => {
    const [report] = readMt940(mt(':20:I', ':25:ACC', ':28C:1', ':34F:EUR0,', ':13D:2611301200', ':61:261130D1,00NTRFX'), 'r.sta');
    expect(report!.entries.map((e) => [e.amount, e.details])).toEqual([[-100n, null]]);
  });

  it('takes a message with :13: as an interim report even without :34F:', () => {
    expect(refusal(() => readMt940(mt(':20:I', ':25:ACC', ':28C:1', ':13:2611301200'), 'r.sta'))).toBe('r.sta, line 1 (report 1): no :34F: floor limit (an MT942 names its currency there).');
  });

  it('reads the account of a report without its spaces', () => {
    const [report] = readMt940(mt(':20:I', ':25:DE89 3704 0044 0532 0130 00', ':28C:1', ':34F:EUR0,', ':13D:2611301200'), 'r.sta');
    expect([report!.iban, report!.accountId]).toEqual(['DE89370400440532013000', 'DE89370400440532013000']);
  });
});
