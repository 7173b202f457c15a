import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { importBooksFile, importEntriesFile } from '../../src/books/index.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { importStatementFiles, writeCamt053 } from '../../src/statements/index.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A bank account kept at entry level (five books lines, a camt.053 of five entries: four pairs
// matched by the rules, a cheque not yet at the bank and a fee not yet booked) and a gateway
// account whose balance runs 123.45 ahead of the books from 3 November.
const IBAN = 'DE89370400440532013000';
const BANK_DATE = '2026-11-02';
const PASSWORD = 'console-items-pw-4411';

let t: TestDatabase;
let dir: string;
let ctx: AppContext;
let app: FastifyInstance;

function file(name: string, content: string): string {
  const p = path.join(dir, name);
  writeFileSync(p, content);
  return p;
}

async function gatewayDay(date: string, balance: bigint): Promise<void> {
  const db = ctx.database.db;
  const at = new Date(`${date}T23:55:00Z`);
  const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate: date, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
  await insertSnapshotRows(db, runId, 'default', at, [{ currency: 'EUR', balance, singleBalance: balance }]);
  await markRunSucceeded(db, runId, at, { walletsReported: 1, walletsFetched: 1, pagesFetched: 1, requests: 2 });
}

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-items-'));
  const accounts = file(
    'accounts.yaml',
    [
      'accounts:',
      '  - { name: default, apiKeyEnv: GW_KEY, apiSecretEnv: GW_SECRET, environment: sandbox }',
      'bankAccounts:',
      `  - { name: eu-bank, iban: ${IBAN}, currency: EUR, matching: { dateWindowDays: 2, groupSize: 3 } }`,
      '',
    ].join('\n'),
  );
  ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: accounts, RECON_TIMEZONE: 'UTC', GW_KEY: 'k', GW_SECRET: 's' }, { clock: new FixedClock(new Date('2026-11-10T12:00:00Z')) });
  await importEntriesFile(
    ctx,
    file(
      'entries.csv',
      [
        'booking_date,value_date,currency,amount,reference,description,entry_id',
        '2026-11-02,2026-11-02,EUR,2500.00,B7-1,payout,L-1',
        '2026-11-02,,EUR,-400.00,B7-2,supplier,L-2',
        '2026-11-01,,EUR,123.45,B7-3,refund,L-3',
        '2026-11-01,,EUR,-70.00,,rent,L-4',
        '2026-11-02,,EUR,-500.00,CHQ-9,cheque not yet cashed,L-5',
        '',
      ].join('\n'),
    ),
    { account: 'eu-bank' },
  );
  await importStatementFiles(ctx, [file('eu.xml', writeCamt053({ iban: IBAN, currency: 'EUR', opening: 1_000_000n, days: [{ sequence: 7, date: BANK_DATE, entries: [250_000n, -40_000n, 12_345n, -7_000n, -250n] }] }))]);
  // The books: 10,000.00 + the five lines = 11,653.45; the bank 12,150.95.
  await importBooksFile(ctx, file('bank-books.csv', `account,business_date,currency,balance\neu-bank,${BANK_DATE},EUR,11653.45\n`), {});
  for (const [date, gateway] of [
    ['2026-11-02', 100_000n],
    ['2026-11-03', 112_345n],
    ['2026-11-04', 112_345n],
  ] as const) {
    await gatewayDay(date, gateway);
  }
  await importBooksFile(ctx, file('gateway-books.csv', 'account,business_date,currency,balance\ndefault,2026-11-02,EUR,1000.00\ndefault,2026-11-03,EUR,1000.00\ndefault,2026-11-04,EUR,1000.00\n'), {});
  for (const date of ['2026-11-02', '2026-11-03', '2026-11-04']) await runReconcileJob(ctx, { date });
  await addUser(ctx, 'pat', 'preparer', PASSWORD, 'test');
  await addUser(ctx, 'abe', 'approver', PASSWORD, 'test');
  await addUser(ctx, 'vic', 'viewer', PASSWORD, 'test');
  await addUser(ctx, 'ada', 'auditor', PASSWORD, 'test');
  app = await buildConsoleApp({ ctx });
}, 180_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const db = () => ctx.database.db;
const signedIn = async (name: string) => {
  const client = new ConsoleClient(app);
  expect((await client.signIn(name, PASSWORD)).statusCode).toBe(303);
  return client;
};
/** The notice the page shows after an action (post-redirect-get). */
const noticeOf = (body: string) =>
  /<p class="notice (ok|error)"[^>]*>([^<]*)<\/p>/
    .exec(body)
    ?.slice(1, 3)
    .map((s) => s.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&'));
/** The console's audit of one action taken by pat. */
const audit = (action: string) =>
  db().selectFrom('console_audit').select(['user_name', 'action', 'target', 'outcome', 'address', 'detail']).where('action', '=', action).where('user_name', '=', 'pat').orderBy('id').execute();
const waterfallOf = (body: string, account: string) => new RegExp(`<table class="waterfall" data-account="${account}" data-currency="EUR">([\\s\\S]*?)</table>`).exec(body)?.[1];
const row = (name: string, amount: string) => `<th scope="row">${name}</th><td class="amount">${amount}</td>`;
const activeMatches = () => db().selectFrom('entry_matches').select(['id', 'rule', 'state', 'matched_by', 'note', 'undone_by', 'undo_note']).orderBy('id').execute();

describe(`explaining differences in the review console (${backend})`, { timeout: 180_000 }, () => {
  it('shows the waterfall of the bank account on the day view: books, open items by kind, adjusted books, bank balance, unexplained', async () => {
    const pat = await signedIn('pat');
    const day = await pat.get(`/day?date=${BANK_DATE}`);
    expect(day.statusCode).toBe(200);
    const waterfall = waterfallOf(day.body, 'eu-bank');
    expect(waterfall).toContain(`: explained</caption>`);
    expect(waterfall).toContain(row('Books balance', '11,653.45'));
    expect(waterfall).toContain(row('Open items: outstanding (in the books, not at the bank) (1)', '500.00'));
    expect(waterfall).toContain(row('Open items: unrecorded (at the bank, not in the books) (1)', '-2.50'));
    expect(waterfall).toContain(row('Adjusted books balance', '12,150.95'));
    expect(waterfall).toContain(row('Bank balance', '12,150.95'));
    expect(waterfall).toContain(row('Unexplained', '0.00'));
    // The gateway account matched on that date: no waterfall for it.
    expect(waterfallOf(day.body, 'default')).toBeUndefined();
    // The forms mark the notes they need.
    expect(day.body).toContain('<form method="post" action="/matches" class="match">');
    expect(day.body).toMatch(/action="\/matches"[\s\S]*?<label>Note \(required\) <input type="text" name="note" required/);
  });

  it('matches by hand with a note (audited, in the match list) and undoes a match with a note; without a note or with amounts that disagree it is refused and nothing changes', async () => {
    const pat = await signedIn('pat');
    const entries = await db().selectFrom('books_entries').select(['id', 'reference', 'entry_key']).orderBy('id').execute();
    const cheque = entries.find((e) => e.reference === 'CHQ-9')!;
    const rent = entries.find((e) => e.entry_key === 'id:L-4')!;
    const fee = await db().selectFrom('bank_statement_entries').select(['id']).where('amount', '=', '-250').executeTakeFirstOrThrow();
    const byAmount = (await activeMatches()).find((m) => m.rule === 'amount_date')!;
    const back = `/day?date=${BANK_DATE}`;
    await pat.get(back);

    const disagree = await pat.post('/matches', { books: cheque.id, statement: fee.id, note: 'try', back });
    expect([disagree.statusCode, disagree.headers.location]).toEqual([303, back]);
    expect(noticeOf((await pat.get(back)).body)).toEqual(['error', expect.stringContaining('Refused: The books entries sum to -500.00, the statement entries to -2.50: a match explains no difference.')]);

    const undoNoNote = await pat.post(`/matches/${byAmount.id}/undo`, { note: '  ', back });
    expect(undoNoNote.statusCode).toBe(303);
    expect(noticeOf((await pat.get(back)).body)).toEqual(['error', 'Refused: A note is required: say why, for the record. Nothing was changed.']);
    expect((await activeMatches()).find((m) => m.id === byAmount.id)!.state).toBe('active');

    const undone = await pat.post(`/matches/${byAmount.id}/undo`, { note: 'rent was paid twice, this is the other one', back });
    expect(undone.statusCode).toBe(303);
    const afterUndo = await pat.get(back);
    expect(noticeOf(afterUndo.body)).toEqual(['ok', `Match ${byAmount.id} undone by pat: its entries are unmatched again (eu-bank ${BANK_DATE}).`]);
    expect((await activeMatches()).find((m) => m.id === byAmount.id)).toMatchObject({ state: 'undone', undone_by: 'pat', undo_note: 'rent was paid twice, this is the other one' });
    // Unmatched again, the rent is offered for a match by hand on the day view, and both open items cancel out.
    expect(afterUndo.body).toContain(`<input type="checkbox" name="books" value="${rent.id}"> books entry ${rent.id}: 2026-11-01 EUR -70.00 rent`);
    expect(waterfallOf(afterUndo.body, 'eu-bank')).toContain(row('Unexplained', '0.00'));

    const rentLine = /<input type="checkbox" name="statement" value="(\d+)"> statement entry \d+: 2026-11-02 EUR -70\.00/.exec(afterUndo.body)![1]!;
    const noNote = await pat.post('/matches', { books: rent.id, statement: rentLine, back });
    expect(noNote.statusCode).toBe(303);
    expect(noticeOf((await pat.get(back)).body)?.[1]).toContain('A note is required');
    const made = await pat.post('/matches', { books: rent.id, statement: rentLine, note: 'checked with the landlord', back });
    expect(made.statusCode).toBe(303);
    const afterMatch = await pat.get(back);
    const manual = (await activeMatches()).find((m) => m.rule === 'manual' && m.state === 'active')!;
    expect(manual).toMatchObject({ matched_by: 'pat', note: 'checked with the landlord' });
    expect(noticeOf(afterMatch.body)).toEqual(['ok', `Match ${manual.id} made by pat: books ${rent.id} with statement ${rentLine} (eu-bank ${BANK_DATE}).`]);
    // In the match list of the date, with its undo form.
    expect(afterMatch.body).toMatch(new RegExp(`<tr class="match-active" data-match="${manual.id}"><td>${manual.id}</td><td>manual</td><td>${rent.id}</td><td>${rentLine}</td><td>pat</td><td>checked with the landlord</td><td><form method="post" action="/matches/${manual.id}/undo"`));

    // And it can be undone, with a note.
    expect((await pat.post(`/matches/${manual.id}/undo`, { note: 'matched to the wrong line', back })).statusCode).toBe(303);
    expect((await activeMatches()).find((m) => m.id === manual.id)).toMatchObject({ state: 'undone', undone_by: 'pat', undo_note: 'matched to the wrong line' });

    expect(await audit('match.add')).toEqual([
      expect.objectContaining({ user_name: 'pat', outcome: 'refused' }),
      expect.objectContaining({ user_name: 'pat', outcome: 'refused' }),
      expect.objectContaining({ user_name: 'pat', target: `eu-bank ${BANK_DATE}`, outcome: 'ok', address: expect.any(String), detail: expect.objectContaining({ note: 'checked with the landlord' }) }),
    ]);
    expect((await audit('match.undo')).map((a) => [a.user_name, a.outcome])).toEqual([
      ['pat', 'refused'],
      ['pat', 'ok'],
      ['pat', 'ok'],
    ]);
  });

  it('refuses a viewer and an auditor (audited), shows them no forms, and changes nothing', async () => {
    const before = await activeMatches();
    const items = await db().selectFrom('reconciling_items').select('id').execute();
    for (const [name, role] of [
      ['vic', 'viewer'],
      ['ada', 'auditor'],
    ] as const) {
      const client = await signedIn(name);
      const day = await client.get(`/day?date=${BANK_DATE}`);
      expect(day.body).not.toContain('action="/matches"');
      expect(day.body).not.toContain('action="/items"');
      for (const [url, fields] of [
        ['/matches', { books: '1', statement: '1', note: 'x' }],
        ['/matches/1/undo', { note: 'x' }],
        ['/items', { account: 'default', currency: 'EUR', date: '2026-11-03', kind: 'in_transit', amount: '1.00', note: 'x' }],
        ['/items/1/clear', { note: 'x' }],
      ] as const) {
        const refused = await client.post(url, fields);
        expect([url, refused.statusCode]).toEqual([url, 403]);
        expect(refused.body).toContain(`has the ${role} role and can look at everything but change nothing`);
      }
    }
    expect(await activeMatches()).toEqual(before);
    expect(await db().selectFrom('reconciling_items').select('id').execute()).toEqual(items);
    const refusals = await db().selectFrom('console_audit').select(['user_name', 'outcome']).where('user_name', 'in', ['vic', 'ada']).where('outcome', '=', 'refused').execute();
    expect(refusals).toHaveLength(8);
  });

  it('shows on the gateway case page where the difference started, adds an in-transit item from it (the case closes as explained) and clears it with a note', async () => {
    const pat = await signedIn('pat');
    const caseId = (await db().selectFrom('reconciliation_results').select('case_id').where('account', '=', 'default').where('business_date', '=', '2026-11-04').executeTakeFirstOrThrow()).case_id!;
    expect(caseId).not.toBeNull();
    const back = `/cases/${caseId}`;
    const page = await pat.get(back);
    expect(page.statusCode).toBe(200);
    const summary = /<ul id="trail-summary">([\s\S]*?)<\/ul>/.exec(page.body)![1]!;
    expect(summary).toContain('<li>The gateway and the books last matched on 2026-11-02.</li>');
    expect(summary).toContain('<li>The difference appeared on 2026-11-03: EUR 0.00 to EUR 123.45 (gateway moved EUR 123.45, books moved EUR 0.00).</li>');
    expect(page.body).toMatch(/<tr class="appeared"><td><a href="\/day\?date=2026-11-03">2026-11-03<\/a><\/td><td>break<\/td><td class="amount">1,123\.45<\/td><td class="amount">123\.45<\/td><td class="amount">1,000\.00<\/td><td class="amount">0\.00<\/td><td>balances<\/td><td class="amount">123\.45<\/td><td class="amount">123\.45<\/td><\/tr>/);
    expect(waterfallOf(page.body, 'default')).toContain(row('Gateway balance', '1,123.45'));

    const item = { account: 'default', currency: 'EUR', date: '2026-11-03', kind: 'in_transit', amount: '123.45', expected_clear: '2026-11-05', back };
    expect((await pat.post('/items', item)).headers.location).toBe(back);
    expect(noticeOf((await pat.get(back)).body)?.[1]).toContain('Refused: A note is required: say what the item is');
    expect(await db().selectFrom('reconciling_items').select('id').execute()).toEqual([]);

    expect((await pat.post('/items', { ...item, note: 'payout PO-881 in transit' })).headers.location).toBe(back);
    const added = await pat.get(back);
    const itemId = Number((await db().selectFrom('reconciling_items').select('id').executeTakeFirstOrThrow()).id);
    expect(noticeOf(added.body)?.[1]).toContain(`Item #${itemId} added by pat`);
    expect(added.body).toContain('<dt>State</dt><dd>resolved (explained)');
    expect(waterfallOf(added.body, 'default')).toContain(row('Open items: in transit (1)', '123.45'));
    expect(waterfallOf(added.body, 'default')).toContain(row('Unexplained', '0.00'));
    const results = await db().selectFrom('reconciliation_results').select(['business_date', 'status', 'unexplained']).where('account', '=', 'default').orderBy('business_date').execute();
    expect(results.map((r) => [r.business_date, r.status, r.unexplained])).toEqual([
      ['2026-11-02', 'matched', '0'],
      ['2026-11-03', 'explained', '0'],
      ['2026-11-04', 'explained', '0'],
    ]);
    expect(await audit('item.add')).toEqual([
      expect.objectContaining({ user_name: 'pat', outcome: 'refused' }),
      expect.objectContaining({ user_name: 'pat', target: 'default EUR 2026-11-03', outcome: 'ok', detail: expect.objectContaining({ item: itemId, note: 'payout PO-881 in transit' }) }),
    ]);

    expect(added.body).toContain(`<form method="post" action="/items/${itemId}/clear"`);
    await pat.post(`/items/${itemId}/clear`, { note: '', back });
    expect(noticeOf((await pat.get(back)).body)?.[1]).toContain('Refused: A note is required: say how the item cleared');
    await pat.post(`/items/${itemId}/clear`, { note: 'arrived on the gateway on the 10th', back });
    expect(noticeOf((await pat.get(back)).body)).toEqual(['ok', `Item #${itemId} in_transit EUR 123.45 cleared by pat.`]);
    expect(await db().selectFrom('reconciling_items').select(['state', 'cleared_by', 'clear_note']).where('id', '=', itemId).executeTakeFirstOrThrow()).toEqual({ state: 'cleared', cleared_by: 'pat', clear_note: 'arrived on the gateway on the 10th' });
    expect((await audit('item.clear')).map((a) => [a.user_name, a.target, a.outcome])).toEqual([
      ['pat', `item #${itemId}`, 'refused'],
      ['pat', `item #${itemId}`, 'ok'],
    ]);
  });

  it('refuses an item or a match undo on a signed-off date with the lock message, and changes nothing', async () => {
    const pat = await signedIn('pat');
    const back = `/day?date=${BANK_DATE}`;
    await pat.get(back);
    expect((await pat.post('/signoffs/prepare', { date: BANK_DATE })).statusCode).toBe(303);
    const abe = await signedIn('abe');
    await abe.get(back);
    await abe.post('/signoffs/approve', { date: BANK_DATE });
    expect(noticeOf((await abe.get(back)).body)?.[1]).toContain(`${BANK_DATE} is locked`);

    const rule = (await activeMatches()).find((m) => m.state === 'active' && m.rule === 'reference')!;
    await pat.get(back);
    await pat.post(`/matches/${rule.id}/undo`, { note: 'wrong', back });
    const refused = noticeOf((await pat.get(back)).body);
    expect(refused?.[0]).toBe('error');
    expect(refused?.[1]).toContain(`Refused: ${BANK_DATE} of account "eu-bank" is signed off and locked (sign-off #`);
    expect(refused?.[1]).toContain('If the closed day must change, an approver reopens it first ("Reopen sign-off" on the day view).');
    expect((await activeMatches()).find((m) => m.id === rule.id)!.state).toBe('active');

    const items = await db().selectFrom('reconciling_items').select('id').execute();
    await pat.post('/items', { account: 'eu-bank', currency: 'EUR', date: BANK_DATE, kind: 'fee', amount: '-1.00', note: 'card fee', back });
    expect(noticeOf((await pat.get(back)).body)?.[1]).toContain('is signed off and locked');
    expect(await db().selectFrom('reconciling_items').select('id').execute()).toEqual(items);
  });
});
