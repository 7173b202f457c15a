import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSnapshotRows } from '../../src/db/balance-snapshot.repository.js';
import type { Database } from '../../src/db/database.types.js';
import { insertRunningRun, markRunSucceeded } from '../../src/db/snapshot-run.repository.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// These runs stand for captures of the day outside its window: among them the latest is the day's snapshot.
const INTRADAY = { cutoffAt: new Date('2026-12-01T00:00:00Z'), driftSeconds: -86_400, endOfDay: false };

const CHROMIUM = '/usr/bin/chromium';
const run = promisify(execFile);

let t: TestDatabase;
let dir: string;
let env: Record<string, string>;

const withDb = <T>(fn: (db: Kysely<Database>) => Promise<T>) => withDatabase(t, fn);
const cli = (...args: string[]) => runCliInProcess(args, env);

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // Embedded: served by this process, so each command reaches it through its socket rather than opening the folder.
  await serveToCommands(t);
  dir = mkdtempSync(path.join(tmpdir(), 'wr-report-'));
  env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent' };

  // Five days of EUR and USD; no snapshot on the 18th; USD breaks on the 19th.
  const days: Array<[string, bigint, bigint] | [string]> = [
    ['2026-11-16', 9_007_199_254_740_000n, 1_000n],
    ['2026-11-17', 9_007_199_254_740_993n, 1_500n],
    ['2026-11-18'],
    ['2026-11-19', 9_007_199_254_741_100n, 1_200n],
    ['2026-11-20', 9_007_199_254_740_500n, 2_000n],
  ];
  await withDb(async (db) => {
    for (const [date, eur, usd] of days) {
      if (eur === undefined || usd === undefined) continue;
      const at = new Date(`${date}T23:55:00Z`);
      const runId = await insertRunningRun(db, { account: 'default', environment: 'sandbox', trigger: 'schedule', businessDate: date, startedAt: at, timing: INTRADAY });
      await insertSnapshotRows(db, runId, 'default', at, [
        { currency: 'EUR', balance: eur, singleBalance: eur },
        { currency: 'USD', balance: usd, singleBalance: usd },
      ]);
      await markRunSucceeded(db, runId, at, { walletsReported: 2, walletsFetched: 2, pagesFetched: 1, requests: 3 });
    }
  });
  const books = days
    .filter((d) => d.length === 3)
    .flatMap(([date, eur, usd]) => [`${date},EUR,${eur}`, `${date},USD,${date === '2026-11-19' ? usd! + 50n : usd}`]);
  writeFileSync(path.join(dir, 'books.csv'), `business_date,currency,balance\n${books.join('\n')}\n`);
  expect((await cli('ledger', 'import', '--amounts', 'minor', path.join(dir, 'books.csv'))).code).toBe(0);
  for (const [date] of days) await cli('reconcile', '--date', date);
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`wallet-recon report (${backend})`, () => {
  it('prints the table by default: summary per account, then every result that did not match', async () => {
    const result = await cli('report', '--from', '2026-11-16', '--to', '2026-11-20');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Reconciliation 2026-11-16 to 2026-11-20\n/);
    expect(result.stdout).toMatch(/default\s+7\s+1\s+0\s+0\s+0\s+1/);
    expect(result.stdout).toMatch(/2026-11-18\s+default\s+no_snapshot/);
    // Amounts in major units with the currency's decimals, grouped.
    expect(result.stdout).toMatch(/2026-11-19\s+default\s+USD\s+break\s+12\.00\s+12\.00\s+12\.50\s+-0\.50/);
  });

  it('writes CSV with one header and one line per result, to a 0600 file replaced atomically', async () => {
    const out = path.join(dir, 'results.csv');
    writeFileSync(out, 'old content', { mode: 0o644 });
    const result = await cli('report', '--from', '2026-11-16', '--to', '2026-11-20', '--format', 'csv', '--out', out);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Wrote the csv report \(9 results\) to /);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const lines = readFileSync(out, 'utf8').split('\r\n');
    expect(lines[0]).toBe(
      'account,business_date,currency,gateway_balance,single_balance,expected_balance,previous_balance,movement,difference,status,run_id,computed_at,' +
        'currency_decimals,gateway_balance_formatted,single_balance_formatted,expected_balance_formatted,previous_balance_formatted,movement_formatted,difference_formatted,case_id,case_state,case_age_days,source,items_total,unexplained,items_total_formatted,unexplained_formatted',
    );
    expect(lines).toHaveLength(11);
    expect(lines[3]).toMatch(/^default,2026-11-17,EUR,9007199254740993,9007199254740993,9007199254740993,9007199254740000,993,0,matched,\d+,/);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('with RECON_LOCALE=de-DE writes CSV a German spreadsheet reads as numbers (";" between fields, "," as decimal mark, no grouping), the table in German, JSON unchanged', async () => {
    const german = (...args: string[]) => runCliInProcess(args, { ...env, RECON_LOCALE: 'de-DE' });
    const csv = await german('report', '--from', '2026-11-16', '--to', '2026-11-20', '--format', 'csv');
    expect(csv.code, csv.stderr).toBe(0);
    const lines = csv.stdout.trimEnd().split('\r\n');
    const header = lines[0]!.split(';');
    expect(header.slice(0, 4)).toEqual(['account', 'business_date', 'currency', 'gateway_balance']);
    const row = lines.map((l) => l.split(';')).find((cells) => cells[1] === '2026-11-17' && cells[2] === 'EUR')!;
    const cell = (name: string) => row[header.indexOf(name)];
    expect(cell('gateway_balance')).toBe('9007199254740993');
    expect(cell('gateway_balance_formatted')).toBe('90071992547409,93');
    expect(cell('movement_formatted')).toBe('9,93');
    // Every formatted amount is a plain German number: digits, at most one comma, no grouping.
    const formatted = header.flatMap((h, i) => (h.endsWith('_formatted') ? [i] : []));
    for (const cells of lines.slice(1).map((l) => l.split(';'))) for (const i of formatted) expect(cells[i]).toMatch(/^(-?\d+(,\d+)?)?$/);

    const table = await german('report', '--date', '2026-11-19');
    expect(table.stdout).toMatch(/ 12,00 +12,00 +12,50 +-0,50 /);
    const json = await german('report', '--date', '2026-11-19', '--format', 'json');
    expect(json.stdout).toBe((await cli('report', '--date', '2026-11-19', '--format', 'json')).stdout);
  });

  it('prints JSON with amounts as strings, limited to one account when asked', async () => {
    const result = await cli('report', '--date', '2026-11-19', '--format', 'json', '--account', 'default');
    const parsed = JSON.parse(result.stdout) as { summary: { account: string; total: Record<string, number> }; results: Array<{ gateway_balance: string }> };
    expect(parsed.summary).toMatchObject({ account: 'default', total: { matched: 1, break: 1 } });
    expect(parsed.results.map((r) => r.gateway_balance)).toEqual(['9007199254741100', '1200']);
  });

  it('lists the dates never reconciled instead of calling the range clean, and gives them to JSON with exit code 3', async () => {
    // The 19th and 20th were reconciled; nothing was on the 21st and 22nd (days before today).
    const table = await cli('report', '--from', '2026-11-19', '--to', '2026-11-22');
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('not reconciled: default 2026-11-21 to 2026-11-22');
    expect(table.stdout).not.toContain('Every result matched.');

    const json = await cli('report', '--from', '2026-11-19', '--to', '2026-11-22', '--format', 'json');
    const parsed = JSON.parse(json.stdout) as { summary: { exitCode: number; unreconciledDates: string[]; accounts: Array<{ account: string; unreconciledDates: string[] }> } };
    expect(parsed.summary).toMatchObject({ exitCode: 3, unreconciledDates: ['2026-11-21', '2026-11-22'], accounts: [{ account: 'default', unreconciledDates: ['2026-11-21', '2026-11-22'] }] });

    const html = await cli('report', '--from', '2026-11-19', '--to', '2026-11-22', '--format', 'html');
    expect(html.stdout).toMatch(/<ul id="unreconciled" class="warn">\n<li>not reconciled: default 2026-11-21 to 2026-11-22<\/li>/);

    const clean = JSON.parse((await cli('report', '--from', '2026-11-16', '--to', '2026-11-17', '--format', 'json')).stdout) as { summary: { exitCode: number; unreconciledDates: string[] } };
    expect(clean.summary).toMatchObject({ exitCode: 0, unreconciledDates: [] });
  });

  it("does not count the dates before the account's first capture or books as not reconciled", async () => {
    const json = await cli('report', '--from', '2020-01-01', '--to', '2026-11-17', '--format', 'json');
    const parsed = JSON.parse(json.stdout) as { summary: { exitCode: number; unreconciledDates: string[] } };
    expect(parsed.summary).toMatchObject({ exitCode: 0, unreconciledDates: [] });
  });

  it('refuses contradictory or unknown flags with exit code 2', async () => {
    const both = await cli('report', '--date', '2026-11-19', '--from', '2026-11-01', '--to', '2026-11-30');
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--date and --from contradict each other/);
    const format = await cli('report', '--date', '2026-11-19', '--format', 'xml');
    expect(format.code).toBe(2);
    expect(format.stderr).toMatch(/Allowed choices are table, csv, json, html/);
  });

  it('says where it could not write', async () => {
    const result = await cli('report', '--date', '2026-11-19', '--out', path.join(dir, 'no-such-folder', 'r.txt'));
    expect(result.code).toBe(1);
    const target = path.join(dir, 'no-such-folder', 'r.txt');
    // The target the operator named, never the temporary file written beside it.
    expect(result.stderr).toContain(
      `Could not write the table report: ${target} cannot be written: the folder ${path.dirname(target)} does not exist (ENOENT); create it or choose another path.`,
    );
    expect(result.stderr).not.toMatch(/\.tmp/);
  });

  describe('html', () => {
    let htmlFile: string;
    beforeAll(async () => {
      htmlFile = path.join(dir, 'report.html');
      const result = await cli('report', '--from', '2026-11-16', '--to', '2026-11-20', '--format', 'html', '--out', htmlFile);
      expect(result.code, result.stderr).toBe(0);
    });

    it('is one self-contained file with a chart per currency and the breaks table', () => {
      const html = readFileSync(htmlFile, 'utf8');
      expect(statSync(htmlFile).mode & 0o777).toBe(0o600);
      expect(html).not.toMatch(/\b(src|href)=|url\(|@import|https?:/);
      expect(html.match(/<svg class="balance-chart"/g)).toHaveLength(2);
      // The 18th has no snapshot, so each gateway line is two polylines, not one through a gap.
      expect(html.match(/<polyline class="series gateway"/g)).toHaveLength(4);
      expect(html).toContain('<title>default gateway 2026-11-17: 90,071,992,547,409.93</title>');
    });

    it('lists under "What was compared" the date that had neither snapshot nor books, and each date never reconciled', async () => {
      const sources = /<table id="sources">([\s\S]*?)<\/table>/.exec(readFileSync(htmlFile, 'utf8'))![1]!;
      expect(sources.match(/<td class="date">[\d-]+<\/td>/g)).toEqual(['2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'].map((d) => `<td class="date">${d}</td>`));
      expect(sources).toContain('<tr><td class="date">2026-11-18</td><td>default</td><td>no snapshot</td><td>no books</td></tr>');
      const later = await cli('report', '--from', '2026-11-20', '--to', '2026-11-21', '--format', 'html');
      expect(later.stdout).toContain('<tr><td class="date">2026-11-21</td><td>default</td><td colspan="2">not reconciled</td></tr>');
    });

    it.skipIf(!existsSync(CHROMIUM))('renders in headless Chromium with the chart and the table in the DOM', async () => {
      // A copy with a probe script: the report itself has no script. The probe asks the
      // browser what it laid out: real SVG elements with a size, table rows.
      const probe = path.join(dir, 'probe.html');
      const script = `<script>
        const chart = document.querySelector('svg.balance-chart[data-currency="USD"]');
        const line = chart && chart.querySelector('polyline');
        const box = line ? line.getBBox() : { width: 0, height: 0 };
        document.body.setAttribute('data-probe', JSON.stringify({
          svg: chart instanceof SVGSVGElement,
          polyline: line instanceof SVGPolylineElement,
          width: box.width, height: box.height,
          breakRows: document.querySelectorAll('#breaks tbody tr').length,
          summaryRows: document.querySelectorAll('#summary tbody tr').length,
        }));
      </script>`;
      writeFileSync(probe, readFileSync(htmlFile, 'utf8').replace('</body>', `${script}</body>`));
      const profile = mkdtempSync(path.join(tmpdir(), 'wr-chromium-'));
      try {
        const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', `--user-data-dir=${profile}`];
        const { stdout } = await run(CHROMIUM, [...args, '--dump-dom', pathToFileURL(probe).href], { timeout: 60_000, maxBuffer: 20 * 1024 * 1024 });
        const probeJson = /data-probe="([^"]*)"/.exec(stdout)?.[1]?.replaceAll('&quot;', '"');
        expect(JSON.parse(probeJson ?? 'null')).toMatchObject({ svg: true, polyline: true, breakRows: 2, summaryRows: 1 });
        const { width, height } = JSON.parse(probeJson!) as { width: number; height: number };
        expect(width).toBeGreaterThan(50);
        expect(height).toBeGreaterThan(10);
        expect(stdout).toMatch(/<td class="date">2026-11-19<\/td><td>default<\/td><td>USD<\/td><td class="nowrap">break<\/td>/);

        const png = path.join(dir, 'report.png');
        await run(CHROMIUM, [...args, `--screenshot=${png}`, '--window-size=1000,1600', pathToFileURL(htmlFile).href], { timeout: 60_000 });
        expect(statSync(png).size).toBeGreaterThan(10_000);
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    }, 120_000);
  });
});
