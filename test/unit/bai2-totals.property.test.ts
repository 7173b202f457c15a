import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBai2 } from '../../src/statements/bai2-reader.js';
import { writeBai2File, type Bai2Account, type Bai2Detail, type Bai2Group, type Bai2Model, type Bai2Summary } from '../helpers/bai2-builder.js';
import { refusal } from '../helpers/statement-refusal.js';

const BALANCE_CODES = { '010': 'OPBD', '015': 'CLBD', '040': 'OPAV', '045': 'CLAV' } as const;
type BalanceType = keyof typeof BALANCE_CODES;

const minor = fc.bigInt({ min: 0n, max: 10n ** 18n });
const signedText = fc.tuple(fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), fc.boolean()).map(([v, plus]) => (v < 0n ? `${v}` : plus ? `+${v}` : `${v}`));

// The balances (each type code at most once, in any order) among other status and summary codes.
const summaries: fc.Arbitrary<Bai2Summary[]> = fc
  .tuple(
    fc.shuffledSubarray(Object.keys(BALANCE_CODES) as BalanceType[]),
    fc.array(fc.oneof(fc.record({ type: fc.constantFrom('072', '074', '030'), amount: signedText }), fc.record({ type: fc.constantFrom('100', '400', '900'), amount: minor.map(String), count: fc.nat(999).map(String) })), { maxLength: 3 }),
    fc.array(signedText, { minLength: 4, maxLength: 4 }),
  )
  .chain(([balances, others, amounts]) => fc.shuffledSubarray([...balances.map((type, i) => ({ type, amount: amounts[i]! })), ...others], { minLength: balances.length + others.length }));

const FUNDS = [[''], ['Z'], ['0'], ['1'], ['2'], ['S', '100', '-5', ''], ['V', '261125', '0930'], ['D', '2', '0', '100', '1', '200']];
const text = fc.stringMatching(/^[A-Za-z0-9 ,./-]{0,30}$/);

const detail: fc.Arbitrary<Bai2Detail> = fc.record({
  type: fc.integer({ min: 100, max: 699 }).map((c) => String(c)),
  amount: minor.map(String),
  funds: fc.constantFrom(...FUNDS),
  bankReference: fc.stringMatching(/^[A-Z0-9]{0,10}$/),
  reference: fc.stringMatching(/^[A-Z0-9-]{0,10}$/),
  text: fc.array(text, { maxLength: 3 }),
});

const account: fc.Arbitrary<Bai2Account> = fc.record({
  number: fc.stringMatching(/^[0-9]{1,17}$/),
  currency: fc.constantFrom('', 'USD', 'JPY', 'KWD', 'EUR', 'BHD'),
  summaries,
  perLine: fc.integer({ min: 1, max: 4 }),
  details: fc.array(detail, { maxLength: 4 }),
});

const yymmdd = fc.date({ min: new Date('2001-01-01T00:00:00Z'), max: new Date('2098-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(2, 10).replaceAll('-', ''));

const group: fc.Arbitrary<Bai2Group> = fc.record({
  asOfDate: yymmdd,
  currency: fc.constantFrom('', 'USD', 'CAD'),
  modifier: fc.constantFrom('', '1', '2', '3', '4'),
  accounts: fc.array(account, { minLength: 1, maxLength: 3 }),
});

const model: fc.Arbitrary<Bai2Model> = fc.record({ fileId: fc.stringMatching(/^[0-9A-Z]{1,8}$/), groups: fc.array(group, { minLength: 1, maxLength: 3 }) });

const isoOf = (d: string) => `20${d.slice(0, 2)}-${d.slice(2, 4)}-${d.slice(4, 6)}`;

/** What each account must read back as, from the model alone. */
function expected(m: Bai2Model) {
  return m.groups.flatMap((g) =>
    g.accounts.map((a) => {
      const date = isoOf(g.asOfDate);
      const balances = a.summaries.filter((s) => s.type in BALANCE_CODES).map((s) => ({ code: BALANCE_CODES[s.type as BalanceType], amount: BigInt(s.amount), date }));
      return {
        accountId: a.number,
        currency: a.currency || g.currency || 'USD',
        businessDate: date,
        statementId: `${date}/${m.fileId}`,
        intraday: g.modifier === '1' || g.modifier === '3' || !balances.some((b) => b.code === 'CLBD'),
        balances,
        entries: a.details.map((d) => {
          const debit = Number(d.type) >= 400;
          const texts = (d.text ?? []).map((t) => t.trim()).filter((t) => t !== '');
          return {
            amount: debit ? -BigInt(d.amount) : BigInt(d.amount),
            creditDebit: debit ? 'debit' : 'credit',
            status: 'BOOK',
            bookingDate: date,
            valueDate: d.funds![0] === '0' ? date : d.funds![0] === 'V' ? '2026-11-25' : null,
            reference: d.reference || null,
            bankReference: d.bankReference || null,
            details: texts.length === 0 ? null : texts.join(' '),
            reversal: false,
          };
        }),
      };
    }),
  );
}

/** The text with line `line` (1-based) changed. */
function withLine(text: string, line: number, change: (record: string) => string): string {
  const lines = text.split('\n');
  lines[line - 1] = change(lines[line - 1]!);
  return lines.join('\n');
}

const delta = fc.bigInt({ min: -(10n ** 6n), max: 10n ** 6n }).filter((d) => d !== 0n);
const countDelta = fc.integer({ min: -3, max: 3 }).filter((d) => d !== 0);

describe('BAI2 files as the specification writes them', () => {
  it('read back every account of every group with the balances, amounts, signs, references and texts written', () => {
    fc.assert(
      fc.property(model, (m) => {
        const statements = readBai2(writeBai2File(m).text, 'r.bai');
        expect(statements.map(({ accountId, currency, businessDate, statementId, intraday, balances, entries }) => ({ accountId, currency, businessDate, statementId, intraday, balances, entries }))).toEqual(expected(m));
      }),
    );
  });

  it('a wrong account control total is refused naming the file, the trailer\'s line, the account and both totals', () => {
    fc.assert(
      fc.property(model, fc.nat(), delta, (m, pick, d) => {
        const written = writeBai2File(m);
        const trailer = written.accountTrailers[pick % written.accountTrailers.length]!;
        const text = withLine(written.text, trailer.line, () => `49,${trailer.total + d},${trailer.records}/`);
        expect(refusal(() => readBai2(text, 'w.bai'))).toBe(
          `w.bai, line ${trailer.line}: the account control total of account ${trailer.account} is ${trailer.total + d}, the amounts of its 03 and 16 records (line ${trailer.headerLine} on) add up to ${trailer.total}.`,
        );
      }),
    );
  });

  it('a wrong account record count is refused naming the line and both counts', () => {
    fc.assert(
      fc.property(model, fc.nat(), countDelta, (m, pick, d) => {
        const written = writeBai2File(m);
        const trailer = written.accountTrailers[pick % written.accountTrailers.length]!;
        fc.pre(trailer.records + d >= 0);
        const text = withLine(written.text, trailer.line, () => `49,${trailer.total},${trailer.records + d}/`);
        expect(refusal(() => readBai2(text, 'w.bai'))).toBe(
          `w.bai, line ${trailer.line}: the account trailer of account ${trailer.account} says ${trailer.records + d} records, the account (line ${trailer.headerLine}) has ${trailer.records} (03 to 49, continuations included).`,
        );
      }),
    );
  });

  it('a wrong group control total, number of accounts or records is refused naming the group trailer\'s line', () => {
    fc.assert(
      fc.property(model, fc.nat(), delta, countDelta, fc.constantFrom('total', 'accounts', 'records'), (m, pick, d, c, what) => {
        const written = writeBai2File(m);
        const g = written.groupTrailers[pick % written.groupTrailers.length]!;
        fc.pre(g.accounts + c >= 0 && g.records + c >= 0);
        const fields = { total: what === 'total' ? g.total + d : g.total, accounts: what === 'accounts' ? g.accounts + c : g.accounts, records: what === 'records' ? g.records + c : g.records };
        const text = withLine(written.text, g.line, () => `98,${fields.total},${fields.accounts},${fields.records}/`);
        const message = {
          total: `the group control total is ${fields.total}, its accounts' control totals add up to ${g.total}.`,
          accounts: `the group trailer says ${fields.accounts} accounts, the group (line ${g.headerLine}) has ${g.accounts}.`,
          records: `the group trailer says ${fields.records} records, the group (line ${g.headerLine}) has ${g.records} (02 to 98, continuations included).`,
        }[what];
        expect(refusal(() => readBai2(text, 'w.bai'))).toBe(`w.bai, line ${g.line}: ${message}`);
      }),
    );
  });

  it('a wrong file control total, number of groups or records is refused naming the file trailer\'s line', () => {
    fc.assert(
      fc.property(model, delta, countDelta, fc.constantFrom('total', 'groups', 'records'), (m, d, c, what) => {
        const written = writeBai2File(m);
        const f = written.fileTrailer;
        fc.pre(f.groups + c >= 0);
        const fields = { total: what === 'total' ? f.total + d : f.total, groups: what === 'groups' ? f.groups + c : f.groups, records: what === 'records' ? f.records + c : f.records };
        const text = withLine(written.text, f.line, () => `99,${fields.total},${fields.groups},${fields.records}/`);
        const message = {
          total: `the file control total is ${fields.total}, its groups' control totals add up to ${f.total}.`,
          groups: `the file trailer says ${fields.groups} groups, the file has ${f.groups}.`,
          records: `the file trailer says ${fields.records} records, the file has ${f.records} (01 to 99, continuations included).`,
        }[what];
        expect(refusal(() => readBai2(text, 'w.bai'))).toBe(`w.bai, line ${f.line}: ${message}`);
      }),
    );
  });

  it('the trailers\' totals may be written with a plus sign; a total or count that is not a number is refused naming it', () => {
    const written = writeBai2File({ groups: [{ asOfDate: '261126', currency: 'USD', accounts: [{ number: '1', summaries: [{ type: '010', amount: '-500' }, { type: '015', amount: '+200' }], details: [{ type: '195', amount: '700' }] }] }] });
    const [a] = written.accountTrailers;
    const [g] = written.groupTrailers;
    const f = written.fileTrailer;
    expect([a!.total, g!.total, f.total]).toEqual([400n, 400n, 400n]);
    const signed = withLine(withLine(withLine(written.text, a!.line, () => '49,+400,3/'), g!.line, () => '98,+400,1,5/'), f.line, () => '99,+400,1,7/');
    expect(readBai2(signed, 's.bai')).toHaveLength(1);
    const trailer = (line: number, record: string) => refusal(() => readBai2(withLine(written.text, line, () => record), 'n.bai'));
    expect(trailer(a!.line, '49,4OO,3/')).toBe(`n.bai, line ${a!.line}: account control total "4OO" is not an amount (whole minor units, optionally signed).`);
    expect(trailer(a!.line, `49,${'1'.repeat(21)},3/`)).toBe(`n.bai, line ${a!.line}: account control total "${'1'.repeat(21)}" is not an amount (whole minor units, optionally signed).`);
    expect(trailer(a!.line, '49,/')).toBe(`n.bai, line ${a!.line}: account control total "" is not an amount (whole minor units, optionally signed).`);
    expect(trailer(a!.line, '49,400/')).toBe(`n.bai, line ${a!.line}: number of records "" is not a number.`);
    expect(trailer(a!.line, '49,400,+3/')).toBe(`n.bai, line ${a!.line}: number of records "+3" is not a number.`);
    expect(trailer(g!.line, '98,,1,5/')).toBe(`n.bai, line ${g!.line}: group control total "" is not an amount (whole minor units, optionally signed).`);
    expect(trailer(g!.line, '98,400/')).toBe(`n.bai, line ${g!.line}: number of accounts "" is not a number.`);
    expect(trailer(g!.line, '98,400,1/')).toBe(`n.bai, line ${g!.line}: number of records "" is not a number.`);
    expect(trailer(g!.line, '98,400,1,1234567890/')).toBe(`n.bai, line ${g!.line}: number of records "1234567890" is not a number.`);
    expect(trailer(f.line, '99,--400,1,7/')).toBe(`n.bai, line ${f.line}: file control total "--400" is not an amount (whole minor units, optionally signed).`);
    expect(trailer(f.line, '99,400/')).toBe(`n.bai, line ${f.line}: number of groups "" is not a number.`);
    expect(trailer(f.line, '99,400,1/')).toBe(`n.bai, line ${f.line}: number of records "" is not a number.`);
    // A count of up to nine digits is a number: 000000007 is 7.
    expect(readBai2(withLine(written.text, f.line, () => '99,400,1,000000007/'), 'z.bai')).toHaveLength(1);
    expect(readBai2(withLine(written.text, a!.line, () => `49,${'0'.repeat(17)}400,3/`), 'z.bai')).toHaveLength(1);
  });
});
