import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runReconcileJob } from '../../jobs/reconcile-job.js';
import type { AppContext } from '../../src/app-context.js';
import { datesBetween, FixedClock } from '../../src/clock.js';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { importBooksFile } from '../../src/books/index.js';
import { renderHtml } from '../../src/reports/render-html.js';
import { loadCurrencyHistories, loadReport } from '../../src/reports/report-data.js';
import { loadReportFacts } from '../../src/reports/report-facts.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const CHROMIUM = '/usr/bin/chromium';
const run = promisify(execFile);
const FROM = '2026-10-01';
const TO = '2026-10-31';
// 2,674,944,142,140,371.99 EUR: beyond 2^53, as in the issue.
const EUR = 267494414214037199n;

let t: TestDatabase;
let ctx: AppContext;
let dir: string;
let html: string;

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-html-'));
  ctx = createTestContext(t, { RECON_TOLERANCE_JPY: '100' }, { clock: new FixedClock(new Date('2026-11-22T06:00:00Z')) });
  const db = t.handle.db;
  // A month of five currencies: EUR grows daily, USD breaks twice, JPY and KWD stay flat and
  // matched (no chart), CHF goes missing in the books on one day.
  const books: string[] = [];
  for (const [i, date] of datesBetween(FROM, TO).entries()) {
    const at = new Date(`${date}T23:55:00Z`);
    const cutoffAt = new Date(new Date(`${date}T00:00:00Z`).getTime() + 86_400_000);
    const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate: date, startedAt: at, timing: { cutoffAt, driftSeconds: -300, endOfDay: true } });
    const balances = { EUR: EUR + BigInt(i) * 1_000_000n, USD: 500_000n + BigInt(i), JPY: 1_500_000n, KWD: 1_234_567n, CHF: 99_900n };
    await insertSnapshotRows(db, runId, 'default', at, Object.entries(balances).map(([currency, balance]) => ({ currency, balance, singleBalance: balance })));
    await markRunSucceeded(db, runId, at, { walletsReported: 5, walletsFetched: 5, pagesFetched: 1, requests: 7 });
    for (const [currency, balance] of Object.entries(balances)) {
      if (currency === 'CHF' && date === '2026-10-20') continue;
      const value = currency === 'USD' && date === '2026-10-15' ? balance - 12_345n : currency === 'USD' && date === '2026-10-16' ? balance + 50n : balance;
      books.push(`${date},${currency},${value}`);
    }
  }
  const file = path.join(dir, 'books-october.csv');
  writeFileSync(file, `business_date,currency,balance\n${books.join('\n')}\n`);
  await importBooksFile(ctx, file, { amounts: 'minor' });
  for (const date of datesBetween(FROM, TO)) await runReconcileJob(ctx, { date });
  const report = await loadReport(db, { from: FROM, to: TO }, { accounts: ['default'], today: '2026-11-22' });
  html = renderHtml(report, await loadCurrencyHistories(db, { from: FROM, to: TO }), ctx.clock.now(), await loadReportFacts(db, report.results, ctx.config, ctx.clock.now()));
}, 120_000);

afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`the HTML report of a month with breaks (${backend})`, () => {
  it('shows amounts in major units with grouping and the currency’s decimals', () => {
    expect(html).toContain('2,674,944,142,140,371.99');
    expect(html).toContain('1,500,000<'); // JPY: no decimals
    expect(html).toContain('1,234.567<'); // KWD: three
    expect(html).not.toContain('267494414214037199');
  });

  it('names accounts, dates, what was compared with what, the tolerance and when it was generated', () => {
    const facts = /<dl id="facts">([\s\S]*?)<\/dl>/.exec(html)![1]!;
    expect(facts).toContain('<dt>Accounts</dt><dd>default</dd>');
    expect(facts).toContain('2026-10-01 to 2026-10-31 (each ends at 00:00 UTC)');
    expect(facts).toMatch(/<dt>Tolerance<\/dt><dd>none \(exact match\) by default; JPY 100 \(in major units\)<\/dd>/);
    // The decimals note names the currencies shown, not a fixed example.
    expect(facts).toContain("<dt>Amounts</dt><dd>in each currency's major units (CHF 2 decimals, EUR 2 decimals, JPY no decimals, KWD 3 decimals, USD 2 decimals); differences are gateway minus books</dd>");
    expect(facts).toContain('<dt>Generated</dt><dd>2026-11-22 06:00 UTC');
    const sources = /<table id="sources">([\s\S]*?)<\/table>/.exec(html)![1]!;
    expect(sources.match(/<tr>/g)).toHaveLength(32);
    expect(sources).toMatch(/<td class="date">2026-10-15<\/td><td>default<\/td><td>run \d+ \(schedule\), 2026-10-15 23:55 UTC, end of day, 5 min before cut-off<\/td><td>books-october\.csv \(import \d+, 2026-11-22 06:00 UTC\)<\/td>/);
  });

  it('lists the breaks first, largest absolute difference first, then a table per currency with its matched rows and totals', () => {
    const breaks = /<table id="breaks">([\s\S]*?)<\/table>/.exec(html)![1]!;
    const rows = [...breaks.matchAll(/<tr class="status-(\w+)"><td class="date">([\d-]+)<\/td><td>default<\/td><td>(\w+)<\/td>/g)].map((m) => `${m[2]} ${m[3]} ${m[1]}`);
    expect(rows).toEqual(['2026-10-15 USD break', '2026-10-16 USD break', '2026-10-20 CHF missing_in_ledger']);
    expect([...html.matchAll(/<section class="currency" data-currency="(\w+)">/g)].map((m) => m[1])).toEqual(['CHF', 'EUR', 'JPY', 'KWD', 'USD']);
    const usd = /<section class="currency" data-currency="USD">([\s\S]*?)<\/section>/.exec(html)![1]!;
    expect(usd).toContain('<details class="matched-rows"><summary>29 matched results');
    expect(usd).toMatch(/<tr class="total"><th colspan="3">break: 2 results<\/th><td class="amount"><\/td><td class="amount"><\/td><td class="amount">122\.95<\/td>/);
    expect(usd).toMatch(/<tr class="total"><th colspan="3">matched: 29 results<\/th>/);
  });

  it('draws charts only for currencies that moved or broke, and has a sign-off block', () => {
    expect([...html.matchAll(/<svg class="balance-chart" data-currency="(\w+)"/g)].map((m) => m[1])).toEqual(['CHF', 'EUR', 'USD']);
    expect(html).toContain('Unchanged and matched: JPY, KWD.');
    expect(html).toMatch(/<section id="sign-off">[\s\S]*Prepared by[\s\S]*Reviewed by[\s\S]*Date/);
    expect(html).not.toMatch(/\b(src|href)=|url\(|@import|https?:/);
  });

  it.skipIf(!existsSync(CHROMIUM))('fits 1280 px in Chromium without horizontal overflow, and prints to A4 PDF', async () => {
    const profile = mkdtempSync(path.join(tmpdir(), 'wr-chromium-'));
    const file = path.join(dir, 'report.html');
    writeFileSync(file, html);
    if (process.env.KEEP_REPORT) writeFileSync(process.env.KEEP_REPORT, html);
    // A copy with a probe script (the report itself has none) that reports what Chromium laid out.
    const probe = path.join(dir, 'probe.html');
    const script = `<script>
      const width = window.innerWidth;
      const visible = document.documentElement.clientWidth;
      const wide = [...document.querySelectorAll('table, svg, section, dl, figure')].filter((e) => e.getBoundingClientRect().right > visible + 0.5).map((e) => e.id || e.className.baseVal || e.className || e.tagName);
      const cells = [...document.querySelectorAll('table')].filter((t) => t.scrollWidth > t.clientWidth + 1).length;
      document.body.setAttribute('data-probe', JSON.stringify({
        width, overflow: document.documentElement.scrollWidth > visible, wide, cells,
        charts: document.querySelectorAll('svg.balance-chart').length,
        signOff: document.querySelector('#sign-off') !== null,
        dateWraps: [...document.querySelectorAll('td.date')].filter((td) => td.getClientRects().length > 0 && td.offsetHeight > 40).length,
      }));
    </script>`;
    writeFileSync(probe, html.replace('</body>', `${script}</body>`));
    const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', `--user-data-dir=${profile}`, '--window-size=1280,900'];
    try {
      const { stdout } = await run(CHROMIUM, [...args, '--dump-dom', pathToFileURL(probe).href], { timeout: 60_000, maxBuffer: 20 * 1024 * 1024 });
      const probed = JSON.parse(/data-probe="([^"]*)"/.exec(stdout)![1]!.replaceAll('&quot;', '"')) as Record<string, unknown>;
      expect(probed).toEqual({ width: 1280, overflow: false, wide: [], cells: 0, charts: 3, signOff: true, dateWraps: 0 });

      const pdf = path.join(dir, 'report.pdf');
      await run(CHROMIUM, [...args, '--no-pdf-header-footer', `--print-to-pdf=${pdf}`, pathToFileURL(file).href], { timeout: 60_000 });
      const bytes = readFileSync(pdf).toString('latin1');
      expect(bytes.startsWith('%PDF-')).toBe(true);
      // A4 is 595 x 842 points; the currency tables and the charts each start a page.
      expect(bytes).toMatch(/\/MediaBox \[0 0 59[45](\.\d+)? 84[12](\.\d+)?\]/);
      expect((bytes.match(/\/Type \/Page\b/g) ?? []).length).toBeGreaterThanOrEqual(3);
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  }, 120_000);
});
