import type { Config } from '../config/index.js';
import type { AmountOrShare } from '../config/quiet-settings.js';
import { within } from '../notifications/problems/thresholds.js';
import { currencyDecimals } from '../money/format-amount.js';
import type { ReconciliationResult } from './reconciliation-result.js';

/**
 * The materiality of an account's currency: the account's own (`materiality:` in the accounts
 * file, the currency's entry else its `default`), else RECON_MATERIALITY_<CODE>, else
 * RECON_MATERIALITY; undefined when none is set.
 */
export function materialityFor(config: Pick<Config, 'quiet' | 'accounts' | 'bankAccounts'>, account: string, currency: string): AmountOrShare | undefined {
  const own = config.accounts.find((a) => a.name === account)?.materiality ?? config.bankAccounts.find((b) => b.name === account)?.materiality;
  return own?.[currency] ?? own?.default ?? config.quiet.materiality.byCurrency[currency] ?? config.quiet.materiality.default;
}

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/**
 * Tolerance says whether two balances are equal; materiality whether a difference is worth a
 * person's time. A `break` whose difference is within materiality (its amount, or its share of the
 * balance: the smaller side) is `immaterial`: recorded and counted, but no case and no alert.
 */
export function applyMateriality(config: Pick<Config, 'quiet' | 'accounts' | 'bankAccounts'>, results: readonly ReconciliationResult[]): ReconciliationResult[] {
  return results.map((r) => {
    if (r.status !== 'break' || r.currency === null || r.difference === null) return r;
    const rule = materialityFor(config, r.account, r.currency);
    if (rule === undefined) return r;
    const sides = [r.gatewayBalance, r.expectedBalance].filter((v): v is bigint => v !== null).map(abs);
    const balance = sides.length === 0 ? 0n : sides.reduce((a, b) => (a < b ? a : b));
    // Where reconciling items explain part of it, what is left unexplained is what could matter.
    return within(r.unexplained ?? r.difference, balance, rule, r.scale ?? currencyDecimals(r.currency) ?? 0) ? { ...r, status: 'immaterial' as const } : r;
  });
}
