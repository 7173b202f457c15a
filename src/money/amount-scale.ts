import type { AccountConfig, Config } from '../config/index.js';
import { ConfigError } from '../errors.js';
import { currencyDecimals } from './format-amount.js';

/**
 * The scale (number of decimals) of the gateway's integer `balance` for one account's wallet in
 * `currency`, as configured now. First match wins: the accounts file's `amountDecimals`, then
 * GATEWAY_AMOUNT_DECIMALS_<CODE>, then the unit (the account's `amountUnit`, else
 * GATEWAY_AMOUNT_UNIT): `major` is 0, `minor` is the currency's ISO 4217 decimals.
 *
 * Throws a ConfigError naming the account, the currency and the variable to set when the
 * currency is unknown to ISO 4217 and not configured: its integer could mean anything.
 *
 * @example gatewayScaleFor(config, account, 'IDR') // 2; with GATEWAY_AMOUNT_DECIMALS_IDR=0 → 0
 */
export function gatewayScaleFor(config: Pick<Config, 'amounts'>, account: Pick<AccountConfig, 'name' | 'amounts'>, currency: string): number {
  const configured = account.amounts?.decimalsByCurrency?.[currency] ?? config.amounts.decimalsByCurrency[currency];
  if (configured !== undefined) return configured;
  if ((account.amounts?.unit ?? config.amounts.unit) === 'major') return 0;
  const iso = currencyDecimals(currency);
  if (iso !== null) return iso;
  throw new ConfigError(
    `Account "${account.name}" has a wallet in "${currency}", which is not an ISO 4217 currency with decimals, so its balance cannot be read safely. ` +
      `Set GATEWAY_AMOUNT_DECIMALS_${currency} to the number of decimals the gateway's integer has (0 for whole units), or amountDecimals.${currency} for this account in RECON_ACCOUNTS_FILE.`,
    [`GATEWAY_AMOUNT_DECIMALS_${currency} is not set (wallet ${currency} of account "${account.name}")`],
  );
}

/**
 * The scale amounts of `currency` are compared and reported in: its ISO 4217 decimals, else the
 * decimals configured for it (an unknown code), else null (stored amounts keep their own scale).
 * Gateway amounts never have more decimals than this (config refuses it), so every stored amount
 * reaches it by multiplying, exactly.
 */
export function referenceScaleFor(config: Pick<Config, 'amounts'>, account: Pick<AccountConfig, 'amounts'> | undefined, currency: string): number | null {
  return currencyDecimals(currency) ?? account?.amounts?.decimalsByCurrency?.[currency] ?? config.amounts.decimalsByCurrency[currency] ?? null;
}
