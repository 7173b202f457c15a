import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { applyCaseAction, type CaseActionRequest } from '../../src/cases/case-actions.js';
import { FixedClock } from '../../src/clock.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { replaceExpectedBalanceDays } from '../../src/db/expected-balance.repository.js';
import { findCase, listCases, listEvents, listOccurrences } from '../../src/db/reconciliation-case.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { UsageError } from '../../src/errors.js';
import { createTestContext, writeAccountsFile } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// The audit trail cannot be deleted, so each test follows its own account instead of emptying tables.
const ACCOUNTS = ['persist', 'reopen', 'accept', 'until', 'rerun', 'older', 'corrected', 'refused', 'manual', 'nosnap', 'audit', 'parallel', 'gone', 'reviewed'];

let t: TestDatabase;
let ctx: AppContext;
const clock = new FixedClock('2026-11-30T12:00:00Z');

beforeAll(async () => {
  t = await createTestDatabase();
  const accountsFile = writeAccountsFile(ACCOUNTS.map((name) => ({ name, apiKeyEnv: 'K', apiSecretEnv: 'S' })));
  ctx = createTestContext(t, { RECON_ACCOUNTS_FILE: accountsFile, RECON_TOLERANCE_JPY: '5' }, { clock });
});
afterAll(async () => {
  await t?.drop();
});

/** A succeeded snapshot of the account on the date and the books for it. */
async function day(account: string, businessDate: string, gateway: Record<string, bigint>, books: Record<string, bigint>): Promise<void> {
  const db = ctx.database.db;
  const at = new Date(`${businessDate}T23:55:00Z`);
  const runId = await insertRunningRun(db, { account, environment: 'sandbox', trigger: 'manual', businessDate, startedAt: at, timing: { cutoffAt: at, driftSeconds: 0, endOfDay: true } });
  const rows = Object.entries(gateway).map(([currency, balance]) => ({ currency, balance, singleBalance: balance }));
  await insertSnapshotRows(db, runId, account, at, rows);
  await markRunSucceeded(db, runId, at, { walletsReported: rows.length, walletsFetched: rows.length, pagesFetched: 1, requests: 1 });
  await setBooks(account, businessDate, books);
}

async function setBooks(account: string, businessDate: string, books: Record<string, bigint>): Promise<void> {
  await replaceExpectedBalanceDays(ctx.database.db, Object.entries(books).map(([currency, balance]) => ({ account, businessDate, currency, balance })), 'books.csv', new Date());
}

/** Reconciles a date; today's date (the 30th) just after its cut-off, since no date is reconciled before it. */
async function reconcile(account: string, date: string) {
  if (date !== '2026-11-30') return runReconcileJob(ctx, { account, date });
  const now = clock.now().toISOString();
  clock.set('2026-12-01T00:05:00Z');
  try {
    return await runReconcileJob(ctx, { account, date });
  } finally {
    clock.set(now);
  }
}
const casesOf = (account: string) => listCases(ctx.database.db, { account });
const actionsOf = async (caseId: number) => (await listEvents(ctx.database.db, caseId)).map((e) => e.action);
const act = (request: Omit<CaseActionRequest, 'actor'>) => applyCaseAction(ctx, { actor: 'anna', ...request });

describe(`discrepancy cases on ${backend}`, () => {
  it('a break that persists three days is one case with three occurrences, and every result names it', async () => {
    for (const date of ['2026-11-20', '2026-11-21', '2026-11-22']) {
      await day('persist', date, { EUR: 1100n, USD: 5n }, { EUR: 1000n, USD: 5n });
      expect((await reconcile('persist', date)).exitCode).toBe(3);
    }
    const [c, ...others] = await casesOf('persist');
    expect(others).toEqual([]);
    expect(c).toMatchObject({ currency: 'EUR', kind: 'break', state: 'open', resolution: null, openedOn: '2026-11-20', lastSeenOn: '2026-11-22', occurrences: 3, latestDifference: 100n });
    expect((await listOccurrences(ctx.database.db, c!.id)).map((o) => [o.businessDate, o.difference])).toEqual([
      ['2026-11-20', 100n],
      ['2026-11-21', 100n],
      ['2026-11-22', 100n],
    ]);
    expect(await actionsOf(c!.id)).toEqual(['opened', 'seen', 'seen']);
    const stored = await ctx.database.db.selectFrom('reconciliation_results').select(['currency', 'case_id']).where('account', '=', 'persist').orderBy('business_date').orderBy('currency').execute();
    expect(stored.filter((r) => r.currency === 'EUR').map((r) => r.case_id)).toEqual([c!.id, c!.id, c!.id]);
    expect(stored.filter((r) => r.currency === 'USD').map((r) => r.case_id)).toEqual([null, null, null]);
    const open = await ctx.database.db.selectFrom('open_cases').selectAll().where('account', '=', 'persist').execute();
    expect(open).toEqual([expect.objectContaining({ id: c!.id, state: 'open', occurrences: 3, latest_difference: '100' })]);
  });

  it('a clean day resolves the case auto; a recurrence reopens the same case as a new episode', async () => {
    await day('reopen', '2026-11-20', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('reopen', '2026-11-20');
    await day('reopen', '2026-11-21', { EUR: 1000n }, { EUR: 1000n });
    expect((await reconcile('reopen', '2026-11-21')).exitCode).toBe(0);
    const [resolved] = await casesOf('reopen');
    expect(resolved).toMatchObject({ state: 'resolved', resolution: 'auto', resolvedOn: '2026-11-21', occurrences: 1 });

    await day('reopen', '2026-11-22', { EUR: 1030n }, { EUR: 1000n });
    const again = await reconcile('reopen', '2026-11-22');
    expect(again.exitCode).toBe(3);
    const cases = await casesOf('reopen');
    expect(cases).toHaveLength(1);
    expect(cases[0]).toMatchObject({ id: resolved!.id, state: 'open', resolution: null, openedOn: '2026-11-22', lastSeenOn: '2026-11-22', occurrences: 2, latestDifference: 30n });
    expect(again.results[0]!.case).toMatchObject({ id: resolved!.id, state: 'open' });
    expect(await actionsOf(resolved!.id)).toEqual(['opened', 'auto_resolved', 'seen', 'reopened']);
  });

  it('an accepted difference keeps the exit code 0 and lapses, saying why, when the difference moves beyond the tolerance', async () => {
    await day('accept', '2026-11-20', { EUR: 1100n, JPY: 510n }, { EUR: 1000n, JPY: 500n });
    await reconcile('accept', '2026-11-20');
    const [eur, jpy] = await casesOf('accept');
    await act({ caseId: eur!.id, action: 'accept', note: 'booking on Monday' });
    await act({ caseId: jpy!.id, action: 'accept', note: 'rounding at the bank' });

    await day('accept', '2026-11-21', { EUR: 1100n, JPY: 514n }, { EUR: 1000n, JPY: 500n });
    const same = await reconcile('accept', '2026-11-21');
    // JPY moved from 10 to 14: within its tolerance of 5, so still the accepted discrepancy.
    expect(same.exitCode).toBe(0);
    expect(same.accepted).toBe(2);
    expect(same.results.map((r) => r.case?.state)).toEqual(['accepted', 'accepted']);

    await day('accept', '2026-11-22', { EUR: 1250n, JPY: 514n }, { EUR: 1000n, JPY: 500n });
    const moved = await reconcile('accept', '2026-11-22');
    expect(moved.exitCode).toBe(3);
    expect(moved.summary.break).toBe(1);
    expect(await findCase(ctx.database.db, eur!.id)).toMatchObject({ state: 'open', resolution: null, latestDifference: 250n, acceptedUntil: null });
    const lapsed = (await listEvents(ctx.database.db, eur!.id)).find((e) => e.action === 'lapsed');
    expect(lapsed).toMatchObject({ fromState: 'accepted', toState: 'open', actor: 'wallet-recon' });
    expect(lapsed!.note).toBe('The acceptance lapsed on 2026-11-22: the difference moved from EUR 1.00 to EUR 2.50, beyond the tolerance of EUR 0.00. The case is open again.');
    // The acceptance froze the result rows as they were, amounts as digit strings, with the books import.
    const accepted = (await listEvents(ctx.database.db, eur!.id)).find((e) => e.action === 'accepted')!;
    expect(accepted).toMatchObject({ actor: 'anna', fromState: 'open', toState: 'accepted' });
    expect(accepted.evidence).toMatchObject({
      accepted_difference: '100',
      results: [expect.objectContaining({ business_date: '2026-11-20', currency: 'EUR', difference: '100', gateway_balance: '1100', expected_balance: '1000', books_source: 'books.csv' })],
    });
  });

  it('an acceptance lapses once the reconciled date passes --until', async () => {
    await day('until', '2026-11-27', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('until', '2026-11-27');
    const [c] = await casesOf('until');
    await act({ caseId: c!.id, action: 'accept', note: 'booking on Monday', until: '2026-11-30' });
    for (const date of ['2026-11-28', '2026-11-29', '2026-11-30']) {
      await day('until', date, { EUR: 1100n }, { EUR: 1000n });
      expect((await reconcile('until', date)).exitCode).toBe(0);
    }
    clock.set('2026-12-02T00:05:00Z');
    try {
      await day('until', '2026-12-01', { EUR: 1100n }, { EUR: 1000n });
      expect((await reconcile('until', '2026-12-01')).exitCode).toBe(3);
    } finally {
      clock.set('2026-11-30T12:00:00Z');
    }
    const lapsed = (await listEvents(ctx.database.db, c!.id)).at(-1)!;
    expect(lapsed.action).toBe('lapsed');
    expect(lapsed.note).toContain('it was accepted until 2026-11-30 and 2026-12-01 is after that');
  });

  it('re-running a date never counts it twice', async () => {
    await day('rerun', '2026-11-20', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('rerun', '2026-11-20');
    await reconcile('rerun', '2026-11-20');
    await reconcile('rerun', '2026-11-20');
    const [c] = await casesOf('rerun');
    expect(c).toMatchObject({ occurrences: 1, state: 'open' });
    expect(await actionsOf(c!.id)).toEqual(['opened']);
  });

  it('reconciling an older date leaves the current state alone and only adds to the history', async () => {
    await day('older', '2026-11-20', { EUR: 1000n }, { EUR: 1000n });
    await day('older', '2026-11-21', { EUR: 1100n }, { EUR: 1000n });
    await day('older', '2026-11-22', { EUR: 1000n }, { EUR: 1000n });
    await reconcile('older', '2026-11-21');
    await reconcile('older', '2026-11-22');
    const [c] = await casesOf('older');
    expect(c).toMatchObject({ state: 'resolved', resolution: 'auto', resolvedOn: '2026-11-22' });

    // The 20th's books are found to be wrong too: an older date, so the case stays resolved.
    await setBooks('older', '2026-11-20', { EUR: 900n });
    await reconcile('older', '2026-11-20');
    expect(await findCase(ctx.database.db, c!.id)).toMatchObject({ state: 'resolved', resolution: 'auto', lastSeenOn: '2026-11-21', latestDifference: 100n, occurrences: 2 });
    const events = await listEvents(ctx.database.db, c!.id);
    expect(events.at(-1)).toMatchObject({ action: 'seen', fromState: 'resolved', toState: 'resolved' });
    expect(events.at(-1)!.note).toContain("An earlier date than the case's latest (2026-11-22): its state is unchanged.");
  });

  it('a date re-reconciled after the books were corrected withdraws its occurrence and, if it was the latest, resolves the case', async () => {
    await day('corrected', '2026-11-20', { EUR: 1100n }, { EUR: 1000n });
    await day('corrected', '2026-11-21', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('corrected', '2026-11-20');
    await reconcile('corrected', '2026-11-21');
    await setBooks('corrected', '2026-11-21', { EUR: 1100n });
    expect((await reconcile('corrected', '2026-11-21')).exitCode).toBe(0);
    const [c] = await casesOf('corrected');
    expect(c).toMatchObject({ state: 'resolved', resolution: 'auto', resolvedOn: '2026-11-21', lastSeenOn: '2026-11-20', occurrences: 1 });
    expect(await actionsOf(c!.id)).toEqual(['opened', 'seen', 'withdrawn', 'auto_resolved']);
  });

  it('accepts a difference until the reviewed date itself, days after it (the latest date the case was seen, not today, bounds --until)', async () => {
    await day('reviewed', '2026-11-20', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('reviewed', '2026-11-20');
    const [c] = await casesOf('reviewed');
    await act({ caseId: c!.id, action: 'accept', note: 'fee booked on the 21st', until: '2026-11-20' });
    expect(await findCase(ctx.database.db, c!.id)).toMatchObject({ state: 'accepted', acceptedUntil: '2026-11-20', lastSeenOn: '2026-11-20' });
  });

  it('refuses every impossible transition with a usage error naming the state and what is allowed, and changes nothing', async () => {
    await day('refused', '2026-11-20', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('refused', '2026-11-20');
    const [c] = await casesOf('refused');
    const id = c!.id;
    const events = async () => (await listEvents(ctx.database.db, id)).length;

    await expect(act({ caseId: id, action: 'reopen', note: 'why not' })).rejects.toThrow(
      'Case #' + id + ' refused EUR break is open: "reopen" is allowed only from resolved or accepted. From open you can: ack, assign, note, resolve, accept. Nothing was changed.',
    );
    await expect(act({ caseId: id, action: 'note', note: '   ' })).rejects.toThrow(/needs --note TEXT/);
    await expect(act({ caseId: id, action: 'accept' })).rejects.toThrow(/cases accept needs --note TEXT saying why the difference is accepted/);
    await expect(act({ caseId: id, action: 'accept', note: 'x', until: '2026-11-19' })).rejects.toThrow(`--until 2026-11-19 is before 2026-11-20, the latest date case #${id} was seen`);
    await expect(act({ caseId: id, action: 'assign' })).rejects.toThrow(/needs --to NAME/);
    await expect(act({ caseId: 999_999, action: 'ack', note: 'x' })).rejects.toThrow(/There is no case #999999/);
    const before = await events();

    // An acknowledgement lets a date be signed off: it needs a note, from every actor.
    await expect(act({ caseId: id, action: 'ack', note: '  ' })).rejects.toThrow('cases ack needs --note TEXT saying what is being done about it; an empty note is not accepted.');
    await act({ caseId: id, action: 'ack', note: 'asking the bank' });
    await expect(act({ caseId: id, action: 'ack', note: 'again' })).rejects.toThrow(/is acknowledged: "ack" is allowed only from open\. From acknowledged you can: assign, note, resolve, accept\./);
    await act({ caseId: id, action: 'resolve', note: 'booked as 2026-11-21/118' });
    await expect(act({ caseId: id, action: 'accept', note: 'fine' })).rejects.toThrow(/is resolved \(fixed\): "accept" is allowed only from open or acknowledged\. From resolved you can: note, reopen\./);
    await expect(act({ caseId: id, action: 'assign', to: 'bob' })).rejects.toBeInstanceOf(UsageError);
    await expect(act({ caseId: id, action: 'resolve', note: 'again' })).rejects.toBeInstanceOf(UsageError);
    expect(await events()).toBe(before + 2);
    expect(await findCase(ctx.database.db, id)).toMatchObject({ state: 'resolved', resolution: 'fixed', resolvedOn: '2026-11-30' });
  });

  it('records each manual action with its actor and note; a fix holds from today, a later recurrence reopens it', async () => {
    await day('manual', '2026-11-28', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('manual', '2026-11-28');
    const [c] = await casesOf('manual');
    await act({ caseId: c!.id, action: 'ack', note: 'looking into it' });
    await act({ caseId: c!.id, action: 'assign', to: 'bob', due: '2026-12-02' });
    await act({ caseId: c!.id, action: 'note', note: 'bank confirms a fee' });
    await act({ caseId: c!.id, action: 'resolve', note: 'booked as 2026-11-30/118' });
    expect(await findCase(ctx.database.db, c!.id)).toMatchObject({ state: 'resolved', resolution: 'fixed', resolvedOn: '2026-11-30', assignee: 'bob', dueOn: '2026-12-02' });

    // The 29th predates the fix: history only. The 30th is the day the fix holds from: it reopens.
    await day('manual', '2026-11-29', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('manual', '2026-11-29');
    expect(await findCase(ctx.database.db, c!.id)).toMatchObject({ state: 'resolved' });
    await day('manual', '2026-11-30', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('manual', '2026-11-30');
    expect(await findCase(ctx.database.db, c!.id)).toMatchObject({ state: 'open', openedOn: '2026-11-30', occurrences: 3 });

    await act({ caseId: c!.id, action: 'accept', note: 'booking on Monday' });
    await act({ caseId: c!.id, action: 'reopen', note: 'the booking was reversed' });
    const events = (await listEvents(ctx.database.db, c!.id)).map((e) => [e.actor, e.action, e.fromState, e.toState, e.note]);
    expect(events).toEqual([
      ['wallet-recon', 'opened', null, 'open', `#${c!.id} manual EUR break first seen on 2026-11-28: difference EUR 1.00.`],
      ['anna', 'acknowledged', 'open', 'acknowledged', 'looking into it'],
      ['anna', 'assigned', 'acknowledged', 'acknowledged', 'assigned to bob, due 2026-12-02'],
      ['anna', 'noted', 'acknowledged', 'acknowledged', 'bank confirms a fee'],
      ['anna', 'resolved', 'acknowledged', 'resolved', 'booked as 2026-11-30/118'],
      ['wallet-recon', 'seen', 'resolved', 'resolved', "Seen on 2026-11-29: difference EUR 1.00. An earlier date than the case's latest (2026-11-30): its state is unchanged."],
      ['wallet-recon', 'seen', 'resolved', 'resolved', 'Seen on 2026-11-30: difference EUR 1.00.'],
      ['wallet-recon', 'reopened', 'resolved', 'open', 'Seen again on 2026-11-30 (difference EUR 1.00) after it was resolved (fixed) from 2026-11-30.'],
      ['anna', 'accepted', 'open', 'accepted', 'booking on Monday; accepted difference EUR 1.00'],
      ['anna', 'reopened', 'accepted', 'open', 'the booking was reversed'],
    ]);
  });

  it.runIf(backend === 'postgres')('two dates of one account reconciled at once open one case, not two', async () => {
    await day('parallel', '2026-11-20', { EUR: 1100n }, { EUR: 1000n });
    await day('parallel', '2026-11-21', { EUR: 1100n }, { EUR: 1000n });
    const outcomes = await Promise.all([reconcile('parallel', '2026-11-20'), reconcile('parallel', '2026-11-21')]);
    expect(outcomes.map((o) => o.exitCode)).toEqual([3, 3]);
    const cases = await casesOf('parallel');
    expect(cases).toEqual([expect.objectContaining({ occurrences: 2, openedOn: expect.any(String), lastSeenOn: '2026-11-21' })]);
  });

  it('a disappeared wallet stays a case while it is absent, and resolves when it is back and matches', async () => {
    await day('gone', '2026-11-20', { EUR: 1000n, USD: 7n }, { EUR: 1000n, USD: 7n });
    await day('gone', '2026-11-21', { EUR: 1000n }, { EUR: 1000n });
    await day('gone', '2026-11-22', { EUR: 1000n }, { EUR: 1000n });
    await day('gone', '2026-11-23', { EUR: 1000n, USD: 7n }, { EUR: 1000n, USD: 7n });
    await reconcile('gone', '2026-11-20');
    expect((await reconcile('gone', '2026-11-21')).exitCode).toBe(3);
    // On the 22nd USD is on neither side: still gone, not resolved.
    expect((await reconcile('gone', '2026-11-22')).exitCode).toBe(0);
    expect((await casesOf('gone')).map((c) => [c.currency, c.kind, c.state])).toEqual([['USD', 'disappeared', 'open']]);
    await reconcile('gone', '2026-11-23');
    expect((await casesOf('gone')).map((c) => [c.kind, c.state, c.resolution, c.resolvedOn])).toEqual([['disappeared', 'resolved', 'auto', '2026-11-23']]);
  });

  it('a day without a snapshot is an account-level case and leaves the currency cases alone', async () => {
    await day('nosnap', '2026-11-20', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('nosnap', '2026-11-20');
    expect((await reconcile('nosnap', '2026-11-21')).exitCode).toBe(3);
    const cases = await casesOf('nosnap');
    expect(cases.map((c) => [c.currency, c.kind, c.state, c.latestDifference])).toEqual([
      ['EUR', 'break', 'open', 100n],
      [null, 'no_snapshot', 'open', null],
    ]);
    await day('nosnap', '2026-11-22', { EUR: 1000n }, { EUR: 1000n });
    await reconcile('nosnap', '2026-11-22');
    expect((await casesOf('nosnap')).map((c) => [c.kind, c.state, c.resolution])).toEqual([
      ['break', 'resolved', 'auto'],
      ['no_snapshot', 'resolved', 'auto'],
    ]);
  });

  it('the database itself refuses to update, delete or truncate case events', async () => {
    await day('audit', '2026-11-20', { EUR: 1100n }, { EUR: 1000n });
    await reconcile('audit', '2026-11-20');
    const [c] = await casesOf('audit');
    const db = ctx.database.db;
    await expect(sql`update case_events set note = 'rewritten' where case_id = ${c!.id}`.execute(db)).rejects.toThrow(/case_events is append-only: UPDATE is refused/);
    await expect(sql`delete from case_events where case_id = ${c!.id}`.execute(db)).rejects.toThrow(/case_events is append-only: DELETE is refused/);
    await expect(sql`truncate case_events`.execute(db)).rejects.toThrow(/case_events is append-only: TRUNCATE is refused/);
    expect(await listEvents(db, c!.id)).toEqual([expect.objectContaining({ action: 'opened', note: '#' + c!.id + ' audit EUR break first seen on 2026-11-20: difference EUR 1.00.' })]);
  });
});
