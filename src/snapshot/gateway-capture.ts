import type { AccountConfig, Config } from '../config/index.js';
import type { Clock } from '../clock.js';
import type { CapturedBalances, GatewayClient, PageProgress } from '../gateway/index.js';
import type { Logger } from '../logger.js';
import type { MetricsRecorder } from '../metrics/metrics.js';
import { createGatewayForAccount } from './gateway-for-account.js';

export interface CaptureProgress {
  account: string;
  /** Signing in (the token request), listing pages, reading each wallet's balance, writing the snapshot. */
  phase: 'signing-in' | 'listing' | 'reading' | 'writing';
  page?: PageProgress;
  walletsRead?: number;
  walletsTotal?: number;
}

/**
 * One account's gateway reads under way: the token, the listing, and each page's single reads.
 * It only reads from the gateway; what it brings back is written by the run that claims it, and
 * only if that run holds the account's lock (see captureAccount).
 */
export interface GatewayCapture {
  readonly account: string;
  /** "Now" when it began: the run's start, and what decides a manual run's business date. */
  readonly startedAt: Date;
  /** Real time when it began (Date.now()), for the run's duration: the clock above may be a test's. */
  readonly startedMs: number;
  /** Settles once: the balances, or why not (a gateway fault, a bad listing, an abort). */
  readonly balances: Promise<CapturedBalances>;
  /** Aborted on a stop signal, a lost lock, or a run that does not go ahead. */
  readonly signal: AbortSignal;
  /** Requests sent so far (the token's included). */
  readonly requestCount: number;
  abort(reason: unknown): void;
  /** Stops listening to the stop signal and frees the connections; safe to call twice. */
  close(): void;
}

export interface GatewayCaptureOptions {
  clock: Clock;
  logger: Logger;
  /** A stop request (SIGINT, SIGTERM): the capture aborts with it. */
  signal?: AbortSignal;
  onProgress?: (progress: CaptureProgress) => void;
  metrics?: Pick<MetricsRecorder, 'recordGatewayRequest'>;
  /** Tests inject a client; otherwise one is built from the account's configuration. */
  createGateway?: (account: AccountConfig, signal: AbortSignal) => GatewayClient;
}

/** Starts capturing one account's balances from the gateway now; never throws (a failure is in `balances`). */
export function startGatewayCapture(config: Config, account: AccountConfig, options: GatewayCaptureOptions): GatewayCapture {
  const controller = new AbortController();
  const stop = options.signal;
  const onStop = () => controller.abort(stop!.reason);
  if (stop?.aborted) controller.abort(stop.reason);
  else stop?.addEventListener('abort', onStop, { once: true });
  const startedAt = options.clock.now();
  const startedMs = Date.now();
  const progress = (p: Omit<CaptureProgress, 'account'>) => options.onProgress?.({ account: account.name, ...p });

  let gateway: GatewayClient | undefined;
  let balances: Promise<CapturedBalances>;
  try {
    gateway = options.createGateway
      ? options.createGateway(account, controller.signal)
      : createGatewayForAccount(config, account, options.logger, controller.signal, options.metrics);
    // The token request goes out with the first listing request: until a page arrives, we are signing in.
    progress({ phase: 'signing-in' });
    balances = gateway.captureBalances({
      onListProgress: (page) => progress({ phase: 'listing', page }),
      onReadProgress: (done, total) => progress({ phase: 'reading', walletsRead: done, walletsTotal: total }),
    });
  } catch (error) {
    // No credentials, say: the run that claims this capture records it as its failure.
    balances = Promise.reject(error);
  }
  // Whoever claims the capture awaits it; one dropped unclaimed (its run never started) must not
  // become an unhandled rejection.
  balances.catch(() => undefined);

  let closed = false;
  return {
    account: account.name,
    startedAt,
    startedMs,
    balances,
    signal: controller.signal,
    get requestCount() {
      return gateway?.requestCount ?? 0;
    },
    abort: (reason) => controller.abort(reason),
    close() {
      if (closed) return;
      closed = true;
      stop?.removeEventListener('abort', onStop);
      gateway?.close();
    },
  };
}
