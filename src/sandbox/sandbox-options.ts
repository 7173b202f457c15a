import { checkFaultSetting, type FaultSettings } from './faults.js';
import { MAX_WALLETS } from './wallet-fixtures.js';

/**
 * Defaults of the emulator, shared by `startSandbox` and `wallet-recon sandbox`. The credentials
 * are public on purpose: the sandbox guards nothing, it only checks that clients send them.
 */
export const SANDBOX_DEFAULTS: Readonly<{
  host: string;
  port: number;
  apiKey: string;
  apiSecret: string;
  wallets: number;
  seed: number;
  postsPerPage: number;
  tokenTtlSeconds: number;
}> = Object.freeze({
  host: '127.0.0.1',
  port: 4010,
  apiKey: 'sandbox-key',
  apiSecret: 'sandbox-secret',
  wallets: 12,
  seed: 1,
  postsPerPage: 10,
  tokenTtlSeconds: 3600,
});

/** The largest `per_page` accepted; the interface leaves it unstated, WordPress (whose convention it follows) uses 100. */
export const MAX_PER_PAGE = 100;
export const MAX_TOKEN_TTL_SECONDS = 365 * 24 * 3600;
export const MAX_SEED = 0xffff_ffff;

export type NumericSandboxOption = 'port' | 'wallets' | 'seed' | 'postsPerPage' | 'tokenTtlSeconds' | keyof FaultSettings;

const integerIn = (min: number, max: number, unit = '') => (value: number) =>
  Number.isInteger(value) && value >= min && value <= max ? undefined : `must be an integer from ${min} to ${max}${unit}`;

const checks: Record<Exclude<NumericSandboxOption, keyof FaultSettings>, (value: number) => string | undefined> = {
  port: (value) => integerIn(0, 65_535)(value) && 'must be an integer from 0 (any free port) to 65535',
  wallets: integerIn(0, MAX_WALLETS),
  seed: integerIn(0, MAX_SEED),
  postsPerPage: integerIn(1, MAX_PER_PAGE),
  tokenTtlSeconds: integerIn(1, MAX_TOKEN_TTL_SECONDS, ' seconds'),
};

/** The problem with a numeric option, phrased to follow its name ("must be …"); undefined when valid. */
export function checkSandboxNumber(name: NumericSandboxOption, value: number): string | undefined {
  if (name === 'latencyMs' || name === 'failRate' || name === 'rateLimit' || name === 'dropRate' || name === 'outageMs') return checkFaultSetting(name, value);
  return checks[name](value);
}
