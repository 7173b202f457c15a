import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { writeCamt053, type SampleStatements } from '../../src/statements/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
const IBAN = 'DE89370400440532013000';

// Five bank entries on 2 November: three the books know by the bank's reference, one by amount
// and date only, and a fee of 2.50 not in the books.
const statements: SampleStatements = {
  iban: IBAN,
  currency: 'EUR',
  opening: 1_000_000n,
  days: [{ sequence: 7, date: '2026-11-02', entries: [250_000n, -40_000n, 12_345n, -7_000n, -250n] }],
};

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-entries-cli-'));
  writeFileSync(path.join(dir, 'accounts.yaml'), ['bankAccounts:', `  - { name: eu-bank, iban: ${IBAN}, currency: EUR, matching: { dateWindowDays: 2, groupSize: 3 } }`, ''].join('\n'));
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: path.join(dir, 'accounts.yaml'), RECON_ACTOR: 'anna' });
const cli = (args: string[]) => runCliInProcess(args, env(), { clock: new FixedClock(new Date('2026-11-10T12:00:00Z')) });
function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}
const tables = () =>
  withDatabase(t, async (db: Kysely<Database>) => ({
    entries: await db.selectFrom('books_entries').selectAll().orderBy('id').execute(),
    matches: await db.selectFrom('entry_matches').selectAll().orderBy('id').execute(),
    members: await db.selectFrom('entry_match_members').selectAll().orderBy('match_id').execute(),
  }));

const booksCsv = [
  'booking_date,value_date,currency,amount,reference,description,entry_id',
  '2026-11-02,2026-11-02,EUR,2500.00,B7-1,payout,L-1',
  '2026-11-02,,EUR,-400.00,B7-2,supplier,L-2',
  '2026-11-01,,EUR,123.45,B7-3,refund,L-3',
  '2026-11-01,,EUR,-70.00,,rent,L-4',
  '2026-11-02,,EUR,-500.00,CHQ-9,cheque not yet cashed,L-5',
  '',
].join('\n');

describe(`books entries and matching through the CLI (${backend})`, { timeout: 180_000 }, () => {
  it('refuses a bad entries file whole, naming each line, and writes nothing', async () => {
    const bad = await cli(['ledger', 'import', file('bad.csv', 'booking_date,currency,amount\n2026-11-31,EUR,1.00\n2026-11-02,EUR,1.005\n'), '--entries']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('bad.csv line 2: booking_date "2026-11-31" is not a real date');
    expect(bad.stderr).toContain('bad.csv line 3');
    expect((await tables()).entries).toEqual([]);
    const unknownColumn = await cli(['ledger', 'import', file('odd.csv', 'booking_date,currency,amount,colour\n2026-11-02,EUR,1.00,red\n'), '--entries']);
    expect(unknownColumn.code).toBe(1);
    expect(unknownColumn.stderr).toContain('unknown "colour"');
  });

  it('imports five books lines and a camt.053 of five entries: three match by reference, one by amount and date; the cheque and the fee stay unmatched', async () => {
    const imported = await cli(['ledger', 'import', file('entries.csv', booksCsv), '--entries']);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('Imported 5 books entries from entries.csv for eu-bank, 2026-11-01 to 2026-11-02: 5 new, 0 changed, 0 unchanged; matching made 0 matches.');
    const { entries } = await tables();
    expect(entries.map((e) => [e.booking_date, e.amount, e.scale, e.reference, e.entry_key])).toEqual([
      ['2026-11-02', '250000', 2, 'B7-1', 'id:L-1'],
      ['2026-11-02', '-40000', 2, 'B7-2', 'id:L-2'],
      ['2026-11-01', '12345', 2, 'B7-3', 'id:L-3'],
      ['2026-11-01', '-7000', 2, null, 'id:L-4'],
      ['2026-11-02', '-50000', 2, 'CHQ-9', 'id:L-5'],
    ]);

    const stmt = await cli(['statements', 'import', file('eu-bank.xml', writeCamt053(statements))]);
    expect(stmt.code, stmt.stderr).toBe(0);
    const listed = await cli(['match', 'list', '--date', '2026-11-02', '--json']);
    expect(listed.code).toBe(0);
    const matches = JSON.parse(listed.stdout) as Array<{ id: number; account: string; rule: string; books_entries: number[]; statement_entries: number[]; by: string; note: string | null }>;
    expect(matches.map((m) => [m.rule, m.books_entries.length, m.statement_entries.length, m.by])).toEqual([
      ['reference', 1, 1, 'wallet-recon'],
      ['reference', 1, 1, 'wallet-recon'],
      ['reference', 1, 1, 'wallet-recon'],
      ['amount_date', 1, 1, 'wallet-recon'],
    ]);
    const ids = entries.map((e) => Number(e.id));
    expect(matches.flatMap((m) => m.books_entries).sort((a, b) => a - b)).toEqual(ids.slice(0, 4));

    // Re-importing the same lines changes nothing and matches nothing twice.
    const again = await cli(['ledger', 'import', file('entries.csv', booksCsv), '--entries']);
    expect(again.stdout).toContain('0 new, 0 changed, 5 unchanged; matching made 0 matches.');
    expect((await tables()).entries).toHaveLength(5);
  });

  it('lines without a ledger id are keyed by their fields and occurrence: two equal lines are two entries, re-imported they are the same two', async () => {
    const twice = 'booking_date,currency,amount,description\n2026-11-03,EUR,-1.00,card fee\n2026-11-03,EUR,-1.00,card fee\n';
    const first = await cli(['ledger', 'import', file('fees.csv', twice), '--entries']);
    expect(first.stdout).toContain('2 new, 0 changed, 0 unchanged');
    const second = await cli(['ledger', 'import', file('fees.csv', twice), '--entries']);
    expect(second.stdout).toContain('0 new, 0 changed, 2 unchanged');
    const keys = (await tables()).entries.filter((e) => e.booking_date === '2026-11-03').map((e) => e.entry_key);
    expect(keys).toHaveLength(2);
    expect(keys[0]!.replace(/:\d+$/, '')).toBe(keys[1]!.replace(/:\d+$/, ''));
  });

  it('matches the cheque and the fee by hand with a note (audited), undoes a match with a note; without a note exit 2 and nothing changes', async () => {
    const { entries } = await tables();
    const cheque = entries.find((e) => e.reference === 'CHQ-9')!;
    const fee = await withDatabase(t, (db: Kysely<Database>) => db.selectFrom('bank_statement_entries').select(['id', 'amount']).where('amount', '=', '-250').executeTakeFirstOrThrow());
    const noNote = await cli(['match', 'add', '--books', cheque.id, '--statement', fee.id]);
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toContain('--note');
    // Amounts that disagree are no match.
    const disagree = await cli(['match', 'add', '--books', cheque.id, '--statement', fee.id, '--note', 'try']);
    expect(disagree.code).toBe(2);
    expect(disagree.stderr).toContain('a match explains no difference');

    const listed = JSON.parse((await cli(['match', 'list', '--date', '2026-11-02', '--json'])).stdout) as Array<{ id: number; rule: string; statement_entries: number[]; books_entries: number[] }>;
    const byAmount = listed.find((m) => m.rule === 'amount_date')!;
    const undoNoNote = await cli(['match', 'undo', String(byAmount.id)]);
    expect(undoNoNote.code).toBe(2);
    const undone = await cli(['match', 'undo', String(byAmount.id), '--note', 'rent was paid twice, this is the other one']);
    expect(undone.code, undone.stderr).toBe(0);
    const all = JSON.parse((await cli(['match', 'list', '--date', '2026-11-02', '--json', '--all'])).stdout) as Array<{ id: number; state: string; undone_by: string; undo_note: string }>;
    expect(all.find((m) => m.id === byAmount.id)).toMatchObject({ state: 'undone', undone_by: 'anna', undo_note: 'rent was paid twice, this is the other one' });
    expect((JSON.parse((await cli(['match', 'list', '--date', '2026-11-02', '--json'])).stdout) as unknown[]).length).toBe(3);

    // Matched again by hand: rule manual, by the person, with the note.
    const again = await cli(['match', 'add', '--books', String(byAmount.books_entries[0]), '--statement', String(byAmount.statement_entries[0]), '--note', 'checked with the landlord']);
    expect(again.code, again.stderr).toBe(0);
    const now = JSON.parse((await cli(['match', 'list', '--date', '2026-11-02', '--json'])).stdout) as Array<{ rule: string; by: string; note: string }>;
    expect(now.find((m) => m.rule === 'manual')).toMatchObject({ by: 'anna', note: 'checked with the landlord' });
    const audit = await withDatabase(t, (db: Kysely<Database>) => db.selectFrom('console_audit').select(['user_name', 'action', 'target', 'outcome']).where('action', 'like', 'match.%').orderBy('id').execute());
    expect(audit).toEqual([
      { user_name: 'anna', action: 'match.undo', target: 'eu-bank 2026-11-02', outcome: 'ok' },
      { user_name: 'anna', action: 'match.add', target: 'eu-bank 2026-11-02', outcome: 'ok' },
    ]);
  });

  it('the fee booked the next day is matched by amount within the window when imported; a dry run writes nothing', async () => {
    const before = await tables();
    const late = file('late.csv', 'booking_date,currency,amount,reference\n2026-11-03,EUR,-2.50,\n');
    const dry = await cli(['ledger', 'import', late, '--entries', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('Dry run, nothing written: 1 books entry from late.csv for eu-bank, 2026-11-03 would give 1 new, 0 changed, 0 unchanged; matching would make 1 match.');
    expect(await tables()).toEqual(before);
    const real = await cli(['ledger', 'import', late, '--entries']);
    expect(real.stdout).toContain('matching made 1 match.');
    const listed = JSON.parse((await cli(['match', 'list', '--date', '2026-11-03', '--json'])).stdout) as Array<{ rule: string }>;
    expect(listed.map((m) => m.rule)).toEqual(['amount_date']);
    const run = await cli(['match', 'run', '--dry-run', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
  });
});
