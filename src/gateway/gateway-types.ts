import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { Secret } from '../secret.js';
import type { GatewayRateLimits } from './rate-limiter.js';

/** Everything a gateway client needs; only baseUrl, apiKey and apiSecret are required. */
export interface GatewayClientOptions {
  /** https, or http only for a loopback host; anything else is a ConfigError. */
  baseUrl: string;
  apiKey: string;
  apiSecret: Secret;
  /** Default 'Bearer'; '' sends the bare token in Authorization. */
  authScheme?: string;
  /** Per attempt; default 30000. */
  timeoutMs?: number;
  /** Single-wallet reads in flight at once; default 8. */
  concurrency?: number;
  /** Default 100. */
  perPage?: number;
  /**
   * Optional cap on request starts per second, shared by every client of the same gateway
   * origin in the process (see `rateLimits`).
   */
  maxRps?: number;
  /** Where the per-origin limiters live; the process-wide ones by default (tests pass their own). */
  rateLimits?: GatewayRateLimits;
  /** Retries after the first attempt; default 4. */
  retryAttempts?: number;
  /** Longest Retry-After honoured; longer ones fail at once. Default 60000. */
  maxRetryAfterMs?: number;
  /** Backoff base; default 500. */
  retryBaseDelayMs?: number;
  /** Default 10000. */
  maxPages?: number;
  /** Tokens revoked after serving requests that are renewed before the client gives up; default 20. */
  maxTokenRenewals?: number;
  logger?: Logger;
  /** Account name used in messages and logs. */
  account?: string;
  /** Where the credentials come from, named in authentication errors. */
  credentialNames?: { apiKey: string; apiSecret: string };
  /** Once aborted: no new requests start, in-flight ones are cancelled, InterruptedError is thrown. */
  signal?: AbortSignal;
  /** Told of every request attempt: its path and status, or undefined when no answer came (for metrics). */
  onAttempt?: (path: string, status: number | undefined) => void;
  /**
   * Where the client takes time from: the waits before a retry (backoff and Retry-After), "now"
   * for a Retry-After date and for token lifetimes. Real time when absent; tests pass a FixedClock
   * so those waits take no real time. Per-attempt timeouts stay on real time, and the rate
   * limiter has its own clock (`rateLimits`).
   */
  clock?: Clock;
}

/** One wallet's balance in minor units, exact. */
export interface WalletBalance {
  currency: string;
  balance: bigint;
}

/** Progress of a listing after each page; `items` counts distinct wallets so far. */
export interface PageProgress {
  page: number;
  totalPages: number | undefined;
  items: number;
  totalItems: number | undefined;
}

/** A complete, checked listing. `pagesFetched` counts the pages of the listing returned (after a re-list, the second one). */
export interface BalanceListing {
  wallets: WalletBalance[];
  pagesFetched: number;
  totalReported: number | undefined;
  totalPagesReported: number | undefined;
}

/** One page of the balance list as the paginator yields it. */
export interface BalancePage {
  items: WalletBalance[];
  page: number;
  totalItems?: number;
  totalPages?: number;
  url: string;
}

/** A listing and the single-wallet reading of each of its wallets, in the listing's order. */
/** A listed wallet whose single read failed for good: why, in the gateway's words. */
export interface UnconfirmedWallet {
  currency: string;
  unconfirmed: string;
}

export interface CapturedBalances {
  listing: BalanceListing;
  /** Each listed wallet's single read, in listing order: its balance, or why it could not confirm it. */
  singles: Array<WalletBalance | UnconfirmedWallet>;
}

/** A typed client for every gateway endpoint. */
export interface GatewayClient {
  /** Lists every wallet following Link rel=next, with all guards; may re-list once on total mismatch. */
  listBalances(options?: { onProgress?: (p: PageProgress) => void }): Promise<BalanceListing>;
  /**
   * Lists every wallet (every guard of listBalances) and reads each one's single balance, the
   * reads of a page starting as soon as it is listed (bounded by the same concurrency). If the
   * listing fails, no new read starts, those under way are awaited and its error is thrown.
   */
  captureBalances(options?: { onListProgress?: (p: PageProgress) => void; onReadProgress?: (done: number, total: number) => void }): Promise<CapturedBalances>;
  /** Async iterator of pages (the generic paginator applied to the balance list). */
  iterateBalancePages(): AsyncIterable<BalancePage>;
  /** Reads one wallet's balance; the currency is checked before it goes into the URL. */
  getWalletBalance(currency: string): Promise<WalletBalance>;
  /** Reads many single-wallet balances with bounded concurrency; result in input order. */
  getWalletBalances(currencies: readonly string[], options?: { onProgress?: (done: number, total: number) => void }): Promise<WalletBalance[]>;
  /** Requests sent so far (every attempt counts, token requests included). */
  readonly requestCount: number;
  /** Destroys keep-alive agents. */
  close(): void;
}
