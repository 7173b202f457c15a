import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { writeCamt053, writeMt940, type SampleStatements } from '../../src/statements/index.js';
import { runCliInProcess, runCliProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Two databases of this file's own: the camt one, and one the same days arrive in as MT940.
let camtDb: TestDatabase;
let mtDb: TestDatabase;
let dir: string;

const IBAN = 'DE89370400440532013000';
const BIG_IBAN = 'NL91ABNA0417164300';

/** The bank's two statements of 2 and 3 November: a payout in and a fee out, then a sweep. */
const twoDays: SampleStatements = {
  iban: IBAN,
  currency: 'EUR',
  opening: 1_000_000n,
  days: [
    { sequence: 7, date: '2026-11-02', entries: [250_000n, -2_550n] },
    { sequence: 8, date: '2026-11-03', entries: [-100_000n] },
  ],
};

beforeAll(async () => {
  camtDb = await createTestDatabase({ onDisk: true });
  mtDb = await createTestDatabase({ onDisk: true });
  // The embedded database serves one handle at a time: the CLI opens it per command.
  if (backend === 'embedded') {
    await camtDb.handle.close();
    await mtDb.handle.close();
  }
  dir = mkdtempSync(path.join(tmpdir(), 'wr-statements-cli-'));
  writeFileSync(
    path.join(dir, 'accounts.yaml'),
    ['bankAccounts:', `  - { name: eu-bank, iban: "${IBAN.replace(/(.{4})/g, '$1 ').trim()}", currency: EUR }`, `  - { name: nl-bank, iban: ${BIG_IBAN}, currency: EUR }`, ''].join('\n'),
  );
});
afterAll(async () => {
  await camtDb?.drop();
  await mtDb?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const envOf = (t: TestDatabase) => ({ DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: path.join(dir, 'accounts.yaml') });
// 10 November, noon UTC: 2 to 8 November are closed; 36 hours after a date's cut-off its statement is missed.
const at = (iso = '2026-11-10T12:00:00Z') => new FixedClock(new Date(iso));
const cli = (t: TestDatabase, args: string[], clock = at()) => runCliInProcess(args, envOf(t), { clock });

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

/** Every statement table, to show a refused command left the database as it was. */
function statementTables(t: TestDatabase) {
  return withDatabase(t, async (db: Kysely<Database>) => ({
    statements: await db.selectFrom('bank_statements').selectAll().orderBy('id').execute(),
    balances: await db.selectFrom('bank_statement_balances').selectAll().orderBy('statement_pk').orderBy('position').execute(),
    entries: await db.selectFrom('bank_statement_entries').selectAll().orderBy('statement_pk').orderBy('position').execute(),
    imports: await db.selectFrom('statement_imports').selectAll().orderBy('id').execute(),
  }));
}

const listJson = async (t: TestDatabase, extra: string[] = []) => {
  const listed = await cli(t, ['statements', 'list', '--json', ...extra]);
  expect(listed.code).toBe(0);
  return JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
};

describe(`bank statements through the CLI (${backend})`, () => {
  it('imports two consecutive camt.053 statements, lists both with proof ok, and books one euro short make reconcile exit 3 with a bank break', async () => {
    const camt = file('eu-bank-2026-11-02_03.xml', writeCamt053({ ...twoDays, camtVersion: 8 }));
    const imported = await cli(camtDb, ['statements', 'import', camt]);
    expect(imported).toMatchObject({ code: 0, stderr: '' });
    expect(imported.stdout.split('\n').slice(0, 3)).toEqual([
      `Imported 2 statements from ${camt}: 2 new, 0 replaced, 0 unchanged.`,
      '  new       eu-bank 2026-11-02 STMT-2026-11-02-7 (camt.053)',
      '  new       eu-bank 2026-11-03 STMT-2026-11-03-8 (camt.053)',
    ]);
    const listed = await listJson(camtDb);
    const sha256 = createHash('sha256').update(readFileSync(camt)).digest('hex');
    expect(listed).toEqual([
      { account: 'eu-bank', statement_id: 'STMT-2026-11-02-7', sequence: 7, business_date: '2026-11-02', currency: 'EUR', opening: '10000.00', closing: '12474.50', entries: 2, proof: 'ok', proof_detail: null, id: expect.any(Number), file_sha256: sha256, state: 'complete', pages: null },
      { account: 'eu-bank', statement_id: 'STMT-2026-11-03-8', sequence: 8, business_date: '2026-11-03', currency: 'EUR', opening: '12474.50', closing: '11474.50', entries: 1, proof: 'ok', proof_detail: null, id: expect.any(Number), file_sha256: sha256, state: 'complete', pages: null },
    ]);

    const books = file('eu-bank-books.csv', 'account,business_date,currency,balance\neu-bank,2026-11-02,EUR,12474.50\neu-bank,2026-11-03,EUR,11473.50\n');
    expect((await cli(camtDb, ['ledger', 'import', books])).code).toBe(0);
    expect((await cli(camtDb, ['reconcile', '--date', '2026-11-02', '--account', 'eu-bank'])).code).toBe(0);
    const reconciled = await cli(camtDb, ['reconcile', '--date', '2026-11-03', '--account', 'eu-bank']);
    expect(reconciled.code).toBe(3);
    expect(reconciled.stdout).toMatch(/2026-11-03\s+eu-bank\s+bank\s+EUR\s+break\s+11,474\.50\s+11,473\.50\s+1\.00/);
    const report = JSON.parse((await cli(camtDb, ['report', '--date', '2026-11-03', '--account', 'eu-bank', '--format', 'json'])).stdout) as { results: Array<Record<string, unknown>> };
    expect(report.results).toEqual([expect.objectContaining({ account: 'eu-bank', status: 'break', source: 'bank', gateway_balance: '1147450', expected_balance: '1147350', difference: '100' })]);
    const csv = (await cli(camtDb, ['report', '--date', '2026-11-03', '--account', 'eu-bank', '--format', 'csv'])).stdout.split('\r\n');
    // Counted from the end: formatted amounts before it hold commas of their own.
    const header = csv[0]!.split(',');
    const fromEnd = header.length - header.indexOf('source');
    expect(header).toContain('source');
    expect(csv[1]!.split(',').at(-fromEnd)).toBe('bank');
    const status = await withDatabase(camtDb, (db) => db.selectFrom('reconciliation_status').select(['business_date', 'state', 'source']).where('account', '=', 'eu-bank').orderBy('business_date').execute());
    expect(status).toEqual([
      { business_date: '2026-11-02', state: 'current', source: 'bank' },
      { business_date: '2026-11-03', state: 'current', source: 'bank' },
    ]);
  });

  it('takes the same statements again as unchanged, in either format; other content is refused naming it unless --replace, which is recorded', async () => {
    const again = await cli(camtDb, ['statements', 'import', file('again.xml', writeCamt053({ ...twoDays, camtVersion: 8 })), file('same.sta', writeMt940(twoDays))]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('Imported 4 statements from 2 files: 0 new, 0 replaced, 4 unchanged.');
    expect(again.stdout).toContain('  unchanged eu-bank 2026-11-03 8/2026-11-03 (mt940)');

    const before = await statementTables(camtDb);
    const changedDays = { ...twoDays, days: [twoDays.days[0]!, { ...twoDays.days[1]!, entries: [-100_001n] }] };
    const changed = file('changed.xml', writeCamt053(changedDays));
    const refused = await cli(camtDb, ['statements', 'import', changed]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `Nothing imported: ${changed} (Stmt[2]): statement STMT-2026-11-03-8 of eu-bank (2026-11-03) is already stored with other content. Give --replace to replace it (the replacement is recorded).`,
    );
    expect(await statementTables(camtDb)).toEqual(before);

    const replaced = await cli(camtDb, ['statements', 'import', changed, '--replace']);
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toContain('  replaced  eu-bank 2026-11-03 STMT-2026-11-03-8 (camt.053)');
    const recorded = await withDatabase(camtDb, (db) => db.selectFrom('statement_replacements').select(['account', 'statement_id']).execute());
    expect(recorded).toEqual([{ account: 'eu-bank', statement_id: 'STMT-2026-11-03-8' }]);
    // Back to the bank's true statement for the tests after this one.
    expect((await cli(camtDb, ['statements', 'import', file('true.xml', writeCamt053({ ...twoDays, camtVersion: 8 })), '--replace'])).code).toBe(0);
  });

  it('--dry-run says what would change, proofs included, and writes nothing', async () => {
    const before = await statementTables(camtDb);
    const next = file('dry.xml', writeCamt053({ ...twoDays, opening: 1_147_450n, days: [{ sequence: 10, date: '2026-11-06', entries: [] }] }));
    const dry = await cli(camtDb, ['statements', 'import', next, '--dry-run']);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    expect(dry.stdout.split('\n')).toEqual([
      `Dry run, nothing written: 1 statement from ${next}: 1 new, 0 replaced, 0 unchanged.`,
      '  new       eu-bank 2026-11-06 STMT-2026-11-06-10 (camt.053)',
      '  proof     eu-bank 2026-11-06 STMT-2026-11-06-10: sequence_gap (missing 9)',
    ]);
    expect(await statementTables(camtDb)).toEqual(before);
  });

  it('statements sample writes a camt.053 and an MT940 of the same days that import as the same statements', async () => {
    const sampleDir = path.join(dir, 'samples');
    const written = await cli(mtDb, ['statements', 'sample', '--dir', sampleDir, '--iban', 'NL91 ABNA 0417 1643 00', '--days', '3'], at('2026-11-10T12:00:00Z'));
    expect(written).toMatchObject({ code: 0, stderr: '' });
    expect(written.stdout).toBe(`Wrote ${path.join(sampleDir, 'sample-camt053.xml')}, ${path.join(sampleDir, 'sample-mt940.sta')} and ${path.join(sampleDir, 'sample-bai2.txt')}: 3 statements of NL91ABNA0417164300 (EUR), 2026-11-07 to 2026-11-09, in camt.053 and MT940, and of account 1234567890 in BAI2.`);
    const imported = await cli(mtDb, ['statements', 'import', path.join(sampleDir, 'sample-camt053.xml'), path.join(sampleDir, 'sample-mt940.sta'), '--dry-run']);
    expect(imported.stdout.split('\n')[0]).toBe('Dry run, nothing written: 6 statements from 2 files: 3 new, 0 replaced, 3 unchanged.');
  });

  it('refuses an unknown IBAN and a malformed file naming them, and imports nothing of the command', async () => {
    const before = await statementTables(camtDb);
    const unknown = file('unknown.xml', writeCamt053({ ...twoDays, iban: 'GB29NWBK60161331926819' }));
    const good = file('good-next.xml', writeCamt053({ ...twoDays, opening: 1_147_450n, days: [{ sequence: 9, date: '2026-11-04', entries: [] }] }));
    const refused = await cli(camtDb, ['statements', 'import', good, unknown]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${unknown} (Stmt[1]): IBAN GB29NWBK60161331926819 is not a configured bank account`);
    expect(refused.stderr).toContain('configured: eu-bank (DE89370400440532013000), nl-bank (NL91ABNA0417164300)');

    const malformed = file('malformed.xml', writeCamt053(twoDays).replace('</CdtDbtInd>', '</CdtDbtInd'));
    const bad = await cli(camtDb, ['statements', 'import', good, malformed]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(new RegExp(`^${malformed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not well-formed XML at line \\d+, column \\d+`));
    const badMt = file('malformed.sta', writeMt940(twoDays).replace(':62F:C261102EUR12474,50', ':62F:C261102EUR12474;50'));
    const badMtRun = await cli(camtDb, ['statements', 'import', badMt]);
    expect(badMtRun.code).toBe(2);
    expect(badMtRun.stderr).toBe(`${badMt}, line 10: :62F: "C261102EUR12474;50" is not a balance (C or D, date YYMMDD, currency, amount with a decimal comma such as 1234,56).`);
    expect(await statementTables(camtDb)).toEqual(before);
  });

  it('a statement whose entries do not sum to its closing is imported with roll_forward_break; a missing sequence number gives sequence_gap naming it; both make reconcile exit 3', async () => {
    // 4 November: closing one cent above what its entries make; 5 November comes as number 11: 10 is missing.
    const days: SampleStatements = {
      ...twoDays,
      opening: 1_147_450n,
      days: [
        { sequence: 9, date: '2026-11-04', entries: [5_000n], closingOverride: 1_152_451n },
        { sequence: 11, date: '2026-11-05', entries: [-1_000n] },
      ],
    };
    const imported = await cli(camtDb, ['statements', 'import', file('broken.xml', writeCamt053(days))]);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('  proof     eu-bank 2026-11-04 STMT-2026-11-04-9: roll_forward_break (residual 0.01)');
    expect(imported.stdout).toContain('  proof     eu-bank 2026-11-05 STMT-2026-11-05-11: sequence_gap (missing 10)');
    const listed = await listJson(camtDb, ['--account', 'eu-bank', '--from', '2026-11-04', '--to', '2026-11-05']);
    expect(listed.map((s) => [s.business_date, s.sequence, s.proof, s.proof_detail])).toEqual([
      ['2026-11-04', 9, 'roll_forward_break', '0.01'],
      ['2026-11-05', 11, 'sequence_gap', '10'],
    ]);
    const books = file('books-4-5.csv', 'account,business_date,currency,balance\neu-bank,2026-11-04,EUR,11524.51\neu-bank,2026-11-05,EUR,11514.51\n');
    expect((await cli(camtDb, ['ledger', 'import', books])).code).toBe(0);
    for (const [date, status, note] of [
      ['2026-11-04', 'roll_forward_break', 'the statement does not roll forward: residual 0.01 EUR (opening booked + booked entries ≠ closing booked)'],
      ['2026-11-05', 'sequence_gap', 'statement sequence number 10 missing (the previous statement, of 2026-11-04, is number 9)'],
    ] as const) {
      const run = await cli(camtDb, ['reconcile', '--date', date, '--account', 'eu-bank']);
      expect(run.code).toBe(3);
      const report = JSON.parse((await cli(camtDb, ['report', '--date', date, '--account', 'eu-bank', '--format', 'json'])).stdout) as { results: Array<Record<string, unknown>> };
      expect(report.results).toEqual([expect.objectContaining({ status, source: 'bank', note, case_state: 'open' })]);
    }
  });

  it('keeps 1,234,567,890,123,456.78 exact from the camt file to the list and the results', async () => {
    const big = file('big.xml', writeCamt053({ iban: BIG_IBAN, currency: 'EUR', opening: 0n, days: [{ sequence: 1, date: '2026-11-02', entries: [123_456_789_012_345_678n] }] }));
    expect((await cli(camtDb, ['statements', 'import', big])).code).toBe(0);
    const [listed] = await listJson(camtDb, ['--account', 'nl-bank']);
    expect(listed).toMatchObject({ closing: '1234567890123456.78', opening: '0.00', proof: 'ok' });
    expect((await cli(camtDb, ['ledger', 'import', file('big-books.csv', 'account,business_date,currency,balance\nnl-bank,2026-11-02,EUR,1234567890123456.78\n')])).code).toBe(0);
    const stored = await withDatabase(camtDb, (db) => db.selectFrom('reconciliation_results').select(['gateway_balance', 'expected_balance', 'status', 'source']).where('account', '=', 'nl-bank').execute());
    expect(stored).toEqual([{ gateway_balance: '123456789012345678', expected_balance: '123456789012345678', status: 'matched', source: 'bank' }]);
  });

  it('a closed date without statement awaits it (no case) until RECON_STATEMENT_DEADLINE, then is one no_statement result and case', async () => {
    const books = file('books-8.csv', 'account,business_date,currency,balance\neu-bank,2026-11-08,EUR,11414.51\n');
    // The books of 8 November arrive on the 9th at 01:00, an hour after the date's cut-off.
    const early = at('2026-11-09T01:00:00Z');
    expect((await cli(camtDb, ['ledger', 'import', books], early)).code).toBe(0);
    const waiting = await cli(camtDb, ['reconcile', '--date', '2026-11-08', '--account', 'eu-bank'], early);
    expect(waiting.code).toBe(0);
    const awaited = await withDatabase(camtDb, (db) => db.selectFrom('reconciliation_results').select(['status', 'case_id', 'source']).where('account', '=', 'eu-bank').where('business_date', '=', '2026-11-08').execute());
    expect(awaited).toEqual([{ status: 'awaiting_statement', case_id: null, source: 'bank' }]);
    const state = () => withDatabase(camtDb, (db) => db.selectFrom('reconciliation_status').select('state').where('account', '=', 'eu-bank').where('business_date', '=', '2026-11-08').executeTakeFirst());
    expect(await state()).toEqual({ state: 'awaiting_statement' });

    // 36 hours after the cut-off (10 November, noon) the statement is missed: one result, one case.
    const late = await cli(camtDb, ['reconcile', '--date', '2026-11-08', '--account', 'eu-bank'], at('2026-11-10T12:00:00Z'));
    expect(late.code).toBe(3);
    const missed = await withDatabase(camtDb, (db) =>
      db
        .selectFrom('reconciliation_results as r')
        .innerJoin('reconciliation_cases as c', 'c.id', 'r.case_id')
        .select(['r.status', 'r.note', 'c.kind', 'c.state'])
        .where('r.account', '=', 'eu-bank')
        .where('r.business_date', '=', '2026-11-08')
        .execute(),
    );
    expect(missed).toEqual([{ status: 'no_statement', note: 'no statement closing on 2026-11-08 had been imported by 2026-11-10T12:00:00.000Z (RECON_STATEMENT_DEADLINE after the cut-off)', kind: 'no_statement', state: 'open' }]);

    // Derived state: the statement arriving later marks the date owed, and its import reconciles it.
    const arrives = await cli(camtDb, ['statements', 'import', file('late.xml', writeCamt053({ ...twoDays, opening: 1_151_451n, days: [{ sequence: 12, date: '2026-11-08', entries: [-10_000n] }] }))]);
    expect(arrives.code).toBe(0);
    expect(arrives.stdout).toMatch(/Reconciled \d+ account-dates? whose statements changed\./);
    const after = await withDatabase(camtDb, (db) => db.selectFrom('reconciliation_results').select(['status']).where('account', '=', 'eu-bank').where('business_date', '=', '2026-11-08').execute());
    expect(after).toEqual([{ status: 'matched' }]);
    expect(await state()).toEqual({ state: 'current' });
  });

  it('a range report counts a bank account only on the dates it has a statement or books for: banks send none on closed days', async () => {
    const ranged = await cli(camtDb, ['report', '--from', '2026-11-02', '--to', '2026-11-09', '--account', 'eu-bank', '--format', 'json']);
    const report = JSON.parse(ranged.stdout) as { summary: { unreconciledDates: string[]; accounts: Array<{ account: string; source: string; counts: Record<string, number> }> }; results: Array<{ business_date: string; status: string }> };
    // 6, 7 and 9 November have neither: they are no gap. 8 November's statement arrived late and matched.
    expect(report.summary.unreconciledDates).toEqual([]);
    expect(report.summary.accounts).toEqual([expect.objectContaining({ account: 'eu-bank', source: 'bank' })]);
    expect(report.results.map((r) => [r.business_date, r.status])).toEqual([
      ['2026-11-02', 'matched'],
      ['2026-11-03', 'break'],
      ['2026-11-04', 'roll_forward_break'],
      ['2026-11-05', 'sequence_gap'],
      ['2026-11-08', 'matched'],
    ]);
  });

  it('the same days as MT940, in a database of their own, list the same balances and proofs (the built CLI)', async () => {
    const env = envOf(mtDb);
    const mt = file('eu-bank-2026-11-02_03.sta', writeMt940(twoDays));
    const imported = await runCliProcess(['statements', 'import', mt], env);
    // A real process says which database it used, on a line of its own; nothing else goes to stderr.
    expect(imported.stderr.replace(/^Database: .*\n/m, '')).toBe('');
    expect(imported.code).toBe(0);
    const listed = await runCliProcess(['statements', 'list', '--json'], env);
    expect(listed.code).toBe(0);
    const fromMt = (JSON.parse(listed.stdout) as Array<Record<string, unknown>>).map(({ statement_id: _id, id: _n, file_sha256: _f, ...rest }) => rest);
    const fromCamt = (await listJson(camtDb, ['--account', 'eu-bank', '--to', '2026-11-03'])).map(({ statement_id: _id, id: _n, file_sha256: _f, ...rest }) => rest);
    expect(fromMt).toEqual(fromCamt);
    expect(fromMt.map((s) => [s.opening, s.closing, s.proof])).toEqual([
      ['10000.00', '12474.50', 'ok'],
      ['12474.50', '11474.50', 'ok'],
    ]);
  });
});
