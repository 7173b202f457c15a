import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { writeCamt053, writeMt940, type SampleStatements } from '../../src/statements/index.js';
import { BAI2_FILE } from '../helpers/bai2-fixtures.js';
import { runCliInProcess, runCliProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let db: TestDatabase;
let dir: string;
const CAL = 'DE89370400440532013000';
const OPEN = 'GB29NWBK60161331926819';
const YEARLY = 'NL91ABNA0417164300';
const NEVER = 'FR1420041010050500013M02606';
const YEARLY_TWO = 'BE68539007547034';

beforeAll(async () => {
  db = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await db.handle.close();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-bai2-calendar-'));
  writeFileSync(path.join(dir, 'holidays.txt'), '# the bank\'s holidays\n2026-12-24\n\n2026-12-25 # Christmas\n');
  writeFileSync(
    path.join(dir, 'accounts.yaml'),
    [
      'bankAccounts:',
      '  - { name: us-bank, accountId: "0975312468", currency: USD }',
      `  - name: cal-bank`,
      `    iban: ${CAL}`,
      '    currency: EUR',
      '    calendar: { closedWeekdays: [Sat, Sun], holidays: [2026-01-01], holidaysFile: holidays.txt }',
      `  - { name: open-bank, iban: ${OPEN}, currency: EUR }`,
      `  - { name: yearly-bank, iban: ${YEARLY}, currency: EUR, sequenceRestarts: yearly }`,
      `  - { name: never-bank, iban: ${NEVER}, currency: EUR, sequenceRestarts: never }`,
      `  - { name: yearly-two, iban: ${YEARLY_TWO}, currency: EUR, sequenceRestarts: yearly }`,
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (accounts = 'accounts.yaml') => ({ DATABASE_URL: '', ...db.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: path.join(dir, accounts) });
const cli = (args: string[]) => runCliInProcess(args, env(), { clock: new FixedClock(new Date('2026-12-02T12:00:00Z')) });
const built = async (args: string[]) => {
  const run = await runCliProcess(args, env());
  return { ...run, stderr: run.stderr.replace(/^Database: .*\n/m, '') };
};

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

const counts = () =>
  withDatabase(db, async (k: Kysely<Database>) => ({
    statements: (await k.selectFrom('bank_statements').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n,
    imports: (await k.selectFrom('statement_imports').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n,
  }));

const results = (account: string, date: string) =>
  withDatabase(db, (k: Kysely<Database>) => k.selectFrom('reconciliation_results').select(['status', 'gateway_balance', 'note']).where('account', '=', account).where('business_date', '=', date).orderBy('id').execute());

type Listed = { business_date: string; sequence: number | null; opening: string | null; closing: string | null; entries: number; proof: string; proof_detail: string | null };
const listed = async (account: string) => JSON.parse((await cli(['statements', 'list', '--json', '--account', account])).stdout) as Listed[];

describe(`BAI2, bank calendars and statement sequences, through the CLI (${backend})`, () => {
  it('imports a BAI2 file with a closing ledger (015) through the built CLI: its balances are the file\'s, proof ok', async () => {
    const run = await built(['statements', 'import', file('us.bai', BAI2_FILE)]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('new       us-bank 2026-11-26 2026-11-26/7 (bai2)');
    const rows = JSON.parse((await built(['statements', 'list', '--json', '--account', 'us-bank'])).stdout) as Listed[];
    expect(rows).toEqual([expect.objectContaining({ account: 'us-bank', business_date: '2026-11-26', currency: 'USD', opening: '1500.00', closing: '1425.50', entries: 3, proof: 'ok', proof_detail: null, sequence: null })]);
    const stored = await withDatabase(db, async (k: Kysely<Database>) => ({
      balances: await k.selectFrom('bank_statement_balances').innerJoin('bank_statements', 'bank_statements.id', 'bank_statement_balances.statement_pk').select(['code', 'bank_statement_balances.amount']).where('account', '=', 'us-bank').orderBy('position').execute(),
      entries: await k.selectFrom('bank_statement_entries').innerJoin('bank_statements', 'bank_statements.id', 'bank_statement_entries.statement_pk').select(['bank_statement_entries.amount']).where('account', '=', 'us-bank').orderBy('position').execute(),
    }));
    expect(stored.balances).toEqual([
      { code: 'OPBD', amount: '150000' },
      { code: 'CLBD', amount: '142550' },
      { code: 'OPAV', amount: '150000' },
      { code: 'CLAV', amount: '140000' },
    ]);
    expect(stored.entries.map((e) => e.amount)).toEqual(['25000', '-30000', '-2450']);
  }, 180_000);

  it('refuses a BAI2 file with a wrong control total (exit 2, naming the file and the line) and one of an account not configured, storing nothing', async () => {
    const before = await counts();
    const wrong = await cli(['statements', 'import', file('wrong.bai', BAI2_FILE.replace('49,697450,8/', '49,697451,8/'))]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(`${path.join(dir, 'wrong.bai')}, line 10: the account control total of account 0975312468 is 697451, the amounts of its 03 and 16 records (line 3 on) add up to 697450.`);
    const unknown = await cli(['statements', 'import', file('other.bai', BAI2_FILE.replace('03,0975312468,', '03,1111111111,'))]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`${path.join(dir, 'other.bai')}, line 3 (account 1111111111): account 1111111111 is not a configured bank account`);
    expect(await counts()).toEqual(before);
  }, 120_000);

  it('a Saturday and a Sunday the bank\'s calendar closes get no bank result (not no_statement), reconcile exits 0, and Monday\'s statement rolls forward over them', async () => {
    const sample: SampleStatements = { iban: CAL, currency: 'EUR', opening: 1_000_000n, days: [{ sequence: 1, date: '2026-11-27', entries: [5_000n] }, { sequence: 2, date: '2026-11-30', entries: [-700n] }] };
    expect((await cli(['statements', 'import', file('cal.xml', writeCamt053(sample))])).code).toBe(0);
    for (const date of ['2026-11-28', '2026-11-29']) {
      const run = await cli(['reconcile', '--date', date, '--account', 'cal-bank']);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`cal-bank: its bank does not book on ${date} (the bank account's calendar), so no statement is due and it has no result for the date.`);
      expect(await results('cal-bank', date)).toEqual([]);
    }
    expect((await listed('cal-bank')).map((s) => [s.business_date, s.proof])).toEqual([
      ['2026-11-27', 'ok'],
      ['2026-11-30', 'ok'],
    ]);
    // The same Saturday of a bank without a calendar is past its statement deadline: no_statement.
    expect((await cli(['statements', 'import', file('open.xml', writeCamt053({ ...sample, iban: OPEN }))])).code).toBe(0);
    const open = await cli(['reconcile', '--date', '2026-11-28', '--account', 'open-bank']);
    expect(open.code).toBe(3);
    expect((await results('open-bank', '2026-11-28')).map((r) => r.status)).toEqual(['no_statement']);
  }, 240_000);

  it('sequenceRestarts: yearly takes 1 on the first statement of a year as the restart, and another first number as a gap from 1', async () => {
    const days = (iban: string, first: number, second: number): SampleStatements => ({ iban, currency: 'EUR', opening: 0n, days: [{ sequence: 250, date: '2025-12-30', entries: [100n] }, { sequence: first, date: '2025-12-31', entries: [100n] }, { sequence: second, date: '2026-01-02', entries: [100n] }] });
    expect((await cli(['statements', 'import', file('yearly.sta', writeMt940(days(YEARLY, 251, 1)))])).code).toBe(0);
    expect((await listed('yearly-bank')).map((s) => [s.sequence, s.proof])).toEqual([
      [250, 'ok'],
      [251, 'ok'],
      [1, 'ok'],
    ]);
    const continued = writeMt940({ ...days(YEARLY, 251, 252), days: [{ sequence: 252, date: '2026-01-05', entries: [100n] }], opening: 300n });
    const run = await cli(['statements', 'import', file('yearly-252.sta', continued.replace(':28C:252/1', ':28C:2/1'))]);
    expect(run.code).toBe(0);
    expect((await listed('yearly-bank')).map((s) => [s.sequence, s.proof])).toEqual([
      [250, 'ok'],
      [251, 'ok'],
      [1, 'ok'],
      [2, 'ok'],
    ]);
    // Numbered on from December, the first statement of 2026 leaves 1 to 251 missing.
    const onward = await cli(['statements', 'import', file('yearly-two.sta', writeMt940({ ...days(YEARLY_TWO, 251, 252), days: days(YEARLY_TWO, 251, 252).days.slice(1) }))]);
    expect(onward.stdout).toContain('proof     yearly-two 2026-01-02 252/2026-01-02: sequence_gap (missing 1 to 251)');
  }, 120_000);

  it('a backward jump, a repeated number, and (sequenceRestarts: never) a 1 in January are sequence_gap, and the import says why', async () => {
    const never: SampleStatements = { iban: NEVER, currency: 'EUR', opening: 0n, days: [{ sequence: 251, date: '2025-12-31', entries: [100n] }, { sequence: 1, date: '2026-01-02', entries: [100n] }] };
    const neverRun = await cli(['statements', 'import', file('never.sta', writeMt940(never))]);
    expect(neverRun.stdout).toContain('proof     never-bank 2026-01-02 1/2026-01-02: sequence_gap (number 1 comes after number 251, of 2025-12-31: a backward jump (sequenceRestarts: never))');
    const back: SampleStatements = { iban: OPEN, currency: 'EUR', opening: 1_004_300n, days: [{ sequence: 7, date: '2026-12-01', entries: [100n] }] };
    // open-bank holds sequences 1 and 2 (27 and 30 November): 7 skips 3 to 6; then 5 jumps back, 5 again repeats.
    expect((await cli(['statements', 'import', file('seven.sta', writeMt940(back))])).stdout).toContain('sequence_gap (missing 3 to 6)');
    const earlier = await cli(['statements', 'import', file('five.sta', writeMt940({ ...back, opening: 1_004_400n, days: [{ sequence: 5, date: '2026-12-02', entries: [100n] }] }))]);
    expect(earlier.stdout).toContain('sequence_gap (number 5 comes after number 7, of 2026-12-01: a backward jump)');
    const repeated = await cli(['statements', 'import', file('five-again.sta', writeMt940({ ...back, opening: 1_004_500n, days: [{ sequence: 5, date: '2026-12-03', entries: [100n] }] }))]);
    expect(repeated.stdout).toContain('sequence_gap (number 5 repeats the number of the previous statement, of 2026-12-02)');
    expect((await listed('open-bank')).map((s) => [s.business_date, s.sequence, s.proof, s.proof_detail])).toEqual([
      ['2026-11-27', 1, 'ok', null],
      ['2026-11-30', 2, 'ok', null],
      ['2026-12-01', 7, 'sequence_gap', '3 to 6'],
      ['2026-12-02', 5, 'sequence_gap', null],
      ['2026-12-03', 5, 'sequence_gap', null],
    ]);
  }, 180_000);

  it('refuses a calendar the accounts file gets wrong, naming where: a weekday that is none, a date that does not exist, a holidays file missing or with a bad line', async () => {
    const cases: Array<[string, string]> = [
      ['calendar: { closedWeekdays: [Sab] }', 'at bankAccounts.0.calendar.closedWeekdays.0: must be a weekday: Mon, Tue, Wed, Thu, Fri, Sat or Sun'],
      ['calendar: { holidays: [2026-11-31] }', 'at bankAccounts.0.calendar.holidays.0: must be a date that exists, YYYY-MM-DD such as 2026-12-25'],
      ['calendar: { holidaysFile: missing.txt }', 'at bankAccounts.0.calendar.holidaysFile: missing.txt could not be read: ENOENT'],
      ['calendar: { holidaysFile: bad-holidays.txt }', 'at bankAccounts.0.calendar.holidaysFile: bad-holidays.txt, line 2: "Christmas" is not a date that exists (YYYY-MM-DD such as 2026-12-25)'],
      ['calendar: {}', 'at bankAccounts.0.calendar: needs closedWeekdays, holidays or holidaysFile'],
      ['sequenceRestarts: monthly', 'at bankAccounts.0.sequenceRestarts: must be one of: yearly, never'],
    ];
    writeFileSync(path.join(dir, 'bad-holidays.txt'), '2026-12-25\nChristmas\n');
    for (const [setting, message] of cases) {
      writeFileSync(path.join(dir, 'bad.yaml'), `bankAccounts:\n  - { name: b, iban: ${CAL}, currency: EUR, ${setting} }\n`);
      const run = await runCliInProcess(['statements', 'list'], env('bad.yaml'));
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(message);
    }
  }, 60_000);
});
