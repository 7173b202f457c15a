import type { AccountConfig, Config } from '../config/index.js';
import { currencyDecimals } from './format-amount.js';

/**
 * The scale (number of decimals) of the gateway's integer `balance` for one account's wallet in
 * `currency`, as configured now. First match wins: the accounts file's `amountDecimals`, then
 * GATEWAY_AMOUNT_DECIMALS_<CODE>, then the unit (the account's `amountUnit`, else
 * GATEWAY_AMOUNT_UNIT): `major` is 0, `minor` is the currency's ISO 4217 decimals.
 *
 * Null when the currency is unknown to ISO 4217 (or has no minor unit there, XAG) and not
 * configured: its integer could mean anything, so it is kept raw and flagged, never guessed
 * (see unknownDecimalsAdvice for what to set).
 *
 * @example gatewayScaleFor(config, account, 'IDR') // 2; with GATEWAY_AMOUNT_DECIMALS_IDR=0 → 0
 */
export function gatewayScaleFor(config: Pick<Config, 'amounts'>, account: Pick<AccountConfig, 'name' | 'amounts'>, currency: string): number | null {
  const configured = account.amounts?.decimalsByCurrency?.[currency] ?? config.amounts.decimalsByCurrency[currency];
  if (configured !== undefined) return configured;
  if ((account.amounts?.unit ?? config.amounts.unit) === 'major') return 0;
  return currencyDecimals(currency);
}

/**
 * What to set so a currency without known decimals can be read: the sentence a flagged wallet's
 * result and its run's warning carry.
 */
export function unknownDecimalsAdvice(account: string, currency: string): string {
  return `${currency} has no known decimals (not an ISO 4217 currency with a minor unit), so its balance is kept as the gateway's raw integer and not compared: set GATEWAY_AMOUNT_DECIMALS_${currency} to the number of decimals the gateway's integer has (0 for whole units), or amountDecimals.${currency} for account "${account}" in RECON_ACCOUNTS_FILE, then reconcile the date again`;
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
