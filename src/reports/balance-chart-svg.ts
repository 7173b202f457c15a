import { escapeHtml } from '../escape-html.js';
import { currencyDecimals, formatAmount, groupDigits, toMajorUnits } from '../money/format-amount.js';
import type { ChartPoint } from './chart-series.js';
import type { CurrencyHistory } from './report-data.js';

/** The chart's size in pixels: a full-width chart by default, smaller for small multiples. */
export interface ChartSize {
  width: number;
  height: number;
}

const DEFAULT_WIDTH = 760;
const DEFAULT_HEIGHT = 300;
const MARGIN = { right: 44, top: 36, bottom: 56 };
// 11px labels are about 6.6px per character; beyond this width labels are given in thousands, millions…
const CHAR_PX = 6.6;
const MAX_LABEL_PX = 210;
// A legend entry: a 24px line sample and a 6px space before its label; entries 16px apart, rows 16px high.
const LEGEND_SWATCH = 30;
const LEGEND_GAP = 16;
const LEGEND_ROW = 16;
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
// Fractions are taken in BigInt with this many steps, then turned into a float in [0, 1]:
// a 38-digit balance never passes through a JS number on its way to a pixel.
const STEPS = 1_000_000n;

/** Where a balance falls between min and max, as a number from 0 to 1, computed exactly in BigInt. */
export function scaleBigInt(value: bigint, min: bigint, max: bigint): number {
  if (max === min) return 0.5;
  return Number(((value - min) * STEPS) / (max - min)) / Number(STEPS);
}

// Names of powers of 1,000, for an axis whose labels would not fit otherwise ("in millions").
const THOUSANDS = ['', 'thousands', 'millions', 'billions', 'trillions', 'quadrillions', 'quintillions', 'sextillions', 'septillions', 'octillions', 'nonillions', 'decillions', 'undecillions'];

const floorDiv = (a: bigint, b: bigint): bigint => (a % b === 0n || a >= 0n ? a / b : a / b - 1n);
const ceilDiv = (a: bigint, b: bigint): bigint => -floorDiv(-a, b);

/**
 * Round axis ticks covering [min, max] (minor units), exactly in BigInt: a step of 1, 2 or 5
 * times a power of ten, never finer than the currency's smallest unit, about four intervals.
 */
export function niceTicks(min: bigint, max: bigint): bigint[] {
  const rough = (max - min) / 4n || 1n;
  const steps = function* () {
    for (let magnitude = 10n ** BigInt(rough.toString().length - 1); ; magnitude *= 10n) yield* [1n, 2n, 5n].map((m) => m * magnitude);
  };
  // The first 1-2-5 step at least a quarter of the range; flooring and ceiling to whole steps
  // may add an interval, so a step giving more than six ticks gives way to the next one.
  for (const step of steps()) {
    if (step < rough) continue;
    const ticks: bigint[] = [];
    for (let v = floorDiv(min, step) * step; v <= ceilDiv(max, step) * step; v += step) ticks.push(v);
    if (ticks.length <= 6) return ticks;
  }
  return [min, max];
}

/**
 * Axis labels in the currency's major units, grouped ("2,674,944,142,140,000"), never in
 * scientific notation. Decimals are shown only when the step needs them; labels too wide for
 * the margin are given in thousands, millions… (`unit` then names it for the chart's title).
 */
export function axisLabels(ticks: readonly bigint[], decimals: number, maxLabelPx: number): { labels: string[]; unit: string } {
  const step = ticks.length > 1 ? ticks[1]! - ticks[0]! : 1n;
  const one = 10n ** BigInt(decimals);
  const whole = step % one === 0n;
  const asMajor = (v: bigint, divisor: bigint, places: number) => {
    const scaled = v / divisor;
    if (places === 0) return groupDigits(scaled);
    const text = toMajorUnits(scaled, places);
    const [int, fraction] = text.replace('-', '').split('.');
    return `${v < 0n ? '-' : ''}${groupDigits(BigInt(int!))}.${fraction}`;
  };
  const plain = ticks.map((v) => (whole ? asMajor(v, one, 0) : asMajor(v, 1n, decimals)));
  if (!whole || Math.max(...plain.map((l) => l.length)) * CHAR_PX <= maxLabelPx) return { labels: plain, unit: '' };
  // In powers of 1,000 of the major unit that divide the step, so every label stays exact.
  let k = 0;
  let labels = plain;
  while (k + 1 < THOUSANDS.length && (step / one) % 1000n ** BigInt(k + 1) === 0n && Math.max(...labels.map((l) => l.length)) * CHAR_PX > maxLabelPx) {
    k++;
    const divisor = one * 1000n ** BigInt(k);
    labels = ticks.map((v) => asMajor(v, divisor, 0));
  }
  return { labels, unit: THOUSANDS[k]! };
}

/**
 * The dates that get an x-axis label: every `every`-th from the first, and the last; when the
 * last is closer than `every` to the label before it, that one gives way, so labels never overlap.
 */
export function labelledDateIndexes(count: number, every: number): number[] {
  const indexes: number[] = [];
  for (let i = 0; i < count; i += every) indexes.push(i);
  const last = count - 1;
  if (indexes.at(-1) !== last) {
    if (indexes.length > 1 && last - indexes.at(-1)! < every) indexes.pop();
    indexes.push(last);
  }
  return indexes;
}

const px = (n: number): string => n.toFixed(1);

/** "acme gateway, lowest 1,200.00 on 2026-03-02, highest 5,000.00 on 2026-07-01": what a line without points says on hover. */
function seriesRangeTitle(label: string, points: readonly ChartPoint[], currency: string): string {
  if (points.length === 0) return label;
  let low = points[0]!;
  let high = points[0]!;
  for (const p of points) {
    if (p.balance < low.balance) low = p;
    if (p.balance > high.balance) high = p;
  }
  return `${label}, lowest ${formatAmount(low.balance, currency)} on ${low.date}, highest ${formatAmount(high.balance, currency)} on ${high.date}`;
}

/**
 * A hand-written inline SVG line chart of one currency: one solid line per account's gateway
 * (or, for a bank account, its statements') balance and a dashed one for its books, a point per day with its exact value as a tooltip,
 * gaps left open (a day without a snapshot is not drawn as anything). A downsampled history
 * (more dates than columns) is drawn through each column's lowest and highest balance, without
 * points: each line's tooltip gives its lowest and highest balance and their dates.
 */
export function renderBalanceChartSvg(history: CurrencyHistory, size: ChartSize = { width: DEFAULT_WIDTH, height: DEFAULT_HEIGHT }): string {
  const { currency, dates, series } = history;
  const { width: WIDTH, height: HEIGHT } = size;
  const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
  // A small multiple leaves its labels less room; beyond it they are given in thousands, millions…
  const maxLabelPx = Math.min(MAX_LABEL_PX, Math.round(WIDTH / 4));
  const values = series.flatMap((s) => s.points.map((p) => p.balance));
  if (values.length === 0 || dates.length === 0) return '';
  let low = values.reduce((a, b) => (b < a ? b : a));
  let high = values.reduce((a, b) => (b > a ? b : a));
  if (low === high) {
    low -= 1n;
    high += 1n;
  }
  const decimals = currencyDecimals(currency);
  const ticks = niceTicks(low, high);
  const min = ticks[0]!;
  const max = ticks.at(-1)!;
  const { labels, unit } = axisLabels(ticks, decimals ?? 0, maxLabelPx);
  // The left margin grows with the longest label so big balances are not cut off.
  const left = Math.ceil(Math.max(60, ...labels.map((l) => l.length * CHAR_PX + 16)));
  const plotW = WIDTH - left - MARGIN.right;
  const index = new Map(dates.map((d, i) => [d, i]));
  const x = (date: string) => left + (dates.length === 1 ? plotW / 2 : (plotW * index.get(date)!) / (dates.length - 1));
  const y = (v: bigint) => MARGIN.top + PLOT_H * (1 - scaleBigInt(v, min, max));

  const parts: string[] = [];
  const title = `${currency} balance history, ${dates[0]} to ${dates[dates.length - 1]}`;
  // Filled in last, when the legend knows how many rows it needs.
  parts.push('');
  parts.push(`<title>${escapeHtml(title)}</title>`);
  parts.push(`<text x="${left}" y="20" class="chart-title">${escapeHtml(`${currency}${decimals === null ? ' (minor units)' : ''}${unit === '' ? '' : ` (in ${unit})`}`)}</text>`);

  // Axes, with five horizontal grid lines labelled from the exact BigInt range.
  const bottom = MARGIN.top + PLOT_H;
  parts.push(`<line class="axis" x1="${left}" y1="${MARGIN.top}" x2="${left}" y2="${bottom}" stroke="#333"/>`);
  parts.push(`<line class="axis" x1="${left}" y1="${bottom}" x2="${left + plotW}" y2="${bottom}" stroke="#333"/>`);
  ticks.forEach((v, k) => {
    const ty = px(y(v));
    parts.push(`<line x1="${left}" y1="${ty}" x2="${left + plotW}" y2="${ty}" stroke="#ddd"/>`);
    parts.push(`<text class="y-label" x="${left - 8}" y="${ty}" text-anchor="end" dominant-baseline="middle">${escapeHtml(labels[k]!)}</text>`);
  });
  const labelEvery = Math.max(1, Math.ceil(dates.length / Math.max(2, Math.floor((WIDTH - left) / 110))));
  labelledDateIndexes(dates.length, labelEvery).forEach((i) => {
    const date = dates[i]!;
    const tx = px(x(date));
    parts.push(`<line x1="${tx}" y1="${bottom}" x2="${tx}" y2="${bottom + 5}" stroke="#333"/>`);
    parts.push(`<text class="x-label" x="${tx}" y="${bottom + 20}" text-anchor="middle">${escapeHtml(date)}</text>`);
  });

  const accounts = [...new Set(series.map((s) => s.account))];
  // Points go on top of every line, the gateway's last so a matching book never hides it.
  const bookPoints: string[] = [];
  const gatewayPoints: string[] = [];
  series.forEach((s) => {
    const color = COLORS[accounts.indexOf(s.account) % COLORS.length]!;
    const dash = s.kind === 'books' ? ' stroke-dasharray="6 4"' : '';
    const label = `${s.account} ${s.kind}`;
    // A downsampled line has no point per day to hover: it names its lowest and highest balance.
    const lineTitle = history.downsampled === true ? seriesRangeTitle(label, s.points, currency) : '';
    // Consecutive days form one polyline; a missing day starts a new one.
    let segment: string[] = [];
    let lastIndex = -2;
    const flush = () => {
      if (segment.length > 1) {
        const attributes = `class="series ${s.kind}" data-series="${escapeHtml(label)}" fill="none" stroke="${color}" stroke-width="2"${dash} points="${segment.join(' ')}"`;
        parts.push(lineTitle === '' ? `<polyline ${attributes}/>` : `<polyline ${attributes}><title>${escapeHtml(lineTitle)}</title></polyline>`);
      }
      segment = [];
    };
    for (const p of s.points) {
      const i = index.get(p.date);
      if (i === undefined) continue;
      // Downsampled points are a column apart: the gap is marked on the point after it.
      if (history.downsampled === true ? p.gapBefore === true : i !== lastIndex + 1) flush();
      segment.push(`${px(x(p.date))},${px(y(p.balance))}`);
      lastIndex = i;
    }
    flush();
    // A point per day with its tooltip, unless the days are more than the chart has room for.
    if (history.downsampled === true) return;
    for (const p of s.points) {
      if (!index.has(p.date)) continue;
      (s.kind === 'books' ? bookPoints : gatewayPoints).push(
        `<circle cx="${px(x(p.date))}" cy="${px(y(p.balance))}" r="${s.kind === 'books' ? 2.5 : 3.5}" fill="${s.kind === 'books' ? '#fff' : color}" stroke="${color}"><title>${escapeHtml(`${label} ${p.date}: ${formatAmount(p.balance, currency)}`)}</title></circle>`,
      );
    }
  });

  parts.push(...bookPoints, ...gatewayPoints);

  // Legend under the x labels, wrapped onto as many rows as the accounts need; the SVG grows
  // downwards by a row height for each extra row (the plot keeps its size).
  const legendRight = WIDTH - 8;
  const maxChars = Math.max(4, Math.floor((legendRight - left - LEGEND_SWATCH) / CHAR_PX));
  let lx = left;
  let row = 0;
  const legend: string[] = [];
  series.forEach((s) => {
    const color = COLORS[accounts.indexOf(s.account) % COLORS.length]!;
    const full = `${s.account} ${s.kind}`;
    // An account name too long for a whole row is shortened; the tooltips keep the full name.
    const label = full.length <= maxChars ? full : `${full.slice(0, maxChars - 1)}…`;
    const width = LEGEND_SWATCH + Math.ceil(label.length * CHAR_PX);
    if (lx > left && lx + width > legendRight) {
      row++;
      lx = left;
    }
    const ly = HEIGHT - 12 + row * LEGEND_ROW;
    const dash = s.kind === 'books' ? ' stroke-dasharray="6 4"' : '';
    legend.push(`<line x1="${lx}" y1="${ly - 4}" x2="${lx + 24}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${dash}/>`);
    legend.push(`<text class="legend" x="${lx + LEGEND_SWATCH}" y="${ly}">${escapeHtml(label)}</text>`);
    lx += width + LEGEND_GAP;
  });
  parts.push(...legend);
  parts.push('</svg>');
  const height = HEIGHT + row * LEGEND_ROW;
  parts[0] = `<svg class="balance-chart" data-currency="${escapeHtml(currency)}" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">`;
  return parts.join('\n');
}
