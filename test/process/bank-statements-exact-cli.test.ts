import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { writeCamt053, writeMt940, type SampleStatements } from '../../src/statements/index.js';
import { runCliInProcess, runCliProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';
import { KWD_MT940 } from '../helpers/statement-fixtures.js';

let db: TestDatabase;
let dir: string;
const IBAN = 'DE89370400440532013000';

beforeAll(async () => {
  db = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await db.handle.close();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-statements-exact-'));
  writeFileSync(
    path.join(dir, 'accounts.yaml'),
    ['bankAccounts:', `  - { name: eu-bank, iban: ${IBAN}, currency: EUR }`, '  - { name: kwd-bank, iban: KW81CBKU0000000000001234560101, currency: KWD }', '  - { name: seq-bank, iban: GB29NWBK60161331926819, currency: EUR }', '  - { name: two-bank, iban: FR1420041010050500013M02606, currency: EUR }', '  - { name: year-bank, iban: NL91ABNA0417164300, currency: EUR }', ''].join('\n'),
  );
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ DATABASE_URL: '', ...db.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: path.join(dir, 'accounts.yaml') });
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

function statementTables() {
  return withDatabase(db, async (k: Kysely<Database>) => ({
    statements: await k.selectFrom('bank_statements').selectAll().orderBy('id').execute(),
    entries: await k.selectFrom('bank_statement_entries').selectAll().orderBy('statement_pk').orderBy('position').execute(),
    imports: await k.selectFrom('statement_imports').selectAll().orderBy('id').execute(),
    files: await k.selectFrom('stored_files').select('sha256').orderBy('sha256').execute(),
  }));
}

const oneDay: SampleStatements = { iban: IBAN, currency: 'EUR', opening: 1_000_000n, days: [{ sequence: 7, date: '2026-11-30', entries: [250_000n, -2_550n] }] };

describe(`statements exactly as banks send them, through the built CLI (${backend})`, { timeout: 300_000 }, () => {
  it('imports the KWD MT940 with its three decimals: closing 1001.765, entries 1010 and -125 fils, proof ok', async () => {
    const kwd = file('kwd.sta', KWD_MT940);
    const imported = await built(['statements', 'import', kwd]);
    expect(imported).toMatchObject({ code: 0, stderr: '' });
    const listed = await built(['statements', 'list', '--json', '--account', 'kwd-bank']);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ account: 'kwd-bank', opening: '1000.880', closing: '1001.765', entries: 2, proof: 'ok', proof_detail: null })]);
    const entries = await withDatabase(db, (k) => k.selectFrom('bank_statement_entries').select(['amount', 'reversal']).orderBy('position').execute());
    expect(entries).toEqual([
      { amount: '1010', reversal: false },
      { amount: '-125', reversal: false },
    ]);
  });

  it('refuses more decimals than EUR has, 31 November and a USD :62F: on a EUR account: exit 2 naming the file and the line, nothing stored', async () => {
    const before = await statementTables();
    const cases = [
      ['decimals.sta', writeMt940(oneDay).replace(/:62F:C261130EUR[\d,]+/, ':62F:C261130EUR12474,505'), ', line 10: :62F: amount 12474,505 is not an amount in EUR: EUR has 2 decimals (ISO 4217), and an amount is never rounded.'],
      ['november.sta', writeMt940(oneDay).replace(':62F:C261130', ':62F:C261131'), ', line 10: :62F: date 261131 is not a date (2026-11-31 does not exist).'],
      ['usd.sta', writeMt940(oneDay).replace(':62F:C261130EUR', ':62F:C261130USD'), ', line 10: :62F: is in USD, the statement (its opening balance) in EUR.'],
    ] as const;
    for (const [name, content, message] of cases) {
      const bad = file(name, content);
      const run = await built(['statements', 'import', bad]);
      expect(run.code).toBe(2);
      expect(run.stderr.trim()).toBe(`${bad}${message}`);
    }
    expect(await statementTables()).toEqual(before);
  });

  it('stores the reversal flag of RC and RD entries', async () => {
    const reversed = KWD_MT940.replace(':20:KWD-1', ':20:KWD-2').replace(':28C:1/1', ':28C:2/1').replace(/261128/g, '261129').replace(/1128C1,010/, '1129RD1,010').replace(/1128D0,125/, '1129RC0,125').replace(':60F:C261129KWD1000,880', ':60F:C261129KWD1001,765').replace(':62F:C261129KWD1001,765', ':62F:C261129KWD1002,650');
    expect((await cli(['statements', 'import', file('reversed.sta', reversed)])).code).toBe(0);
    const rows = await withDatabase(db, (k) =>
      k.selectFrom('bank_statement_entries as e').innerJoin('bank_statements as s', 's.id', 'e.statement_pk').select(['e.amount', 'e.credit_debit', 'e.reversal']).where('s.statement_id', '=', '2/2026-11-29').orderBy('e.position').execute(),
    );
    expect(rows).toEqual([
      { amount: '1010', credit_debit: 'credit', reversal: true },
      { amount: '-125', credit_debit: 'debit', reversal: true },
    ]);
  });

  it('refuses an external-entity camt, a NUL byte (even with --dry-run) and a file name with terminal escapes shown escaped: exit 2, nothing stored', async () => {
    const before = await statementTables();
    const good = writeCamt053({ ...oneDay, days: [{ sequence: 8, date: '2026-12-01', entries: [100n] }] });
    const external = file('external.xml', good.replace('<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>').replace('>1.00<', '>&x;<'));
    const run = await built(['statements', 'import', external]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^${external.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: a document type declaration \\(<!DOCTYPE\\) at line 2, column \\d+: refused`));

    const nul = file('nul.sta', writeMt940(oneDay).replace(':86:entry 1', ':86:entry\u00001'));
    const dry = await cli(['statements', 'import', nul, '--dry-run']);
    expect(dry.code).toBe(2);
    expect(dry.stderr.trim()).toBe(`${nul}, line 7: holds the control character U+0000, which no statement has.`);

    const evil = file('evil\u001b[2J.xml', good.replace('</Document>', '<'));
    const escaped = await cli(['statements', 'import', evil]);
    expect(escaped.code).toBe(2);
    expect(escaped.stderr).not.toContain('\u001b');
    expect(escaped.stderr).toContain('evil\\x1b[2J.xml: not well-formed XML');
    expect(await statementTables()).toEqual(before);
  });

  it('the day\'s bank balance is the closing of the highest sequence, whatever order the statements were imported in', async () => {
    const seq = (sequence: number, opening: bigint, entry: bigint) => writeCamt053({ iban: 'GB29NWBK60161331926819', currency: 'EUR', opening, days: [{ sequence, date: '2026-11-30', entries: [entry] }] });
    expect((await cli(['statements', 'import', file('seq-6.xml', seq(6, 10_000n, 15_000n))])).code).toBe(0);
    expect((await cli(['statements', 'import', file('seq-5.xml', seq(5, 0n, 10_000n))])).code).toBe(0);
    expect((await cli(['ledger', 'import', file('seq-books.csv', 'account,business_date,currency,balance\nseq-bank,2026-11-30,EUR,250.00\n')])).code).toBe(0);
    const run = await built(['reconcile', '--date', '2026-11-30', '--account', 'seq-bank']);
    expect(run.code).toBe(0);
    const results = await withDatabase(db, (k) => k.selectFrom('reconciliation_results').select(['status', 'gateway_balance']).where('account', '=', 'seq-bank').execute());
    expect(results).toEqual([{ status: 'matched', gateway_balance: '25000' }]);
  });

  it('two end-of-day statements of one date with different closings and nothing to order them are conflicting_statements, a case naming both; a later creation time orders them', async () => {
    const noSequence = (id: string, entry: bigint, created: string, date = '2026-11-30', opening = 0n) =>
      writeCamt053({ iban: 'FR1420041010050500013M02606', currency: 'EUR', opening, days: [{ sequence: 1, date, entries: [entry] }] })
        .replace(/<ElctrncSeqNb>1<\/ElctrncSeqNb>/, '')
        .replace(/<Id>STMT-[^<]*<\/Id>/, `<Id>${id}</Id>`)
        .replace(/<CreDtTm>[^<]*<\/CreDtTm>\n/, `<CreDtTm>${created}</CreDtTm>\n`);
    expect((await cli(['statements', 'import', file('a.xml', noSequence('EOD-A', 10_000n, '2026-11-30T23:00:00Z')), file('b.xml', noSequence('EOD-B', 25_000n, '2026-11-30T23:00:00Z'))])).code).toBe(0);
    expect((await cli(['ledger', 'import', file('two-books.csv', 'account,business_date,currency,balance\ntwo-bank,2026-11-30,EUR,250.00\ntwo-bank,2026-12-01,EUR,250.00\n')])).code).toBe(0);
    const run = await built(['reconcile', '--date', '2026-11-30', '--account', 'two-bank']);
    expect(run.code).toBe(3);
    const rows = await withDatabase(db, (k) =>
      k.selectFrom('reconciliation_results as r').innerJoin('reconciliation_cases as c', 'c.id', 'r.case_id').select(['r.status', 'r.note', 'c.kind']).where('r.account', '=', 'two-bank').where('r.business_date', '=', '2026-11-30').execute(),
    );
    expect(rows).toEqual([
      { status: 'conflicting_statements', kind: 'conflicting_statements', note: 'two end-of-day statements of 2026-11-30 with no sequence or creation time to order them close differently: EOD-B at 250.00 EUR, EOD-A at 100.00 EUR' },
    ]);

    // On 1 December the later-made statement is the final one, whichever was imported last: the
    // 22:00 statement takes 150.00 out of the 250.00 of the 30th, the 23:30 one puts it back.
    const late = noSequence('EOD-C', 15_000n, '2026-12-01T23:30:00Z', '2026-12-01', 10_000n);
    const early = noSequence('EOD-D', -15_000n, '2026-12-01T22:00:00Z', '2026-12-01', 25_000n);
    expect((await cli(['statements', 'import', file('c.xml', late), file('d.xml', early)])).code).toBe(0);
    expect((await cli(['reconcile', '--date', '2026-12-01', '--account', 'two-bank'])).code).toBe(0);
    const next = await withDatabase(db, (k) => k.selectFrom('reconciliation_results').select(['status', 'gateway_balance']).where('account', '=', 'two-bank').where('business_date', '=', '2026-12-01').execute());
    expect(next).toEqual([{ status: 'matched', gateway_balance: '25000' }]);
  });

  it('statements show ID --original --out FILE writes the imported file back byte for byte (its SHA-256 equal)', async () => {
    const listed = JSON.parse((await built(['statements', 'list', '--json', '--account', 'kwd-bank'])).stdout) as Array<{ id: number; statement_id: string; file_sha256: string }>;
    const first = listed.find((s) => s.statement_id === '1/2026-11-28')!;
    expect(first.file_sha256).toBe(createHash('sha256').update(readFileSync(path.join(dir, 'kwd.sta'))).digest('hex'));
    const out = path.join(dir, 'out', 'original.sta');
    mkdirSync(path.dirname(out), { recursive: true });
    const shown = await built(['statements', 'show', String(first.id), '--original', '--out', out]);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(createHash('sha256').update(readFileSync(out)).digest('hex')).toBe(first.file_sha256);
    expect(readFileSync(out)).toEqual(readFileSync(path.join(dir, 'kwd.sta')));
    const missing = await cli(['statements', 'show', '999999', '--original', '--out', out]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('There is no stored statement 999999');
    expect((await cli(['statements', 'show', String(first.id), '--original'])).code).toBe(2);
  });

  it('an MT940 whose :28C: restarts at 1 in January shows no gap', async () => {
    const mt = writeMt940({ iban: 'NL91ABNA0417164300', currency: 'EUR', opening: 0n, days: [{ sequence: 250, date: '2026-12-31', entries: [100n] }, { sequence: 1, date: '2027-01-04', entries: [-100n] }] });
    expect((await built(['statements', 'import', file('year.sta', mt)])).code).toBe(0);
    const listed = JSON.parse((await built(['statements', 'list', '--json', '--account', 'year-bank'])).stdout) as Array<{ sequence: number; proof: string }>;
    expect(listed.map((s) => [s.sequence, s.proof])).toEqual([
      [250, 'ok'],
      [1, 'ok'],
    ]);
  });
});
