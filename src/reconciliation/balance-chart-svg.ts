import { escapeHtml } from './escape-html.js';
import { currencyDecimals, formatAmount } from '../money/format-amount.js';
import type { CurrencyHistory } from './report-data.js';

/** The chart's size in pixels: a full-width chart by default, smaller for small multiples. */
export interface ChartSize {
  width: number;
  height: number;
}

const DEFAULT_WIDTH = 760;
const DEFAULT_HEIGHT = 300;
const MARGIN = { right: 44, top: 36, bottom: 56 };
// 11px labels are about 6.6px per character; beyond this width labels switch to scientific notation.
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

/**
 * An axis label: grouped digits, or scientific notation with `significant` digits for numbers
 * too long to fit (tooltips always keep the exact value). With `decimals`, the value is in minor
 * units and the scientific form is in major units (10^37 cents → 1.00e35).
 */
export function formatAxisAmount(value: bigint, significant?: number, decimals = 0): string {
  const sign = value < 0n ? '-' : '';
  const digits = (value < 0n ? -value : value).toString();
  if (significant === undefined || digits.length <= significant) return `${sign}${digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
  return `${sign}${digits[0]}.${digits.slice(1, significant)}e${digits.length - 1 - decimals}`;
}

/** Tick labels that fit the margin and still differ from one another, in the currency's major units. */
function tickLabels(ticks: readonly bigint[], step: bigint, currency: string, maxLabelPx: number): string[] {
  const exact = ticks.map((v) => formatAmount(v, currency).replace(/ minor units$/, ''));
  if (Math.max(...exact.map((l) => l.length)) * CHAR_PX <= maxLabelPx) return exact;
  // Enough significant digits to tell neighbouring ticks apart.
  const longest = Math.max(...ticks.map((v) => (v < 0n ? -v : v).toString().length));
  const significant = Math.max(3, longest - step.toString().length + 2);
  return ticks.map((v) => formatAxisAmount(v, significant, currencyDecimals(currency) ?? 0));
}

const px = (n: number): string => n.toFixed(1);

/**
 * A hand-written inline SVG line chart of one currency: one solid line per account's gateway
 * balance and a dashed one for its books, a point per day with its exact value as a tooltip,
 * gaps left open (a day without a snapshot is not drawn as anything).
 */
export function renderBalanceChartSvg(history: CurrencyHistory, size: ChartSize = { width: DEFAULT_WIDTH, height: DEFAULT_HEIGHT }): string {
  const { currency, dates, series } = history;
  const { width: WIDTH, height: HEIGHT } = size;
  const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
  // A small multiple leaves its labels less room; beyond it they switch to scientific notation.
  const maxLabelPx = Math.min(MAX_LABEL_PX, Math.round(WIDTH / 4));
  const values = series.flatMap((s) => s.points.map((p) => p.balance));
  if (values.length === 0 || dates.length === 0) return '';
  let min = values.reduce((a, b) => (b < a ? b : a));
  let max = values.reduce((a, b) => (b > a ? b : a));
  if (min === max) {
    min -= 1n;
    max += 1n;
  }
  const ticks = [0n, 1n, 2n, 3n, 4n].map((k) => min + ((max - min) * k) / 4n);
  const labels = tickLabels(ticks, (max - min) / 4n || 1n, currency, maxLabelPx);
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
  parts.push(`<text x="${left}" y="20" class="chart-title">${escapeHtml(currencyDecimals(currency) === null ? `${currency} (minor units)` : currency)}</text>`);

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
  dates.forEach((date, i) => {
    if (i % labelEvery !== 0 && i !== dates.length - 1) return;
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
    const label = `${s.account} ${s.kind === 'gateway' ? 'gateway' : 'books'}`;
    // Consecutive days form one polyline; a missing day starts a new one.
    let segment: string[] = [];
    let lastIndex = -2;
    const flush = () => {
      if (segment.length > 1) parts.push(`<polyline class="series ${s.kind}" data-series="${escapeHtml(label)}" fill="none" stroke="${color}" stroke-width="2"${dash} points="${segment.join(' ')}"/>`);
      segment = [];
    };
    for (const p of s.points) {
      const i = index.get(p.date);
      if (i === undefined) continue;
      if (i !== lastIndex + 1) flush();
      segment.push(`${px(x(p.date))},${px(y(p.balance))}`);
      lastIndex = i;
    }
    flush();
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
