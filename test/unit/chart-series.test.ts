import { describe, expect, it } from 'vitest';
import { renderBalanceChartSvg } from '../../src/reports/balance-chart-svg.js';
import { CHART_COLUMNS, SeriesDownsampler } from '../../src/reports/chart-series.js';
import { indentedJson } from '../../src/reports/render-json.js';
import { addDays } from '../../src/business-date/zoned-time.js';

const DAYS = 1095;
const dates = Array.from({ length: DAYS }, (_, i) => addDays('2023-11-27', i));
// A slow wave with a one-day spike up and one down, as a person must still see them in three years.
const balanceOf = (i: number): bigint => (i === 500 ? 9_000_000n : i === 800 ? -4_000_000n : BigInt(1_000_000 + 1_000 * Math.round(100 * Math.sin(i / 40))));

function downsample(skip: ReadonlySet<number> = new Set()) {
  const sampler = new SeriesDownsampler(DAYS);
  dates.forEach((date, i) => {
    if (!skip.has(i)) sampler.add(i, date, balanceOf(i));
  });
  return sampler.finish();
}

describe('downsampled chart series', () => {
  it('keeps at most the lowest and the highest balance of each column, in date order, spikes included', () => {
    const points = downsample();
    expect(points.length).toBeLessThanOrEqual(2 * CHART_COLUMNS);
    expect(points.map((p) => p.date)).toEqual([...points.map((p) => p.date)].sort());
    expect(points).toContainEqual({ date: dates[500], balance: 9_000_000n });
    expect(points).toContainEqual({ date: dates[800], balance: -4_000_000n });
    expect(points.some((p) => p.gapBefore === true)).toBe(false);
  });

  it('marks the point after a date without a balance, so the line breaks there', () => {
    const points = downsample(new Set([300]));
    const after = points.filter((p) => p.gapBefore === true);
    expect(after).toHaveLength(1);
    expect(after[0]!.date > dates[300]!).toBe(true);
    expect(points.filter((p) => p.date < dates[300]!).at(-1)!.date <= dates[299]!).toBe(true);
  });

  it('draws three years as lines through the columns, without a point per day, small, naming each line\'s lowest and highest balance', () => {
    const points = downsample(new Set([300]));
    const svg = renderBalanceChartSvg({ currency: 'EUR', dates, downsampled: true, series: [{ account: 'acme', kind: 'gateway', points }] }, { width: 460, height: 250 });
    expect(svg).not.toContain('<circle');
    // The gap splits the line in two.
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain(`<title>acme gateway, lowest -40,000.00 on ${dates[800]}, highest 90,000.00 on ${dates[500]}</title>`);
    // Each spike is drawn far from the wave (y about 130): up near the plot's top, down near its bottom.
    const ys = [...svg.matchAll(/points="([^"]*)"/g)].flatMap((m) => m[1]!.split(' ').map((xy) => Number(xy.split(',')[1])));
    expect(Math.min(...ys)).toBeLessThan(60);
    expect(Math.max(...ys)).toBeGreaterThan(170);
    expect(svg.length).toBeLessThan(20_000);
  });
});

describe('indented JSON', () => {
  it('is JSON.stringify(value, null, 2) indented, written directly', () => {
    const values = [{ a: 1, b: 'x"\n', c: null, d: undefined, e: { f: 'g', h: null }, i: {}, j: true, k: new Date(0), l: [1, 2] }, {}, { a: { b: { c: 1 } } }];
    for (const v of values) expect(indentedJson(v, '    ')).toBe(JSON.stringify(v, null, 2).replaceAll('\n', '\n    '));
  });
});
