import { getMaxListeners, setMaxListeners } from 'node:events';
import { AuthError, ConfigError, HttpError, PaginationError, ProtocolError, ReconError } from '../errors.js';
import { systemClock } from '../clock.js';
import { createSilentLogger, type Logger } from '../logger.js';
import { forgetSecretValue, registerSecretValue, Secret } from '../secret.js';
import { collectBalancePages } from './balance-listing.js';
import { accountSuffix, bodyExcerpt, forAccount, gatewayErrorDetail, gatewaySaid, pathWithQuery, requestLabel } from './gateway-messages.js';
import type { BalanceListing, BalancePage, CapturedBalances, GatewayClient, GatewayClientOptions, PageProgress, UnconfirmedWallet, WalletBalance } from './gateway-types.js';
import { HttpTransport, type HttpRequest, type HttpResponse } from './http-transport.js';
import { parseJsonLosslessly } from '../lossless-json.js';
import { createLimiter, mapWithConcurrency } from '../concurrency.js';
import { AUTH_SCHEME_PATTERN, checkBaseUrl } from './base-url.js';
import { DEFAULT_TOTAL_PAGES_SLACK, paginate } from './paginate.js';
import { processRateLimits } from './rate-limiter.js';
import { CURRENCY_PATTERN, parseBalanceList, parseSingleWallet } from './response-schemas.js';
import { sendWithRetry, type RetrySettings } from './send-with-retry.js';
import { readTokenResponse, type IssuedToken } from './token-response.js';
import { DEFAULT_MAX_REVOCATIONS, TokenStore } from './access-token-store.js';

const TOKEN_PATH = '/v1/auth/token';
const BALANCES_PATH = '/v1/data/wallets/balances';

interface ResolvedSettings {
  baseUrl: URL;
  authScheme: string;
  timeoutMs: number;
  concurrency: number;
  perPage: number;
  maxRps: number | undefined;
  retryAttempts: number;
  maxRetryAfterMs: number;
  retryBaseDelayMs: number;
  maxPages: number;
  maxTokenRenewals: number;
}

/**
 * Creates a client for one merchant account. Throws ConfigError for an unusable base URL
 * (plain http to a non-loopback host included) or option out of range; nothing is sent until
 * the first call.
 *
 * @example
 * const gateway = createGatewayClient({ baseUrl, apiKey, apiSecret: new Secret(secret), account: 'eu-main' });
 * try { const { wallets } = await gateway.listBalances(); } finally { gateway.close(); }
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const settings = resolveSettings(options);
  const account = options.account;
  const credentialNames = options.credentialNames ?? { apiKey: 'GATEWAY_API_KEY', apiSecret: 'GATEWAY_API_SECRET' };
  const where = accountSuffix(account);
  const parent = options.logger ?? createSilentLogger();
  // A run's logger already carries the account; binding it twice would print the key twice.
  const bindAccount = account !== undefined && parent.bindings().account === undefined;
  const logger: Logger = parent.child({ component: 'gateway', ...(bindAccount ? { account } : {}) });
  const signal = options.signal;
  const clock = options.clock ?? systemClock;
  const now = (): number => clock.now().getTime();
  // Each request in flight listens on the stop signal: that is concurrency, not a leak.
  if (signal) setMaxListeners(Math.max(getMaxListeners(signal), settings.concurrency * 2 + 10), signal);
  const transport = new HttpTransport({
    timeoutMs: settings.timeoutMs,
    authScheme: settings.authScheme,
    logger,
    signal,
    rateLimiter: settings.maxRps === undefined ? undefined : (options.rateLimits ?? processRateLimits).limiterFor(settings.baseUrl, settings.maxRps),
    onAttempt: options.onAttempt,
  });
  const retry: RetrySettings = {
    retryAttempts: settings.retryAttempts,
    maxRetryAfterMs: settings.maxRetryAfterMs,
    retryBaseDelayMs: settings.retryBaseDelayMs,
    account,
    logger,
    signal,
    clock,
  };
  const basePath = settings.baseUrl.pathname.replace(/\/+$/, '');
  const endpoint = (path: string): URL => new URL(basePath + path, settings.baseUrl.origin);

  const tokens = new TokenStore(issueToken, {
    now,
    maxRevocations: settings.maxTokenRenewals,
    onIssued: (value) => registerSecretValue(value),
    onForgotten: (value) => forgetSecretValue(value),
  });

  /** POST /v1/auth/token: the only request that carries the API secret. */
  async function issueToken(): Promise<IssuedToken> {
    const url = endpoint(TOKEN_PATH);
    const label = requestLabel('POST', url);
    const response = await sendWithRetry(
      transport,
      {
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'secret-key': options.apiSecret.reveal() },
        body: JSON.stringify({ api_key: options.apiKey }),
      },
      retry,
    );
    if (response.status === 401 || response.status === 403) {
      throw new AuthError(
        `the gateway refused the API key/secret${forAccount(account)} (${response.status} from ${label}). Check ${credentialNames.apiKey} and ${credentialNames.apiSecret}.`,
      );
    }
    if (response.status === 400 || response.status === 415 || response.status === 422) {
      throw new AuthError(
        `the gateway rejected the token request${forAccount(account)} as malformed (${response.status} from ${label}${gatewaySaid(gatewayErrorDetail(response.body))}): check that ${credentialNames.apiKey} holds the API key itself, with no spaces or quotes.`,
      );
    }
    if (response.status === 404) {
      // The sign-in path exists on every gateway: a 404 means the base URL points elsewhere.
      throw new HttpError(
        `the gateway answered 404 (not found) to the sign-in request ${label}${forAccount(account)}: check the base URL and its path (configured: ${settings.baseUrl.href.replace(/\/$/, '')}; it should be the gateway's root address, without /v1).`,
        404,
        'POST',
        url.pathname,
      );
    }
    if (response.status < 200 || response.status > 299) throw unexpectedStatus(response, label);
    let body: unknown;
    try {
      body = parseJsonLosslessly(response.body);
    } catch {
      // No excerpt: this body is where the token would be.
      throw new ProtocolError(`The gateway sent a token response (${label}) that is not JSON${where}.`);
    }
    const reading = readTokenResponse(body, now());
    if (!reading.ok) {
      throw new ProtocolError(`The gateway sent a token response (${label}) in a shape we do not know: ${reading.problem}${where}.`);
    }
    logger.debug({ expiresInS: reading.token.expiresAt === undefined ? undefined : Math.round((reading.token.expiresAt - now()) / 1000) }, 'gateway token issued');
    return reading.token;
  }

  /**
   * A GET with the current token. A 401 to a token that has served requests means it expired
   * or was revoked: the token is renewed (once for all requests in flight with it) and the
   * request repeated. A 401 to a token on its first use means the gateway will not take any
   * token of ours, and renewing would only be refused again.
   */
  async function getAuthorized(url: URL): Promise<HttpResponse> {
    const label = requestLabel('GET', url);
    for (;;) {
      const token = await tokens.get();
      const request: HttpRequest = { method: 'GET', url, headers: { accept: 'application/json' }, token };
      tokens.begin(token);
      let response: HttpResponse;
      try {
        response = await sendWithRetry(transport, request, retry);
      } catch (error) {
        tokens.finish(token, false);
        throw error;
      }
      if (response.status !== 401) {
        tokens.finish(token, response.status >= 200 && response.status <= 299);
      } else {
        const verdict = await tokens.refused(token);
        if (verdict === 'refused-on-first-use') {
          throw new AuthError(
            `the gateway refused a freshly issued token${forAccount(account)} (401 from ${label} on the token's first use). Check the API key's permissions and that the Authorization scheme ("${settings.authScheme}") is what the gateway expects.`,
          );
        }
        if (verdict === 'too-many-revocations') {
          throw new AuthError(
            `the gateway revoked ${tokens.revocations + 1} access tokens${forAccount(account)} during this run, each after it had served requests (the last: 401 from ${label}); after ${tokens.revocations} renewals wallet-recon stopped. Another program signing in with ${credentialNames.apiKey} may be revoking our token each time: let one program at a time use this API key.`,
          );
        }
        logger.debug({ method: 'GET', path: url.pathname, revocations: tokens.revocations }, 'gateway refused a token that had served requests; repeating with a renewed token');
        continue;
      }
      if (response.status === 403) {
        throw new AuthError(`the gateway refused access${forAccount(account)} (403 from ${label}${gatewaySaid(gatewayErrorDetail(response.body))}). Check the API key's permissions.`);
      }
      if (response.status < 200 || response.status > 299) throw unexpectedStatus(response, label);
      return response;
    }
  }

  function unexpectedStatus(response: HttpResponse, label: string): HttpError {
    const { status } = response;
    const method = label.split(' ')[0]!;
    const reason =
      status >= 300 && status < 400
        ? 'a redirect, which is not followed so that credentials never leave the configured gateway'
        : 'a status that is not retried';
    // The query is named as sent (a 400 is most often about one of its values), and the gateway's
    // own explanation is kept: "answered 400" alone leaves the operator guessing.
    const detail = status >= 300 && status < 400 ? undefined : gatewayErrorDetail(response.body);
    return new HttpError(`${method} ${pathWithQuery(response.url)} answered ${status}, ${reason}${gatewaySaid(detail)}${where}.`, status, method, response.url.pathname);
  }

  function parseBody(response: HttpResponse, what: string): unknown {
    if (response.body.trim() === '') throw new ProtocolError(`The gateway sent ${what} with an empty body${where}.`);
    try {
      return parseJsonLosslessly(response.body);
    } catch {
      throw new ProtocolError(`The gateway sent ${what} that is not JSON (it starts with "${bodyExcerpt(response.body)}")${where}.`);
    }
  }

  function iterateBalancePages(): AsyncGenerator<BalancePage, void, undefined> {
    const firstUrl = endpoint(BALANCES_PATH);
    firstUrl.searchParams.set('per_page', String(settings.perPage));
    return paginate<WalletBalance>({
      firstUrl,
      origin: settings.baseUrl.origin,
      maxPages: settings.maxPages,
      totalPagesSlack: DEFAULT_TOTAL_PAGES_SLACK,
      what: 'the balance list',
      where,
      fetchPage: async (url, page) => {
        const response = await getAuthorized(url);
        const what = `a balance list (page ${page})`;
        const result = parseBalanceList(parseBody(response, what));
        if (!result.ok) throw new ProtocolError(`The gateway sent ${what} that does not match the published format: ${result.problem}${where}.`);
        return { items: result.value, headers: response.headers, linkHeaders: response.linkHeaders, url: response.url };
      },
    });
  }

  async function listBalances(
    listOptions: { onProgress?: (p: PageProgress) => void; onPage?: (items: readonly WalletBalance[]) => void | Promise<void> } = {},
  ): Promise<BalanceListing> {
    const collect = () => collectBalancePages(iterateBalancePages(), { logger, where, onProgress: listOptions.onProgress, onPage: listOptions.onPage });
    let pass = await collect();
    if (pass.mismatch !== undefined) {
      // Wallets may have been opened or closed while we paged; one fresh pass tells a moving
      // listing from a broken one.
      logger.warn({ problem: pass.mismatch }, 'the balance list did not add up; listing again from the start');
      const first = pass.mismatch;
      pass = await collect();
      if (pass.mismatch !== undefined) {
        throw new PaginationError(`The balance list ${first}, and when listed again from the start it ${pass.mismatch}${where}.`);
      }
    }
    logger.info({ wallets: pass.wallets.length, pages: pass.pagesFetched, totalReported: pass.totalReported }, 'gateway balance list complete');
    return { wallets: pass.wallets, pagesFetched: pass.pagesFetched, totalReported: pass.totalReported, totalPagesReported: pass.totalPagesReported };
  }

  function checkCurrency(currency: string): void {
    if (typeof currency !== 'string' || !CURRENCY_PATTERN.test(currency)) {
      const shown = typeof currency === 'string' ? JSON.stringify(currency.slice(0, 12)) : typeof currency;
      throw new ReconError(`${shown} is not a currency code; a wallet is named by three uppercase letters such as EUR${where}.`);
    }
  }

  async function getWalletBalance(currency: string): Promise<WalletBalance> {
    checkCurrency(currency);
    const url = endpoint(`/v1/data/wallets/${currency}/balance`);
    const response = await getAuthorized(url);
    const what = `a wallet balance for ${currency}`;
    const result = parseSingleWallet(parseBody(response, what), currency);
    if (!result.ok) throw new ProtocolError(`The gateway sent ${what} that does not match the published format: ${result.problem}${where}.`);
    return result.value;
  }

  async function getWalletBalances(
    currencies: readonly string[],
    readOptions: { onProgress?: (done: number, total: number) => void } = {},
  ): Promise<WalletBalance[]> {
    // Every code is checked before the first request, so a bad one costs no partial work.
    for (const currency of currencies) checkCurrency(currency);
    let done = 0;
    return mapWithConcurrency(currencies, settings.concurrency, async (currency) => {
      const wallet = await getWalletBalance(currency);
      done++;
      readOptions.onProgress?.(done, currencies.length);
      return wallet;
    });
  }

  async function captureBalances(
    captureOptions: { onListProgress?: (p: PageProgress) => void; onReadProgress?: (done: number, total: number) => void } = {},
  ): Promise<CapturedBalances> {
    const limiter = createLimiter(settings.concurrency);
    const reads = new Map<string, Promise<WalletBalance | UnconfirmedWallet>>();
    let done = 0;
    const read = (currency: string): Promise<WalletBalance | UnconfirmedWallet> => {
      let pending = reads.get(currency);
      if (pending === undefined) {
        checkCurrency(currency);
        pending = limiter.run(async () => {
          let wallet: WalletBalance | UnconfirmedWallet;
          try {
            wallet = await getWalletBalance(currency);
          } catch (error) {
            // The listing named this wallet with its balance; a single read that can never
            // confirm it (the wallet is unknown there, or another currency answers) does not
            // cost the day: the listed balance is kept, marked unconfirmed with the reason.
            if (!isPermanentSingleReadFailure(error)) throw error;
            wallet = { currency, unconfirmed: (error as Error).message };
          }
          captureOptions.onReadProgress?.(++done, reads.size);
          return wallet;
        });
        // The first failed read stops the ones still waiting; its error is thrown below.
        pending.catch((error: unknown) => limiter.close(error));
        reads.set(currency, pending);
      }
      return pending;
    };
    const settleAll = () => Promise.allSettled(reads.values());
    let listing: BalanceListing;
    try {
      listing = await listBalances({
        onProgress: captureOptions.onListProgress,
        onPage: async (items) => {
          for (const wallet of items) void read(wallet.currency);
          // Backpressure: the next page is asked for once at most a few rounds of reads wait, so a
          // listing that runs ahead of the reads never piles up thousands of them (and their memory).
          await limiter.whenWaitingBelow(settings.concurrency * 4);
        },
      });
    } catch (error) {
      // A listing that cannot be trusted yields nothing: no new read starts, none is left running.
      limiter.close(error);
      await settleAll();
      throw error;
    }
    // A re-listed pass may name wallets the first did not; reads of wallets it no longer names are dropped.
    const wanted = await Promise.allSettled(listing.wallets.map((w) => read(w.currency)));
    await settleAll();
    const failed = wanted.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return { listing, singles: wanted.map((r) => (r as PromiseFulfilledResult<WalletBalance | UnconfirmedWallet>).value) };
  }

  return {
    listBalances,
    captureBalances,
    iterateBalancePages,
    getWalletBalance,
    getWalletBalances,
    get requestCount() {
      return transport.requestCount;
    },
    close() {
      tokens.clear();
      transport.close();
    },
  };
}

/**
 * A single read that will fail the same way however often it is tried: 404 for a listed wallet,
 * or an answer about another currency. Timeouts, 5xx, 429 and network faults are transient.
 */
function isPermanentSingleReadFailure(error: unknown): boolean {
  if (error instanceof HttpError) return error.status === 404;
  return error instanceof ProtocolError;
}

function resolveSettings(options: GatewayClientOptions): ResolvedSettings {
  const problems: string[] = [];
  const baseProblem = checkBaseUrl(options.baseUrl);
  if (baseProblem !== undefined) problems.push(`baseUrl ${baseProblem}`);
  if (typeof options.apiKey !== 'string' || options.apiKey === '') problems.push('apiKey must be a non-empty string');
  if (!(options.apiSecret instanceof Secret)) problems.push('apiSecret must be a Secret');
  const authScheme = options.authScheme ?? 'Bearer';
  if (!AUTH_SCHEME_PATTERN.test(authScheme)) problems.push('authScheme must be a single word such as Bearer, or empty for a bare token');
  const int = (name: string, value: number | undefined, fallback: number, min: number): number => {
    const v = value ?? fallback;
    if (!Number.isInteger(v) || v < min) problems.push(`${name} must be a whole number, at least ${min} (got ${String(value)})`);
    return v;
  };
  const settings: ResolvedSettings = {
    baseUrl: baseProblem === undefined ? new URL(options.baseUrl) : new URL('http://127.0.0.1'),
    authScheme,
    timeoutMs: int('timeoutMs', options.timeoutMs, 30_000, 1),
    concurrency: int('concurrency', options.concurrency, 8, 1),
    perPage: int('perPage', options.perPage, 100, 1),
    maxRps: options.maxRps,
    retryAttempts: int('retryAttempts', options.retryAttempts, 4, 0),
    maxRetryAfterMs: int('maxRetryAfterMs', options.maxRetryAfterMs, 60_000, 0),
    retryBaseDelayMs: int('retryBaseDelayMs', options.retryBaseDelayMs, 500, 0),
    maxPages: int('maxPages', options.maxPages, 10_000, 1),
    maxTokenRenewals: int('maxTokenRenewals', options.maxTokenRenewals, DEFAULT_MAX_REVOCATIONS, 0),
  };
  if (options.maxRps !== undefined && !(Number.isFinite(options.maxRps) && options.maxRps > 0)) problems.push('maxRps must be a positive number');
  if (problems.length > 0) {
    const whose = options.account === undefined ? 'The gateway client' : `The gateway client for account "${options.account}"`;
    throw new ConfigError(`${whose} cannot be created: ${problems.join('; ')}.`, problems);
  }
  return settings;
}
