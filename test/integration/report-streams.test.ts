import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateHistory, accountNames } from '../../bench/history.js';
import { renderHtml } from '../../src/reports/render-html.js';
import { renderJson, streamJson } from '../../src/reports/render-json.js';
import { loadRangeReport } from '../../src/reports/range-report.js';
import { loadCurrencyHistories, loadReport, loadSummaryOptions, streamReportResults, streamSummary } from '../../src/reports/report-data.js';
import { streamJsonReport } from '../../src/reports/json-report.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// A reconciled history longer than a cursor's batch (3 accounts × 4 currencies × 90 days, 1,080
// results), with a break accepted by its case, a gap and a date without any result.
const SHAPE = { accounts: 3, currencies: 4, days: 90, lastDate: '2026-11-25' };
const accounts = accountNames(SHAPE);
const range = { from: '2026-08-20', to: '2026-11-30' };
const options = { accounts, today: '2026-11-26', latestClosedDate: '2026-11-25', now: new Date('2026-11-26T08:00:00Z') };
const tolerance = { default: '0.01', byCurrency: {}, bps: 0 };

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
  await generateHistory(t.handle.db, SHAPE, (d) => new Date(`${d}T23:00:00Z`), new Date('2026-11-26T08:00:00Z'));
  await sql`delete from reconciliation_results where account = ${accounts[1]!} and business_date between '2026-09-01' and '2026-09-03'`.execute(t.handle.db);
  await sql`delete from reconciliation_results where business_date = '2026-10-01'`.execute(t.handle.db);
  await sql`update reconciliation_cases set state = 'accepted' where id = (select min(id) from reconciliation_cases)`.execute(t.handle.db);
}, 300_000);

afterAll(async () => {
  await t?.drop();
});

describe(`reports read from a cursor (${backend})`, () => {
  it('reads the results of a range in bounded batches, in the order and with the cases of the whole report', async () => {
    const whole = await loadReport(t.handle.db, range, options);
    const sizes: number[] = [];
    const streamed = [];
    for await (const batch of streamReportResults(t.handle.db, range, options.today, 100)) {
      sizes.push(batch.length);
      streamed.push(...batch);
    }
    expect(Math.max(...sizes)).toBe(100);
    expect(streamed.length).toBe(whole.results.length);
    expect(streamed.map((r) => [r.businessDate, r.account, r.currency, r.case])).toEqual(whole.results.map((r) => [r.businessDate, r.account, r.currency, r.case]));
    expect(whole.results.some((r) => r.case?.state === 'accepted')).toBe(true);
  });

  it('streams the JSON of a range byte for byte as the whole report renders it, still valid JSON', async () => {
    const whole = renderJson(await loadReport(t.handle.db, range, options), { tolerance });
    const summary = await streamSummary(t.handle.db, range, options);
    let streamed = '';
    for await (const chunk of streamJson(summary, streamReportResults(t.handle.db, range, options.today, 100), { tolerance })) streamed += chunk;
    expect(streamed).toBe(whole);
    expect((JSON.parse(streamed) as { results: unknown[] }).results.length).toBeGreaterThan(1000);
  });

  it('reads of where each account-date stands only the owed ones and those of a bank statement, and still says which dates are owed', async () => {
    const owedDate = '2026-11-10';
    const rolledBack = new Error('rolled back');
    await expect(
      t.handle.db.transaction().execute(async (trx) => {
        // Books changed after the reconcile: the date's results are owed (written by the triggers).
        await sql`update expected_balances set balance = balance + 1 where account = ${accounts[0]!} and business_date = ${owedDate} and currency = (select min(currency) from expected_balances where account = ${accounts[0]!} and business_date = ${owedDate})`.execute(trx);
        const loaded = await loadSummaryOptions(trx, range, options);
        // The range holds 270 account-dates, almost all reconciled and current: only the owed are read.
        const everyDay = await sql<{ n: string }>`select count(*) as n from reconciliation_status where business_date between ${range.from} and ${range.to}`.execute(trx);
        expect(Number(everyDay.rows[0]!.n)).toBeGreaterThan(250);
        expect(loaded.states!.length).toBeLessThan(10);
        expect(loaded.states!.every((s) => s.state === 'owed' || s.source === 'bank')).toBe(true);
        expect(loaded.states).toContainEqual({ account: accounts[0]!, businessDate: owedDate, state: 'owed', source: 'gateway' });
        const summary = await streamSummary(trx, range, options);
        expect(summary.accounts.find((a) => a.account === accounts[0])!.owedDates).toContain(owedDate);
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
  });

  it('streams an empty JSON report as the whole report renders it', async () => {
    const empty = { from: '2020-01-01', to: '2020-01-05' };
    const whole = renderJson(await loadReport(t.handle.db, empty, options), { tolerance });
    let streamed = '';
    for await (const chunk of streamJson(await streamSummary(t.handle.db, empty, options), streamReportResults(t.handle.db, empty, options.today), { tolerance })) streamed += chunk;
    expect(streamed).toBe(whole);
  });

  it('renders the HTML of a long range from one pass, keeping only the exceptions, as the whole report renders it', async () => {
    const now = new Date('2026-11-26T08:00:00Z');
    const whole = renderHtml(await loadReport(t.handle.db, range, options), [], now);
    const { report, tallies } = await loadRangeReport(t.handle.db, range, { ...options, keepMatched: false });
    expect(report.results.every((r) => r.status !== 'matched')).toBe(true);
    expect(tallies.resultCount).toBeGreaterThan(report.results.length);
    expect(renderHtml(report, [], now, undefined, { streamed: tallies })).toBe(whole);
    const allRows = await loadRangeReport(t.handle.db, range, { ...options, keepMatched: true });
    expect(renderHtml(allRows.report, [], now, undefined, { allRows: true, streamed: allRows.tallies })).toBe(renderHtml(await loadReport(t.handle.db, range, options), [], now, undefined, { allRows: true }));
  });

  it('keeps every balance of a range a chart has room for, and only each column\'s lowest and highest of a longer one', async () => {
    const short = await loadCurrencyHistories(t.handle.db, range);
    expect(short.every((h) => h.downsampled === undefined)).toBe(true);
    const long = await loadCurrencyHistories(t.handle.db, { from: '2026-01-01', to: '2026-11-30' });
    expect(long.map((h) => h.currency)).toEqual(short.map((h) => h.currency));
    for (const [i, h] of long.entries()) {
      expect(h.downsampled).toBe(true);
      for (const [j, s] of h.series.entries()) {
        const every = short[i]!.series[j]!.points.map((p) => p.balance);
        const kept = s.points.map((p) => p.balance);
        expect(kept.length).toBeLessThan(every.length);
        expect(kept.reduce((a, b) => (b < a ? b : a))).toBe(every.reduce((a, b) => (b < a ? b : a)));
        expect(kept.reduce((a, b) => (b > a ? b : a))).toBe(every.reduce((a, b) => (b > a ? b : a)));
      }
    }
  });

  // Last: it deletes results. The write lands between the passes: the summary reads snapshot_runs
  // after its pass over the results, and another session holds that table until it has deleted.
  it.skipIf(backend !== 'postgres')('writes the JSON summary and its results from one snapshot while results are deleted between the passes', async () => {
    const holder = new pg.Client({ connectionString: t.childEnv.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table snapshot_runs in access exclusive mode');
      let text = '';
      const reading = (async () => {
        for await (const chunk of streamJsonReport(t.handle.db, range, options, { tolerance })) text += chunk;
      })();
      for (let waited = 0; (await holder.query(`select 1 from pg_locks where not granted and relation = 'snapshot_runs'::regclass`)).rowCount === 0; waited += 20) {
        if (waited > 30_000) throw new Error('the report never reached the summary');
        await new Promise((r) => setTimeout(r, 20));
      }
      const deleted = await holder.query(`delete from reconciliation_results where business_date = '2026-11-02'`);
      expect(deleted.rowCount).toBeGreaterThan(0);
      await holder.query('commit');
      await reading;
      const json = JSON.parse(text) as { summary: { accounts: Array<{ accepted: number; counts: Record<string, number> }> }; results: Array<{ business_date: string }> };
      const counted = json.summary.accounts.reduce((sum, a) => sum + a.accepted + Object.values(a.counts).reduce((x, y) => x + y, 0), 0);
      expect(json.results.length).toBe(counted);
      expect(json.results.some((r) => r.business_date === '2026-11-02')).toBe(true);
    } finally {
      await holder.query('rollback').catch(() => undefined);
      await holder.end();
    }
  });
});
