import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { runCliInProcess, runCliProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let db: TestDatabase;
let dir: string;
// One bank account per scenario: each statement chains only with its own account's.
const ACCOUNTS = {
  'pages-a': 'DE89370400440532013000',
  'pages-b': 'GB29NWBK60161331926819',
  'pages-c': 'FR1420041010050500013M02606',
  'pages-d': 'NL91ABNA0417164300',
  'notify-bank': 'BE68539007547034',
} as const;
type Account = keyof typeof ACCOUNTS;

beforeAll(async () => {
  db = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await db.handle.close();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-statement-pages-'));
  writeFileSync(path.join(dir, 'accounts.yaml'), ['bankAccounts:', ...Object.entries(ACCOUNTS).map(([name, iban]) => `  - { name: ${name}, iban: ${iban}, currency: EUR }`), ''].join('\n'));
});
afterAll(async () => {
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => ({ DATABASE_URL: '', ...db.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: path.join(dir, 'accounts.yaml'), ...extra });
const cli = (args: string[], extra?: Record<string, string>) => runCliInProcess(args, env(extra), { clock: new FixedClock(new Date('2026-12-02T12:00:00Z')) });
const built = async (args: string[]) => {
  const run = await runCliProcess(args, env());
  return { ...run, stderr: run.stderr.replace(/^Database: .*\n/m, '') };
};

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

const money = (cents: number) => `<Amt Ccy="EUR">${(Math.abs(cents) / 100).toFixed(2)}</Amt><CdtDbtInd>${cents < 0 ? 'DBIT' : 'CRDT'}</CdtDbtInd>`;
const balance = (code: string, cents: number, date: string) => `<Bal><Tp><CdOrPrtry><Cd>${code}</Cd></CdOrPrtry></Tp>${money(cents)}<Dt><Dt>${date}</Dt></Dt></Bal>`;
const entry = (cents: number, ref: string, date = '2026-11-30', extra = '') =>
  `<Ntry><NtryRef>${ref}</NtryRef>${money(cents)}<Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>${date}</Dt></BookgDt><ValDt><Dt>${date}</Dt></ValDt><AcctSvcrRef>BANK-${ref}</AcctSvcrRef>${extra}</Ntry>`;

/** One page of statement 77 of 30 November: page 1 opens at 1000.00 (OPBD), page 2 closes at 1075.00 (CLBD), ITBD between. */
function page(account: Account, number: 1 | 2): string {
  const head = `<Id>STMT-77</Id><StmtPgntn><PgNb>${number}</PgNb><LastPgInd>${number === 2}</LastPgInd></StmtPgntn><ElctrncSeqNb>77</ElctrncSeqNb><CreDtTm>2026-11-30T23:00:00Z</CreDtTm><Acct><Id><IBAN>${ACCOUNTS[account]}</IBAN></Id><Ccy>EUR</Ccy></Acct>`;
  return number === 1
    ? `<Stmt>${head}${balance('OPBD', 100_000, '2026-11-29')}${balance('ITBD', 110_000, '2026-11-30')}${entry(15_000, 'a')}${entry(-5_000, 'b')}</Stmt>`
    : `<Stmt>${head}${balance('ITBD', 110_000, '2026-11-30')}${balance('CLBD', 107_500, '2026-11-30')}${entry(-2_500, 'c')}</Stmt>`;
}

const camt053 = (...statements: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt><GrpHdr><MsgId>M</MsgId><CreDtTm>2026-11-30T23:00:00Z</CreDtTm></GrpHdr>\n${statements.join('\n')}\n</BkToCstmrStmt></Document>\n`;

async function listed(account: Account) {
  const run = await cli(['statements', 'list', '--json', '--account', account]);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Array<Record<string, unknown>>;
}

async function entriesOf(account: Account) {
  return withDatabase(db, (k: Kysely<Database>) =>
    k.selectFrom('bank_statement_entries as e').innerJoin('bank_statements as s', 's.id', 'e.statement_pk').select(['e.position', 'e.amount', 'e.reference']).where('s.account', '=', account).orderBy('e.position').execute(),
  );
}

const whole = { statement_id: 'STMT-77', sequence: 77, business_date: '2026-11-30', currency: 'EUR', opening: '1000.00', closing: '1075.00', entries: 3, proof: 'ok', proof_detail: null, state: 'complete', pages: '1, 2' };
const inPageOrder = [
  { position: 1, amount: '15000', reference: 'a' },
  { position: 2, amount: '-5000', reference: 'b' },
  { position: 3, amount: '-2500', reference: 'c' },
];

describe(`camt.053 pages, camt.054 notifications and the size limit, through the CLI (${backend})`, { timeout: 300_000 }, () => {
  it('a statement in two pages in two files, the last page first (built CLI): incomplete (exit 0, proof null) until page 1 arrives, then one statement with proof ok', async () => {
    const first = await built(['statements', 'import', file('a-page2.xml', camt053(page('pages-a', 2)))]);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain('incomplete pages-a 2026-11-30 STMT-77 (camt.053, page 2 held)');
    const waiting = JSON.parse((await built(['statements', 'list', '--json', '--account', 'pages-a'])).stdout) as unknown[];
    expect(waiting).toEqual([
      { account: 'pages-a', statement_id: 'STMT-77', sequence: 77, business_date: '2026-11-30', currency: 'EUR', opening: null, closing: null, entries: 1, proof: null, proof_detail: null, id: null, file_sha256: expect.stringMatching(/^[0-9a-f]{64}$/), state: 'incomplete', pages: '2' },
    ]);
    // Nothing reaches the bank leg while it is incomplete.
    expect(await withDatabase(db, (k) => k.selectFrom('bank_statements').select('id').where('account', '=', 'pages-a').execute())).toEqual([]);

    const second = await built(['statements', 'import', file('a-page1.xml', camt053(page('pages-a', 1)))]);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toContain('1 new');
    expect(await listed('pages-a')).toEqual([{ account: 'pages-a', ...whole, id: expect.any(Number), file_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
    expect(await entriesOf('pages-a')).toEqual(inPageOrder);
    // Both files are kept, each page naming its own.
    const files = await withDatabase(db, (k) => k.selectFrom('bank_statement_pages').select(['page_number', 'source_file', 'file_sha256']).where('account', '=', 'pages-a').orderBy('page_number').execute());
    expect(files.map((f) => f.source_file)).toEqual(['a-page1.xml', 'a-page2.xml']);
    const stored = await withDatabase(db, (k) => k.selectFrom('stored_files').select('sha256').where('sha256', 'in', files.map((f) => f.file_sha256!)).execute());
    expect(stored).toHaveLength(2);
  });

  it('the same pages in the other order, and then again: one statement, the second time unchanged', async () => {
    expect((await cli(['statements', 'import', file('b-page1.xml', camt053(page('pages-b', 1)))])).code).toBe(0);
    expect(await listed('pages-b')).toEqual([expect.objectContaining({ state: 'incomplete', proof: null, opening: '1000.00', closing: null, pages: '1' })]);
    expect((await cli(['statements', 'import', file('b-page2.xml', camt053(page('pages-b', 2)))])).code).toBe(0);
    expect(await listed('pages-b')).toEqual([{ account: 'pages-b', ...whole, id: expect.any(Number), file_sha256: expect.any(String) }]);
    const again = await cli(['statements', 'import', path.join(dir, 'b-page2.xml'), path.join(dir, 'b-page1.xml')]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('0 new, 0 replaced, 1 unchanged');
    expect(await entriesOf('pages-b')).toEqual(inPageOrder);
  });

  it('both pages in one file, the last first: one statement with proof ok', async () => {
    const run = await cli(['statements', 'import', file('c-both.xml', camt053(page('pages-c', 2), page('pages-c', 1)))]);
    expect(run.code).toBe(0);
    expect(await listed('pages-c')).toEqual([{ account: 'pages-c', ...whole, id: expect.any(Number), file_sha256: expect.any(String) }]);
    expect(await entriesOf('pages-c')).toEqual(inPageOrder);
  });

  it('a file larger than RECON_STATEMENT_MAX_BYTES is refused before it is read: exit 2 naming the limit, nothing stored', async () => {
    const big = file('d-big.xml', camt053(page('pages-d', 1), page('pages-d', 2)));
    const run = await cli(['statements', 'import', big], { RECON_STATEMENT_MAX_BYTES: '1024' });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toMatch(new RegExp(`^${big.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\d+ bytes, more than RECON_STATEMENT_MAX_BYTES \\(1024 bytes\\): refused before it was read, nothing imported\\.`));
    expect(await listed('pages-d')).toEqual([]);
    expect(await withDatabase(db, (k) => k.selectFrom('bank_statement_pages').select('id').where('account', '=', 'pages-d').execute())).toEqual([]);
  });

  it('a camt.054 notification: entries without balances, charges apart from the amount, no bank balance, linked to the statement booking the same entry', async () => {
    const iban = ACCOUNTS['notify-bank'];
    const charges = '<Chrgs><TtlChrgsAndTaxAmt Ccy="EUR">1.50</TtlChrgsAndTaxAmt><Rcrd><Amt Ccy="EUR">1.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><ChrgInclInd>true</ChrgInclInd></Rcrd></Chrgs>';
    const notification = `<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08"><BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>N</MsgId><CreDtTm>2026-11-30T10:00:00Z</CreDtTm></GrpHdr>
<Ntfctn><Id>NTF-1</Id><CreDtTm>2026-11-30T10:00:00Z</CreDtTm><Acct><Id><IBAN>${iban}</IBAN></Id><Ccy>EUR</Ccy></Acct>${entry(-20_000, 'x', '2026-11-30', charges)}</Ntfctn>
</BkToCstmrDbtCdtNtfctn></Document>\n`;
    const run = await cli(['statements', 'import', file('notify.xml', notification)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('new       notify-bank 2026-11-30 NTF-1 (camt.054)');
    expect(await listed('notify-bank')).toEqual([expect.objectContaining({ statement_id: 'NTF-1', business_date: '2026-11-30', opening: null, closing: null, entries: 1, proof: 'ok', state: 'complete' })]);
    const stored = () =>
      withDatabase(db, (k) =>
        k.selectFrom('bank_statement_entries as e').innerJoin('bank_statements as s', 's.id', 'e.statement_pk').select(['s.format', 's.intraday', 'e.amount', 'e.charges', 'e.bank_reference', 'e.linked_statement_pk']).where('s.account', '=', 'notify-bank').orderBy('s.id').execute(),
      );
    expect(await stored()).toEqual([{ format: 'camt.054', intraday: true, amount: '-20000', charges: '-150', bank_reference: 'BANK-x', linked_statement_pk: null }]);
    // No bank balance and no proof failure: the bank leg of the date has no statement yet.
    expect(await withDatabase(db, (k) => k.selectFrom('reconciliation_results').select('status').where('account', '=', 'notify-bank').execute())).toEqual([]);

    const statement = camt053(`<Stmt><Id>EOD-1</Id><ElctrncSeqNb>1</ElctrncSeqNb><Acct><Id><IBAN>${iban}</IBAN></Id><Ccy>EUR</Ccy></Acct>${balance('OPBD', 50_000, '2026-11-29')}${balance('CLBD', 30_000, '2026-11-30')}${entry(-20_000, 'x')}</Stmt>`);
    expect((await cli(['statements', 'import', file('notify-eod.xml', statement)])).code).toBe(0);
    const [eod] = await withDatabase(db, (k) => k.selectFrom('bank_statements').select('id').where('statement_id', '=', 'EOD-1').execute());
    expect((await stored())[0]).toMatchObject({ format: 'camt.054', linked_statement_pk: eod!.id });
    // Listed by date, then sequence: the statement (sequence 1) before the notification (none).
    expect(await listed('notify-bank')).toEqual([expect.objectContaining({ statement_id: 'EOD-1', closing: '300.00', proof: 'ok' }), expect.objectContaining({ statement_id: 'NTF-1', closing: null, proof: 'ok' })]);
  });
});
