/**
 * The gateway emulator: a local HTTP server that speaks the published interface (token,
 * balances, single balance, WordPress-style pagination), with faults on demand.
 */
import { once, setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.js';
import { FaultInjector, type FaultSettings } from './faults.js';
import { checkSandboxNumber, SANDBOX_DEFAULTS, type NumericSandboxOption } from './sandbox-options.js';
import { createRequestHandler, type SandboxState, type SandboxStats } from './sandbox-server.js';
import { TokenStore } from './issued-tokens.js';
import { generateMerchantWallets, generateWallets, isCurrencyCode, type SandboxWallet } from './wallet-fixtures.js';
import { currencyDecimals } from '../money/format-amount.js';

export { generateWallets, ISO_CURRENCIES, MAX_WALLETS, UNSAFE_BALANCE, type SandboxWallet } from './wallet-fixtures.js';
export { MAX_PER_PAGE, SANDBOX_DEFAULTS } from './sandbox-options.js';
export type { FaultSettings } from './faults.js';
export type { SandboxStats } from './sandbox-server.js';

export interface SandboxOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Default 4010; 0 picks a free port (what tests use). */
  port?: number;
  /** Default `sandbox-key`. */
  apiKey?: string;
  /** Default `sandbox-secret`. */
  apiSecret?: string;
  /** Number of wallets, default 12: ISO 4217 codes first, then synthetic AAA, AAB… */
  wallets?: number;
  /** Seed of the balances and of fault decisions, default 1. */
  seed?: number;
  /**
   * What the balances look like: `edge-cases` (default: magnitudes up to 10^18, 2^53 + 1, a zero
   * and a negative, what tests need) or `merchant` (a mid-size merchant's plausible figures, the demo's).
   */
  balances?: 'edge-cases' | 'merchant';
  /** Page size when `per_page` is omitted (the interface's `posts_per_page`), default 10, at most 100. */
  postsPerPage?: number;
  /** Access token lifetime, default 3600 seconds. */
  tokenTtlSeconds?: number;
  latencyMs?: number;
  failRate?: number;
  rateLimit?: number;
  dropRate?: number;
  /** Every request answers 503 for this long after the start (a gateway outage). */
  outageMs?: number;
  /** The clock tokens expire and outages end on; tests move it. */
  now?: () => Date;
  /**
   * The rate limit refills on `now` too, instead of real time: for a test whose client waits
   * (Retry-After, backoff) on the same virtual clock. A clock that never moves never refills.
   */
  rateLimitOnClock?: boolean;
  /** Receives one debug line per request (method, path, status); nothing is logged without it. */
  logger?: Logger;
}

export interface Sandbox {
  /** Base address, e.g. http://127.0.0.1:54321 (a loopback address when listening on all interfaces). */
  readonly url: string;
  readonly port: number;
  readonly apiKey: string;
  readonly apiSecret: string;
  /** A copy of the current wallets, sorted by currency (the listing order). */
  readonly wallets: ReadonlyArray<{ currency: string; balance: bigint }>;
  /** Counters for assertions. */
  readonly stats: Readonly<SandboxStats>;
  setFaults(f: Partial<FaultSettings>): void;
  setBalance(currency: string, balance: bigint): void;
  removeWallet(currency: string): void;
  addWallet(currency: string, balance: bigint): void;
  /** The single read of a listed wallet answers 404 (true) or reads it again (false). */
  setUnreadable(currency: string, unreadable: boolean): void;
  /** Makes every token issued so far unknown, as a gateway-side revocation would. */
  revokeTokens(): void;
  /** Stops listening and closes every connection, keep-alive ones included. */
  close(): Promise<void>;
}

function resolveOptions(options: SandboxOptions) {
  const resolved = { ...SANDBOX_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as typeof SANDBOX_DEFAULTS &
    SandboxOptions;
  const numeric: NumericSandboxOption[] = ['port', 'wallets', 'seed', 'postsPerPage', 'tokenTtlSeconds', 'latencyMs', 'failRate', 'rateLimit', 'dropRate', 'outageMs'];
  for (const name of numeric) {
    const value = resolved[name];
    if (value === undefined) continue;
    const problem = checkSandboxNumber(name, value);
    if (problem) throw new RangeError(`sandbox option ${name} ${problem} (got ${value})`);
  }
  for (const name of ['host', 'apiKey', 'apiSecret'] as const) {
    if (typeof resolved[name] !== 'string' || resolved[name] === '') throw new RangeError(`sandbox option ${name} must be a non-empty string`);
  }
  return resolved;
}

function baseUrl(host: string, port: number): string {
  // A wildcard address is where the server listens, not where a client can connect.
  const connectable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${connectable.includes(':') ? `[${connectable}]` : connectable}:${port}`;
}

function findIndex(wallets: SandboxWallet[], currency: string): number {
  return wallets.findIndex((w) => w.currency === currency);
}

/**
 * Starts the emulator and resolves once it listens.
 * @example const sandbox = await startSandbox({ port: 0, wallets: 25 }); … await sandbox.close();
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const settings = resolveOptions(options);
  const now = settings.now;
  const clockMs = now ? () => now().getTime() : undefined;
  const faults = new FaultInjector(settings.seed, settings.rateLimitOnClock ? clockMs : undefined, clockMs);
  faults.update({ latencyMs: settings.latencyMs, failRate: settings.failRate, rateLimit: settings.rateLimit, dropRate: settings.dropRate, outageMs: settings.outageMs });
  const closing = new AbortController();
  // Every request waiting out its latency listens for the close: as many as are in flight.
  setMaxListeners(0, closing.signal);
  const stats: SandboxStats = { tokensIssued: 0, requests: 0, balanceListRequests: 0, singleRequests: 0 };
  let url = '';
  const state: SandboxState = {
    apiKey: settings.apiKey,
    apiSecret: settings.apiSecret,
    postsPerPage: settings.postsPerPage,
    tokenTtlSeconds: settings.tokenTtlSeconds,
    wallets: options.balances === 'merchant' ? generateMerchantWallets(settings.wallets, settings.seed, currencyDecimals) : generateWallets(settings.wallets, settings.seed),
    unreadable: new Set(),
    tokens: new TokenStore(settings.now ?? (() => new Date())),
    faults,
    stats,
    closing: closing.signal,
    logger: settings.logger,
    fallbackHost: () => new URL(url).host,
  };

  const server = createServer(createRequestHandler(state));
  server.listen(settings.port, settings.host);
  await Promise.race([once(server, 'listening'), once(server, 'error').then(([error]) => Promise.reject(error as Error))]);
  const port = (server.address() as AddressInfo).port;
  url = baseUrl(settings.host, port);

  let closed: Promise<void> | undefined;
  const requireWallet = (currency: string): number => {
    const index = findIndex(state.wallets, currency);
    if (index < 0) throw new RangeError(`the sandbox has no wallet for ${JSON.stringify(currency)}`);
    return index;
  };

  return {
    url,
    port,
    apiKey: settings.apiKey,
    apiSecret: settings.apiSecret,
    get wallets() {
      return state.wallets.map((w) => ({ ...w }));
    },
    get stats() {
      return { ...stats };
    },
    setFaults(f: Partial<FaultSettings>) {
      faults.update(f);
    },
    setBalance(currency, balance) {
      state.wallets[requireWallet(currency)]!.balance = balance;
    },
    removeWallet(currency) {
      state.wallets.splice(requireWallet(currency), 1);
    },
    addWallet(currency, balance) {
      if (!isCurrencyCode(currency)) throw new RangeError(`currency must be three uppercase letters (got ${JSON.stringify(currency)})`);
      if (findIndex(state.wallets, currency) >= 0) throw new RangeError(`the sandbox already has a wallet for ${currency}`);
      const at = state.wallets.findIndex((w) => w.currency > currency);
      state.wallets.splice(at < 0 ? state.wallets.length : at, 0, { currency, balance });
    },
    setUnreadable(currency, unreadable) {
      requireWallet(currency);
      if (unreadable) state.unreadable.add(currency);
      else state.unreadable.delete(currency);
    },
    revokeTokens() {
      state.tokens.revokeAll();
    },
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        closing.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
