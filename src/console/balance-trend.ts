import type { BalancePoint } from '../db/overview.repository.js';
import { escapeHtml as e } from '../escape-html.js';

// A small line of a currency's recent closing balances, drawn as inline SVG with presentation
// attributes only (no style attribute, no script): the console's Content-Security-Policy allows it.

const WIDTH = 120;
const HEIGHT = 24;

/** Balances at one scale (the finest among them), exactly, so days captured at different scales compare. */
function atCommonScale(points: readonly BalancePoint[]): bigint[] {
  const scale = Math.max(0, ...points.map((p) => p.scale ?? 0));
  return points.map((p) => p.balance * 10n ** BigInt(scale - (p.scale ?? 0)));
}

/** An SVG sparkline of the points (oldest first), or an empty string for fewer than two. */
export function balanceTrendSvg(currency: string, points: readonly BalancePoint[]): string {
  if (points.length < 2) return '';
  const values = atCommonScale(points);
  const min = values.reduce((a, b) => (b < a ? b : a));
  const max = values.reduce((a, b) => (b > a ? b : a));
  const span = max - min;
  // Positions only need a few significant digits: the exact figures are in the table beside it.
  const y = (v: bigint) => (span === 0n ? HEIGHT / 2 : HEIGHT - 2 - Number(((v - min) * 1000n) / span) * ((HEIGHT - 4) / 1000));
  const x = (i: number) => 2 + (i * (WIDTH - 4)) / (points.length - 1);
  const path = values.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)} ${y(v).toFixed(1)}`).join(' ');
  const label = `${currency} closing balance, ${points[0]!.businessDate} to ${points[points.length - 1]!.businessDate}`;
  return `<svg class="trend" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${e(label)}"><title>${e(label)}</title><path d="${path}" fill="none" stroke="#1f6feb" stroke-width="1.5"/></svg>`;
}
