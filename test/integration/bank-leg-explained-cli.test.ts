import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { writeCamt053 } from '../../src/statements/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 38's bank leg, end to end through the CLI: five books lines and a camt.053 of five entries
// on 2 November; three pairs match by reference, one by amount within the date window, the books'
// payment of 500.00 is not yet at the bank and the bank's fee of 2.50 not yet in the books. The
// account is new (opening 0.00), so its books balance is the sum of its entries.
let t: TestDatabase;
let dir: string;
const IBAN = 'DE89370400440532013000';
const clock = new FixedClock('2026-11-03T09:00:00Z');

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  await serveToCommands(t);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-bank-explained-'));
  writeFileSync(path.join(dir, 'accounts.yaml'), ['bankAccounts:', `  - { name: eu-bank, iban: ${IBAN}, currency: EUR }`, ''].join('\n'));
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({
  DATABASE_URL: '',
  ...t.childEnv,
  LOG_LEVEL: 'silent',
  RECON_TIMEZONE: 'UTC',
  RECON_ACCOUNTS_FILE: path.join(dir, 'accounts.yaml'),
  RECON_ACTOR: 'anna',
  // A channel, so whatever the commands would tell people is written to the outbox.
  RECON_WEBHOOK_URL: 'http://127.0.0.1:9/hooks/recon',
  RECON_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
});
const cli = (...args: string[]) => runCliInProcess(args, env(), { clock });
function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}
const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);

interface ReconcileJson {
  results: Array<{ account: string; business_date: string; currency: string; status: string; difference: string; items_total: string | null; unexplained: string | null; expected_balance: string; gateway_balance: string }>;
}
interface ItemJson {
  id: number | null;
  kind: string;
  amount: string;
  amount_major: string;
  state: string;
  books_entry_id: number | null;
  statement_entry_id: number | null;
}

describe(`a bank account's difference explained by its unmatched entries, then matched (${backend})`, { timeout: 600_000 }, () => {
  it('reconcile gives explained (outstanding +500.00, unrecorded −2.50, unexplained 0.00, exit 0, no case, no event); the next day both clear by matching and the date is matched', async () => {
    const books = file(
      'entries-2026-11-02.csv',
      [
        'booking_date,currency,amount,reference,description,entry_id',
        '2026-11-02,EUR,2500.00,B7-1,payout,L-1',
        '2026-11-02,EUR,-400.00,B7-2,supplier,L-2',
        '2026-11-02,EUR,123.45,B7-3,refund,L-3',
        '2026-11-02,EUR,-70.00,,rent,L-4',
        '2026-11-02,EUR,-500.00,CHQ-9,cheque to the landlord,L-5',
        '',
      ].join('\n'),
    );
    const imported = await cli('ledger', 'import', books, '--entries', '--account', 'eu-bank');
    expect(imported.code, imported.stderr).toBe(0);
    const camt = writeCamt053({ iban: IBAN, currency: 'EUR', opening: 0n, days: [{ sequence: 7, date: '2026-11-02', entries: [250_000n, -40_000n, 12_345n, -7_000n, -250n] }] });
    const statement = await cli('statements', 'import', file('statement-2026-11-02.xml', camt));
    expect(statement.code, statement.stderr).toBe(0);

    const matches = JSON.parse((await cli('match', 'list', '--date', '2026-11-02', '--json')).stdout) as Array<{ rule: string }>;
    expect(matches.map((m) => m.rule).sort()).toEqual(['amount_date', 'reference', 'reference', 'reference']);

    const reconciled = await cli('reconcile', '--date', '2026-11-02', '--json');
    expect(reconciled.code, reconciled.stderr).toBe(0);
    const day1 = JSON.parse(reconciled.stdout) as ReconcileJson;
    // Books 1,653.45 + items 497.50 (500.00 − 2.50) + unexplained 0.00 = bank 2,150.95.
    expect(day1.results).toEqual([
      expect.objectContaining({ account: 'eu-bank', business_date: '2026-11-02', currency: 'EUR', status: 'explained', expected_balance: '165345', gateway_balance: '215095', difference: '49750', items_total: '49750', unexplained: '0' }),
    ]);
    const text = await cli('reconcile', '--date', '2026-11-02');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('explained');

    const items = JSON.parse((await cli('items', 'list', '--date', '2026-11-02', '--account', 'eu-bank', '--json')).stdout) as ItemJson[];
    expect(items.map((i) => [i.kind, i.amount, i.amount_major, i.state])).toEqual([
      ['outstanding', '50000', '500.00', 'open'],
      ['unrecorded', '-250', '-2.50', 'open'],
    ]);
    expect(items[0]!.books_entry_id).not.toBeNull();
    expect(items[1]!.statement_entry_id).not.toBeNull();

    // No case, and nothing told to anyone but the night's digest.
    expect(await withDb((db) => db.selectFrom('reconciliation_cases').select('id').execute())).toEqual([]);
    const events = await withDb((db) => db.selectFrom('notifications').select('event_type').execute());
    expect(events.filter((e) => e.event_type !== 'night.completed')).toEqual([]);

    // The next day: the bank pays the cheque, the books take the fee.
    clock.set('2026-11-04T09:00:00Z');
    const camt2 = writeCamt053({ iban: IBAN, currency: 'EUR', opening: 215_095n, days: [{ sequence: 8, date: '2026-11-03', entries: [-50_000n] }] });
    expect((await cli('statements', 'import', file('statement-2026-11-03.xml', camt2))).code).toBe(0);
    const fee = await cli('ledger', 'import', file('entries-2026-11-03.csv', 'booking_date,currency,amount,description,entry_id\n2026-11-03,EUR,-2.50,bank fee October,L-6\n'), '--entries', '--account', 'eu-bank');
    expect(fee.code, fee.stderr).toBe(0);
    const next = await cli('reconcile', '--date', '2026-11-03', '--json');
    expect(next.code, next.stderr).toBe(0);
    expect((JSON.parse(next.stdout) as ReconcileJson).results).toEqual([
      expect.objectContaining({ business_date: '2026-11-03', status: 'matched', expected_balance: '165095', gateway_balance: '165095', difference: '0' }),
    ]);
    const matchedNext = JSON.parse((await cli('match', 'list', '--date', '2026-11-03', '--json')).stdout) as Array<{ rule: string; books_entries: number[]; statement_entries: number[] }>;
    expect(matchedNext.map((m) => m.rule)).toEqual(['amount_date', 'amount_date']);
    expect(matchedNext.map((m) => m.books_entries).flat()).toEqual(expect.arrayContaining([items[0]!.books_entry_id]));
    expect(matchedNext.map((m) => m.statement_entries).flat()).toEqual(expect.arrayContaining([items[1]!.statement_entry_id]));
    expect(JSON.parse((await cli('items', 'list', '--date', '2026-11-03', '--account', 'eu-bank', '--json')).stdout)).toEqual([]);
    // The 2nd keeps its items: the matches belong to the 3rd, the date of their latest entry.
    const status = await withDb((db) => db.selectFrom('reconciliation_results').select(['business_date', 'status', 'unexplained', 'case_id']).orderBy('business_date').execute());
    expect(status).toEqual([
      { business_date: '2026-11-02', status: 'explained', unexplained: '0', case_id: null },
      { business_date: '2026-11-03', status: 'matched', unexplained: '0', case_id: null },
    ]);
    expect(await withDb((db) => db.selectFrom('reconciliation_cases').select('id').execute())).toEqual([]);
  });

  it('items import adds the items of a CSV or JSON lines file all or none: a bad line exits 2 naming the file and the line, and nothing is written', async () => {
    const stored = () => withDb((db) => db.selectFrom('reconciling_items').select(['id', 'kind', 'amount', 'opened_on', 'expected_clear', 'note', 'created_by']).orderBy('id').execute());
    const bad = file('items-bad.csv', ['account,currency,date,kind,amount,expected_clear,note', 'eu-bank,EUR,2026-11-03,timing,10.00,2026-11-04,cut-off timing', 'eu-bank,EUR,2026-11-03,timing,-10.005,,the other side', 'eu-bank,EUR,2026-11-03,outstanding,1.00,,x', ''].join('\n'));
    const refused = await cli('items', 'import', bad);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('items-bad.csv line 3: amount "-10.005" is not an amount of EUR');
    expect(refused.stderr).toContain('items-bad.csv line 4: kind "outstanding" is not a kind of item people add');
    expect(await stored()).toEqual([]);
    const noNote = await cli('items', 'import', file('items-nonote.jsonl', '{"account":"eu-bank","currency":"EUR","date":"2026-11-03","kind":"fee","amount":"-1.00"}\n'));
    expect(noNote.code).toBe(2);
    expect(noNote.stderr).toContain('items-nonote.jsonl line 1: note is missing');

    const good = file('items.csv', ['account,currency,date,kind,amount,expected_clear,note,evidence', 'eu-bank,EUR,2026-11-03,timing,10.00,2026-11-04,cut-off timing,ticket 12', ''].join('\n'));
    const jsonl = file('items.jsonl', '{"account":"eu-bank","currency":"EUR","date":"2026-11-03","kind":"timing","amount":"-10.00","note":"the other side"}\n');
    const first = await cli('items', 'import', good, '--by', 'ben');
    expect(first.code, first.stderr).toBe(0);
    const second = await cli('items', 'import', jsonl, '--by', 'ben');
    expect(second.code, second.stderr).toBe(0);
    const rows = await stored();
    expect(rows.map((r) => [r.kind, r.amount, r.opened_on, r.expected_clear, r.note, r.created_by])).toEqual([
      ['timing', '1000', '2026-11-03', '2026-11-04', 'cut-off timing', 'ben'],
      ['timing', '-1000', '2026-11-03', null, 'the other side', 'ben'],
    ]);
    expect([first.stdout.trim(), second.stdout.trim()]).toEqual(rows.map((r) => String(r.id)));
    // Two items that cancel out explain the date: explained, nothing unexplained.
    expect(await withDb((db) => db.selectFrom('reconciliation_results').select(['status', 'items_total', 'unexplained']).where('business_date', '=', '2026-11-03').executeTakeFirstOrThrow())).toEqual({ status: 'explained', items_total: '0', unexplained: '0' });
  });

  it('a closing balance the previous closing and the entries between do not roll forward to is a roll_forward_break naming the residual', async () => {
    // 2 Nov closes at 1,653.45 (its five entries); 3 Nov should close at 1,653.45 − 2.50 = 1,650.95, the books say 1,660.95.
    const balances = await cli('ledger', 'import', file('closings.csv', 'business_date,currency,balance\n2026-11-02,EUR,1653.45\n2026-11-03,EUR,1660.95\n'), '--account', 'eu-bank');
    expect(balances.code, balances.stderr).toBe(0);
    const run = await cli('reconcile', '--date', '2026-11-03', '--json');
    expect(run.code).toBe(3);
    const [result] = (JSON.parse(run.stdout) as { results: Array<{ status: string; note: string; case_id: number }> }).results;
    expect(result).toMatchObject({ status: 'roll_forward_break' });
    expect(result!.note).toContain('the books do not roll forward: closing of 2026-11-02 1,653.45 + entries -2.50 ≠ closing 1,660.95 EUR: residual 10.00 EUR');
    // (The break the first items file made on the 3rd, before its other side came, is resolved.)
    const cases = await withDb((db) => db.selectFrom('reconciliation_cases').select(['id', 'kind', 'state']).where('state', '!=', 'resolved').execute());
    expect(cases).toEqual([{ id: result!.case_id, kind: 'roll_forward_break', state: 'open' }]);
    // The 2nd, whose closing agrees with its entries, stays explained.
    const second = await cli('reconcile', '--date', '2026-11-02', '--json');
    expect(second.code, second.stderr).toBe(0);
    expect((JSON.parse(second.stdout) as { results: Array<{ status: string }> }).results).toEqual([expect.objectContaining({ status: 'explained' })]);
  });
});
