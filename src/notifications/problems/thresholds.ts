import type { AmountOrShare } from '../../config/quiet-settings.js';
import { toleranceAtDecimals } from '../../config/business-settings.js';
import { parseMajorAmount } from '../../money/format-amount.js';

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/** "10" (percent) as an exact fraction of one: 10/100; "0.1" → 1/1000. */
export function percentFraction(percent: string): { num: bigint; den: bigint } {
  const [whole, fraction = ''] = percent.split('.');
  return { num: BigInt(`${whole}${fraction}`), den: 100n * 10n ** BigInt(fraction.length) };
}

/** An amount in major units at `scale` decimals, rounded down (never allows more than was stated). */
export function minorOf(amount: string, scale: number): bigint {
  return parseMajorAmount(toleranceAtDecimals(amount, scale), scale) ?? 0n;
}

/**
 * Whether `value` lies beyond a threshold of `base` written as an amount and/or a share: beyond
 * either part. (`5.00,10%`: a move of more than 5.00 or more than 10 % of `base`.)
 */
export function beyond(value: bigint, base: bigint, rule: AmountOrShare, scale: number): boolean {
  const v = abs(value);
  if (rule.amount !== undefined && v > minorOf(rule.amount, scale)) return true;
  if (rule.percent !== undefined) {
    const { num, den } = percentFraction(rule.percent);
    if (v * den > num * abs(base)) return true;
  }
  return false;
}

/** Whether `value` lies within a threshold of `base`: within either part (materiality). */
export function within(value: bigint, base: bigint, rule: AmountOrShare, scale: number): boolean {
  const v = abs(value);
  if (rule.amount !== undefined && v <= minorOf(rule.amount, scale)) return true;
  if (rule.percent !== undefined) {
    const { num, den } = percentFraction(rule.percent);
    if (v * den <= num * abs(base)) return true;
  }
  return false;
}

/** A rule as people read it: "5.00 or 10%". */
export function describeRule(rule: AmountOrShare): string {
  return [rule.amount, rule.percent === undefined ? undefined : `${rule.percent}%`].filter((p) => p !== undefined).join(' or ');
}
