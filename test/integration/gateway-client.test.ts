import type { ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { FixedClock, type Clock } from '../../src/clock.js';
import { AuthError, ConfigError, HttpError, InterruptedError, NetworkError, PaginationError, ProtocolError, ReconError } from '../../src/errors.js';
import { pathWithQuery } from '../../src/gateway/gateway-messages.js';
import { createGatewayClient, GatewayRateLimits, processRateLimits, type GatewayClient, type GatewayClientOptions, type PageProgress } from '../../src/gateway/index.js';
import { createLogger } from '../../src/logger.js';
import { Secret } from '../../src/secret.js';
import { sendJson, startServer, type ReceivedRequest, type TestServer } from '../helpers/with-server.js';

/**
 * Given a local HTTP server playing the gateway (and misbehaving on purpose), the client does
 * the right thing, and neither its logs nor its errors ever contain the secret or a token.
 */

const API_KEY = 'key_acct_0001';
const API_SECRET = 'sk_live_SECRET_never_print_7f3a9c';
const TOKEN_PREFIX = 'tok_SENSITIVE_';
const BALANCES = '/v1/data/wallets/balances';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type TokenHandler = (request: ReceivedRequest, res: ServerResponse, issue: () => string) => void | Promise<void>;
type DataHandler = (request: ReceivedRequest, res: ServerResponse, token: string | undefined) => void | Promise<void>;

interface FakeGateway extends TestServer {
  tokens: string[];
  tokenRequests: () => ReceivedRequest[];
  dataRequests: () => ReceivedRequest[];
}

const defaultToken: TokenHandler = (_request, res, issue) => sendJson(res, 200, { access_token: issue(), expires_in: 3600 });

/** A fake gateway: issues tokens (checking key and secret) and hands data requests with a valid token to `data`. */
async function startGateway(data: DataHandler, token: TokenHandler = defaultToken): Promise<FakeGateway> {
  const tokens: string[] = [];
  const issue = (): string => {
    const value = `${TOKEN_PREFIX}${tokens.length + 1}_${'x'.repeat(20)}`;
    tokens.push(value);
    return value;
  };
  const server = await startServer(async (request, res) => {
    if (request.path === '/v1/auth/token') {
      if (request.headers['secret-key'] !== API_SECRET || JSON.parse(request.body || '{}').api_key !== API_KEY) {
        sendJson(res, 401, { code: 401, status: 'error', message: 'bad credentials' });
        return;
      }
      await token(request, res, issue);
      return;
    }
    const auth = request.headers.authorization;
    const presented = auth?.startsWith('Bearer ') ? auth.slice(7) : auth;
    await data(request, res, presented !== undefined && tokens.includes(presented) ? presented : undefined);
  });
  cleanups.push(() => server.close());
  return {
    ...server,
    tokens,
    tokenRequests: () => server.requests.filter((r) => r.path === '/v1/auth/token'),
    dataRequests: () => server.requests.filter((r) => r.path !== '/v1/auth/token'),
  };
}

const envelope = (dataJson: string): string => `{"code":200,"status":"success","message":"Completed","data":${dataJson}}`;
const entries = (wallets: readonly (readonly [string, string])[]): string => `[${wallets.map(([c, b]) => `{"currency":"${c}","balance":${b}}`).join(',')}]`;

/** Serves `pages` (each a list of [currency, balance-json]) with X-PH headers and a relative next link. */
function pagedBalances(pages: (readonly (readonly [string, string])[])[], options: { total?: number; link?: (page: number) => string | string[] | undefined } = {}): DataHandler {
  const total = options.total ?? pages.reduce((n, p) => n + p.length, 0);
  return (request, res, token) => {
    if (!token) return sendJson(res, 401, { code: 401, status: 'error', message: 'token' });
    const page = Number(request.query.get('page') ?? '1');
    const headers: Record<string, string | string[]> = { 'x-ph-total': String(total), 'x-ph-totalpages': String(pages.length) };
    const link = options.link ? options.link(page) : page < pages.length ? `<${BALANCES}?page=${page + 1}&per_page=${request.query.get('per_page')}>; rel="next"` : undefined;
    if (link !== undefined) headers.link = link;
    sendJson(res, 200, envelope(entries(pages[page - 1] ?? [])), headers);
  };
}

interface Harness {
  client: GatewayClient;
  logs: string[];
}

function makeClient(gateway: { url: string }, overrides: Partial<GatewayClientOptions> = {}): Harness {
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void logs.push(line) } });
  const client = createGatewayClient({
    baseUrl: gateway.url,
    apiKey: API_KEY,
    apiSecret: new Secret(API_SECRET),
    account: 'eu-main',
    logger,
    timeoutMs: 2_000,
    retryBaseDelayMs: 5,
    ...overrides,
  });
  cleanups.push(() => client.close());
  return { client, logs };
}

/** No secret and no token in the logs or anywhere in the error, however it is printed. */
function expectNothingSecret(harness: Harness, gateway: { tokens?: string[] }, error?: unknown): void {
  const texts = [harness.logs.join('\n')];
  if (error !== undefined) {
    texts.push(String(error), inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error) ?? '');
    if (error instanceof Error) texts.push(error.message, inspect(error.cause, { depth: 10 }));
  }
  for (const text of texts) {
    expect(text).not.toContain(API_SECRET);
    expect(text).not.toContain(TOKEN_PREFIX);
    for (const token of gateway.tokens ?? []) expect(text).not.toContain(token);
  }
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

const W = (n: number) => [`C${String.fromCharCode(65 + Math.floor(n / 26))}${String.fromCharCode(65 + (n % 26))}`, String(n * 100)] as const;

describe('token', () => {
  it('asks for a token with the published headers and body, then sends it as a Bearer token', async () => {
    const gateway = await startGateway(pagedBalances([[W(1)]]));
    const h = makeClient(gateway);
    const listing = await h.client.listBalances();
    expect(listing.wallets).toEqual([{ currency: 'CAB', balance: 100n }]);
    const [tokenRequest] = gateway.tokenRequests();
    expect(tokenRequest!.method).toBe('POST');
    expect(tokenRequest!.headers['content-type']).toBe('application/json');
    expect(tokenRequest!.headers.accept).toBe('application/json');
    expect(tokenRequest!.headers['secret-key']).toBe(API_SECRET);
    expect(JSON.parse(tokenRequest!.body)).toEqual({ api_key: API_KEY });
    expect(gateway.dataRequests()[0]!.headers.authorization).toBe(`Bearer ${gateway.tokens[0]}`);
    expect(gateway.dataRequests()[0]!.headers['secret-key']).toBeUndefined();
    expectNothingSecret(h, gateway);
  });

  it.each([
    ['access_token, top level, expires_in', (t: string) => ({ access_token: t, expires_in: 3600 })],
    ['token, top level, no expiry', (t: string) => ({ token: t })],
    ['access_token inside data, expires_at ISO', (t: string) => ({ code: 200, status: 'success', message: 'ok', data: { access_token: t, expires_at: new Date(Date.now() + 3_600_000).toISOString() } })],
    ['token inside data, expires_at epoch seconds', (t: string) => ({ data: { token: t, expires_at: Math.floor(Date.now() / 1000) + 3600 } })],
  ])('accepts a token response with %s', async (_name, shape) => {
    const gateway = await startGateway(pagedBalances([[W(1)], [W(2)]]), (_r, res, issue) => sendJson(res, 200, shape(issue())));
    const h = makeClient(gateway);
    expect((await h.client.listBalances()).wallets).toHaveLength(2);
    expect(gateway.tokenRequests()).toHaveLength(1);
    expect(gateway.dataRequests().map((r) => r.headers.authorization)).toEqual([`Bearer ${gateway.tokens[0]}`, `Bearer ${gateway.tokens[0]}`]);
    expectNothingSecret(h, gateway);
  });

  it('sends a bare token when the scheme is empty, or the configured scheme', async () => {
    const seen: (string | undefined)[] = [];
    const gateway = await startGateway((request, res) => {
      seen.push(request.headers.authorization);
      sendJson(res, 200, envelope(entries([W(1)])));
    });
    await makeClient(gateway, { authScheme: '' }).client.listBalances();
    await makeClient(gateway, { authScheme: 'Token' }).client.listBalances();
    expect(seen).toEqual([gateway.tokens[0], `Token ${gateway.tokens[1]}`]);
  });

  it('fails with a ProtocolError naming the fields of an unknown token shape, never their values', async () => {
    const gateway = await startGateway(pagedBalances([[W(1)]]), (_r, res, issue) => sendJson(res, 200, { jwt: issue(), data: { ttl: 60 } }));
    const h = makeClient(gateway);
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain('fields seen: jwt, data.ttl');
    expect(error.message).toContain('POST /v1/auth/token');
    expect(error.message).toContain('account "eu-main"');
    expectNothingSecret(h, gateway, error);
  });

  it('turns a refused key/secret into an AuthError that says what to check', async () => {
    const gateway = await startGateway(pagedBalances([[W(1)]]));
    const h = makeClient(gateway, { apiSecret: new Secret('wrong-secret-value') });
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toBe(
      'the gateway refused the API key/secret for account "eu-main" (401 from POST /v1/auth/token). Check GATEWAY_API_KEY and GATEWAY_API_SECRET.',
    );
    expect(gateway.dataRequests()).toHaveLength(0);
    expect(error.message).not.toContain('wrong-secret-value');
    expectNothingSecret(h, gateway, error);
  });

  it('renews a token refused after it served a request, and repeats the request', async () => {
    let served = 0;
    const gateway = await startGateway((_request, res, token) => {
      // The first token serves one request and is then revoked.
      if (!token || (token === gateway.tokens[0] && served === 1)) return sendJson(res, 401, { message: 'expired' });
      served++;
      sendJson(res, 200, envelope(entries([W(1)])));
    });
    const h = makeClient(gateway);
    expect((await h.client.getWalletBalance('CAB')).balance).toBe(100n);
    expect((await h.client.getWalletBalance('CAB')).balance).toBe(100n);
    expect(gateway.tokenRequests()).toHaveLength(2);
    expect(gateway.dataRequests()).toHaveLength(3);
    expect(gateway.dataRequests()[2]!.headers.authorization).toBe(`Bearer ${gateway.tokens[1]}`);
    expectNothingSecret(h, gateway);
  });

  it('fails at once with an AuthError when a token is refused on its first use (bad credentials or scheme)', async () => {
    const gateway = await startGateway((_request, res) => sendJson(res, 401, { message: 'no' }));
    const h = makeClient(gateway);
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toBe(
      'the gateway refused a freshly issued token for account "eu-main" (401 from GET /v1/data/wallets/balances on the token\'s first use). Check the API key\'s permissions and that the Authorization scheme ("Bearer") is what the gateway expects.',
    );
    expect(gateway.tokenRequests()).toHaveLength(1);
    expect(gateway.dataRequests()).toHaveLength(1);
    expectNothingSecret(h, gateway, error);
  });

  it('fails at once when eight requests all meet a token refused on its first use', async () => {
    const gateway = await startGateway((_request, res) => {
      setTimeout(() => sendJson(res, 401, { message: 'no' }), 5);
    });
    const h = makeClient(gateway, { concurrency: 8 });
    const error = await failure(h.client.getWalletBalances(Array.from({ length: 8 }, (_, i) => W(i)[0])));
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toContain("on the token's first use");
    expect(gateway.tokenRequests()).toHaveLength(1);
  });

  /** Single-wallet answers; `accept` decides, per request and token, whether the token is still good. */
  function walletReads(accept: (token: string) => boolean): DataHandler {
    return (request, res, token) => {
      const currency = request.path.split('/')[4]!;
      // A short pause keeps the eight requests in flight together.
      setTimeout(() => {
        if (!token || !accept(token)) return sendJson(res, 401, { code: 401, status: 'error', message: 'token revoked' });
        sendJson(res, 200, envelope(`{"currency":"${currency}","balance":1}`));
      }, 5);
    };
  }

  const forty = Array.from({ length: 40 }, (_, i) => W(i)[0]);

  it('renews a token the gateway revokes after five uses while eight requests run at once, and reads every wallet', async () => {
    const uses = new Map<string, number>();
    const gateway = await startGateway(
      walletReads((token) => {
        const used = uses.get(token) ?? 0;
        if (used >= 5) return false;
        uses.set(token, used + 1);
        return true;
      }),
    );
    const h = makeClient(gateway, { concurrency: 8 });
    const wallets = await h.client.getWalletBalances(forty);
    expect(wallets.map((w) => w.currency)).toEqual(forty);
    // Forty reads at five per token: eight tokens, one renewal per revocation however many
    // requests were refused with the revoked token.
    expect(gateway.tokenRequests()).toHaveLength(8);
    expect([...uses.values()]).toEqual(Array(8).fill(5));
    expectNothingSecret(h, gateway);
  });

  it('renews once per revocation when each new token revokes the previous one (another program signing in)', async () => {
    let current = '';
    let served = 0;
    let outsideSignIns = 0;
    const gateway = await startGateway(
      walletReads((token) => {
        if (token !== current) return false;
        served++;
        if (served % 10 === 0) {
          // Another program signs in with the same key: its new token revokes ours.
          outsideSignIns++;
          current = `outside-${outsideSignIns}`;
        }
        return true;
      }),
      (_r, res, issue) => {
        current = issue();
        sendJson(res, 200, { access_token: current, expires_in: 3600 });
      },
    );
    const h = makeClient(gateway, { concurrency: 8 });
    expect((await h.client.getWalletBalances(forty)).map((w) => w.currency)).toEqual(forty);
    // Our first token, then one renewal after each outside sign-in that came before the last read:
    // a second renewal for the same revocation would have revoked the renewed token in turn.
    expect(gateway.tokenRequests()).toHaveLength(1 + 3);
    expect(served).toBe(40);
    expectNothingSecret(h, gateway);
  });

  it('stops renewing after 20 revocations in a run and says how many tokens the gateway revoked', async () => {
    const uses = new Map<string, number>();
    const gateway = await startGateway(
      walletReads((token) => {
        if (uses.has(token)) return false;
        uses.set(token, 1);
        return true;
      }),
    );
    const h = makeClient(gateway, { concurrency: 8 });
    const error = await failure(h.client.getWalletBalances(forty));
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toBe(
      'the gateway revoked 21 access tokens for account "eu-main" during this run, each after it had served requests (the last: 401 from GET ' +
        (error.message.match(/GET (\S+)\)/)?.[1] ?? '') +
        '); after 20 renewals wallet-recon stopped. Another program signing in with GATEWAY_API_KEY may be revoking our token each time: let one program at a time use this API key.',
    );
    expect(gateway.tokenRequests()).toHaveLength(21);
    expectNothingSecret(h, gateway, error);
  });

  it('renews an expired token once for many concurrent requests', async () => {
    const gateway = await startGateway(
      (request, res, token) => {
        if (!token) return sendJson(res, 401, { message: 'no' });
        const currency = request.path.split('/')[4]!;
        setTimeout(() => sendJson(res, 200, envelope(`{"currency":"${currency}","balance":1}`)), 20);
      },
      (_r, res, issue) => {
        const lifetime = gateway.tokens.length === 0 ? 1 : 3600;
        sendJson(res, 200, { access_token: issue(), expires_in: lifetime });
      },
    );
    // The client's time: the first token's second of life passes without waiting for it.
    const clock = new FixedClock(new Date());
    const h = makeClient(gateway, { concurrency: 6, clock });
    await h.client.getWalletBalance('EUR');
    clock.advance(1_100);
    const currencies = ['USD', 'GBP', 'JPY', 'CHF', 'SEK', 'NOK'];
    expect((await h.client.getWalletBalances(currencies)).map((w) => w.currency)).toEqual(currencies);
    expect(gateway.tokenRequests()).toHaveLength(2);
    expect(gateway.dataRequests().slice(1).every((r) => r.headers.authorization === `Bearer ${gateway.tokens[1]}`)).toBe(true);
    expectNothingSecret(h, gateway);
  });

  it('retries the token request on a transient failure (got would not retry a POST)', async () => {
    let failures = 2;
    const gateway = await startGateway(pagedBalances([[W(1)]]), (_r, res, issue) => {
      if (failures-- > 0) return sendJson(res, 503, { message: 'busy' });
      sendJson(res, 200, { token: issue() });
    });
    const h = makeClient(gateway);
    await h.client.listBalances();
    expect(gateway.tokenRequests()).toHaveLength(3);
    expect(h.client.requestCount).toBe(4);
  });
});

describe('pagination', () => {
  it('sends per_page, follows relative next links across pages and reports progress', async () => {
    const pages = [[W(1), W(2)], [W(3), W(4)], [W(5)]];
    const gateway = await startGateway(pagedBalances(pages));
    const h = makeClient(gateway, { perPage: 2 });
    const progress: PageProgress[] = [];
    const listing = await h.client.listBalances({ onProgress: (p) => progress.push(p) });
    expect(listing).toEqual({
      wallets: pages.flat().map(([currency, balance]) => ({ currency, balance: BigInt(balance) })),
      pagesFetched: 3,
      totalReported: 5,
      totalPagesReported: 3,
    });
    expect(gateway.dataRequests()[0]!.query.get('per_page')).toBe('2');
    expect(gateway.dataRequests().map((r) => r.query.get('page'))).toEqual([null, '2', '3']);
    expect(progress).toEqual([
      { page: 1, totalPages: 3, items: 2, totalItems: 5 },
      { page: 2, totalPages: 3, items: 4, totalItems: 5 },
      { page: 3, totalPages: 3, items: 5, totalItems: 5 },
    ]);
    const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const requestLines = lines.filter((l) => l.msg === 'gateway request');
    expect(requestLines).toHaveLength(4);
    // The path is logged with its query: a refused request is most often refused for a query value.
    expect(requestLines[1]).toMatchObject({ method: 'GET', path: `${BALANCES}?per_page=2`, status: 200, attempt: 1, account: 'eu-main' });
    expect(requestLines[2]).toMatchObject({ path: `${BALANCES}?page=2&per_page=2` });
    expect(typeof requestLines[1]!.ms).toBe('number');
    expect(lines.filter((l) => l.msg === 'gateway balance page' && l.level === 30)).toHaveLength(3);
    expectNothingSecret(h, gateway);
  });

  it('follows next links spread over several Link lines, with rel="next last", unquoted rel and commas in the URI', async () => {
    const pages = [[W(1)], [W(2)], [W(3)]];
    const gateway = await startGateway(
      pagedBalances(pages, {
        link: (page) =>
          page === 1
            ? ['</v1/data/wallets/balances?page=1>; rel="first"', `<${BALANCES}?cursor=a,b;c&page=2>; title="x, y"; rel="next last"`]
            : page === 2
              ? `<?page=3>; rel=next, </v1/data/wallets/balances?page=1>; rel=first`
              : '</v1/data/wallets/balances?page=1>; rel="first"',
      }),
    );
    const h = makeClient(gateway);
    expect((await h.client.listBalances()).wallets.map((w) => w.currency)).toEqual(['CAB', 'CAC', 'CAD']);
    expect(gateway.dataRequests().map((r) => r.url)).toEqual([
      `${BALANCES}?per_page=100`,
      `${BALANCES}?cursor=a,b;c&page=2`,
      `${BALANCES}?page=3`,
    ]);
  });

  it('follows an absolute next link on the configured origin', async () => {
    const pages = [[W(1)], [W(2)]];
    let origin = '';
    const gateway = await startGateway(pagedBalances(pages, { link: (page) => (page === 1 ? `<${origin}${BALANCES}?page=2>; rel="next"` : undefined) }));
    origin = gateway.url;
    expect((await makeClient(gateway).client.listBalances()).wallets).toHaveLength(2);
  });

  it('never requests a next link on another origin: the foreign server receives nothing', async () => {
    const foreign = await startServer((_r, res) => sendJson(res, 200, envelope('[]')));
    cleanups.push(() => foreign.close());
    const gateway = await startGateway(pagedBalances([[W(1)], [W(2)]], { link: () => `<${foreign.url}${BALANCES}?page=2>; rel="next"` }));
    const h = makeClient(gateway);
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(PaginationError);
    expect(error.message).toContain(`points its next link to ${foreign.url}, not to the configured gateway ${gateway.url}`);
    expect(foreign.requests).toHaveLength(0);
    expectNothingSecret(h, gateway, error);
  });

  it('refuses a next link that downgrades to another scheme or port of the same host', async () => {
    const gateway = await startGateway(pagedBalances([[W(1)], [W(2)]], { link: () => `<https://127.0.0.1:1${BALANCES}?page=2>; rel="next"` }));
    expect(await failure(makeClient(gateway).client.listBalances())).toBeInstanceOf(PaginationError);
    expect(gateway.dataRequests()).toHaveLength(1);
  });

  it('stops a cycle of next links', async () => {
    const gateway = await startGateway(pagedBalances([[W(1)], [W(2)]], { link: (page) => (page === 1 ? `<${BALANCES}?page=2>; rel="next"` : `<${BALANCES}?per_page=100>; rel="next"`) }));
    const h = makeClient(gateway);
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(PaginationError);
    expect(error.message).toContain('the pagination loops');
    expect(gateway.dataRequests()).toHaveLength(2);
  });

  it('stops when pages run past X-PH-TotalPages plus the slack', async () => {
    const gateway = await startGateway((request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      const page = Number(request.query.get('page') ?? '1');
      sendJson(res, 200, envelope(entries([W(page)])), { 'x-ph-totalpages': '2', link: `<${BALANCES}?page=${page + 1}>; rel="next"` });
    });
    const error = await failure(makeClient(gateway).client.listBalances());
    expect(error).toBeInstanceOf(PaginationError);
    expect(error.message).toContain('offered page 5 although X-PH-TotalPages said 2');
    expect(gateway.dataRequests()).toHaveLength(4);
  });

  it('stops at maxPages when the gateway reports no page count', async () => {
    const gateway = await startGateway((request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      const page = Number(request.query.get('page') ?? '1');
      sendJson(res, 200, envelope(entries([W(page)])), { link: `<${BALANCES}?page=${page + 1}>; rel="next"` });
    });
    const error = await failure(makeClient(gateway, { maxPages: 3 }).client.listBalances());
    expect(error).toBeInstanceOf(PaginationError);
    expect(error.message).toContain('did not end after 3 pages (maxPages)');
    expect(gateway.dataRequests()).toHaveLength(3);
  });

  it('lists again once when the distinct count misses X-PH-Total, then fails', async () => {
    const gateway = await startGateway(pagedBalances([[W(1)], [W(2)]], { total: 3 }));
    const h = makeClient(gateway);
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(PaginationError);
    expect(error.message).toBe(
      'The balance list held 2 distinct wallets but X-PH-Total said 3, and when listed again from the start it held 2 distinct wallets but X-PH-Total said 3 (account "eu-main").',
    );
    expect(gateway.dataRequests()).toHaveLength(4);
  });

  it('fails a listing that ends before X-PH-TotalPages when X-PH-Total is absent (nothing else would tell the wallets missing)', async () => {
    const gateway = await startGateway((request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      const page = Number(request.query.get('page') ?? '1');
      // Says three pages, links only to the second, which has no next link: page 3 is never offered.
      const headers: Record<string, string> = { 'x-ph-totalpages': '3' };
      if (page === 1) headers.link = `<${BALANCES}?page=2>; rel="next"`;
      sendJson(res, 200, envelope(entries([W(page)])), headers);
    });
    const error = await failure(makeClient(gateway).client.listBalances());
    expect(error).toBeInstanceOf(PaginationError);
    expect(error.message).toBe(
      'The balance list ended after 2 pages although X-PH-TotalPages said 3, and when listed again from the start it ended after 2 pages although X-PH-TotalPages said 3 (account "eu-main").',
    );
    expect(gateway.dataRequests()).toHaveLength(4);
  });

  it('accepts the second listing when the first did not add up', async () => {
    let listing = 0;
    const gateway = await startGateway((request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      const page = Number(request.query.get('page') ?? '1');
      if (page === 1) listing++;
      // A wallet opened while the first listing was being read.
      const total = listing === 1 ? 3 : 2;
      const headers: Record<string, string> = { 'x-ph-total': String(total), 'x-ph-totalpages': '2' };
      if (page === 1) headers.link = `<${BALANCES}?page=2>; rel="next"`;
      sendJson(res, 200, envelope(entries([W(page)])), headers);
    });
    const result = await makeClient(gateway).client.listBalances();
    expect(result.wallets).toHaveLength(2);
    expect(result.totalReported).toBe(2);
    expect(gateway.dataRequests()).toHaveLength(4);
  });

  it('fails when one currency appears twice with different balances', async () => {
    const gateway = await startGateway(pagedBalances([[W(1), ['EUR', '10']], [['EUR', '11']]]));
    const error = await failure(makeClient(gateway).client.listBalances());
    expect(error).toBeInstanceOf(PaginationError);
    expect(error.message).toContain('wallet EUR twice with different balances (10 on page 1, 11 on page 2)');
  });

  it('merges an identical repeat across a page boundary', async () => {
    const gateway = await startGateway(pagedBalances([[W(1), ['EUR', '10']], [['EUR', '10'], W(2)]], { total: 3 }));
    const listing = await makeClient(gateway).client.listBalances();
    expect(listing.wallets).toEqual([
      { currency: 'CAB', balance: 100n },
      { currency: 'EUR', balance: 10n },
      { currency: 'CAC', balance: 200n },
    ]);
  });

  it('iterates the pages one by one', async () => {
    const gateway = await startGateway(pagedBalances([[W(1), W(2)], [W(3)]]));
    const pages = [];
    for await (const page of makeClient(gateway).client.iterateBalancePages()) pages.push(page);
    expect(pages.map((p) => [p.page, p.items.length, p.totalItems, p.totalPages])).toEqual([
      [1, 2, 3, 2],
      [2, 1, 3, 2],
    ]);
    expect(pages[1]!.url).toBe(`${gateway.url}${BALANCES}?page=2&per_page=100`);
  });
});

describe('validation', () => {
  const serving = (body: string): DataHandler => (_request, res, token) => (token ? sendJson(res, 200, body) : sendJson(res, 401, {}));

  it('keeps 2^53+1 exact', async () => {
    const gateway = await startGateway(serving(envelope('[{"currency":"EUR","balance":9007199254740993}]')));
    expect((await makeClient(gateway).client.listBalances()).wallets).toEqual([{ currency: 'EUR', balance: 9007199254740993n }]);
  });

  it('names the page and field of a non-integer balance', async () => {
    const gateway = await startGateway(
      pagedBalances([[W(1)], [W(2)], [W(3), W(4), W(5), W(6), ['CHF', '12.5']]]),
    );
    const error = await failure(makeClient(gateway).client.listBalances());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toBe(
      'The gateway sent a balance list (page 3) that does not match the published format: data[4].balance must be an integer (got a decimal number) (account "eu-main").',
    );
  });

  it.each([
    ['a balance in exponent notation', envelope('[{"currency":"EUR","balance":1e3}]'), 'data[0].balance must be an integer (got a number in exponent notation)'],
    ['a balance as a string', envelope('[{"currency":"EUR","balance":"100"}]'), 'data[0].balance must be an integer (got a string)'],
    ['a bad currency', envelope('[{"currency":"EURO","balance":1}]'), 'data[0].currency must be a three-letter uppercase code such as EUR (got "EURO")'],
    ['a wrong envelope', '{"code":200,"status":"ok","message":"x","data":[]}', 'status must be "success" (got "ok")'],
    ['a list that is not an array', '{"code":200,"status":"success","message":"x","data":{"EUR":1}}', 'data must be an array (got an object)'],
  ])('rejects %s', async (_name, body, problem) => {
    const gateway = await startGateway(serving(body));
    const error = await failure(makeClient(gateway).client.listBalances());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain(`(page 1) that does not match the published format: ${problem}`);
  });

  it('rejects a body that is not JSON, quoting only a short excerpt', async () => {
    const gateway = await startGateway((_r, res, token) => {
      if (!token) return sendJson(res, 401, {});
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<html><body>Maintenance ${'z'.repeat(300)}</body></html>`);
    });
    const error = await failure(makeClient(gateway).client.listBalances());
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain('a balance list (page 1) that is not JSON (it starts with "<html><body>Maintenance [');
    expect(error.message.length).toBeLessThan(200);
  });

  it('reads a single wallet given as an object or a one-element array', async () => {
    const gateway = await startGateway((request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      const currency = request.path.split('/')[4];
      const entry = `{"currency":"${currency}","balance":9007199254740993}`;
      sendJson(res, 200, envelope(currency === 'EUR' ? entry : `[${entry}]`));
    });
    const { client } = makeClient(gateway);
    expect(await client.getWalletBalance('EUR')).toEqual({ currency: 'EUR', balance: 9007199254740993n });
    expect(await client.getWalletBalance('USD')).toEqual({ currency: 'USD', balance: 9007199254740993n });
    expect(gateway.dataRequests().map((r) => r.path)).toEqual(['/v1/data/wallets/EUR/balance', '/v1/data/wallets/USD/balance']);
  });

  it('refuses a single wallet answer for another currency', async () => {
    const gateway = await startGateway(serving(envelope('{"currency":"USD","balance":1}')));
    const error = await failure(makeClient(gateway).client.getWalletBalance('EUR'));
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error.message).toContain('a wallet balance for EUR that does not match the published format: data.currency is "USD" but the wallet asked for was "EUR"');
  });

  it('never puts an invalid currency into a URL', async () => {
    const gateway = await startGateway(serving(envelope('{"currency":"EUR","balance":1}')));
    const { client } = makeClient(gateway);
    for (const bad of ['eur', '../../auth/token', 'EU', 'EUR/../x', 'EUR?x=1']) {
      expect(await failure(client.getWalletBalance(bad))).toBeInstanceOf(ReconError);
    }
    expect(await failure(client.getWalletBalances(['EUR', 'usd']))).toBeInstanceOf(ReconError);
    expect(gateway.requests).toHaveLength(0);
  });
});

describe('retries and time limits', () => {
  /** Fails the first `times` data requests with `fail`, then serves one wallet. */
  const flaky = (times: number, fail: (res: ServerResponse, request: ReceivedRequest) => void): DataHandler => {
    let left = times;
    return (request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      if (left-- > 0) return fail(res, request);
      sendJson(res, 200, envelope(entries([W(1)])));
    };
  };

  it('waits the Retry-After seconds of a 429', async () => {
    const gateway = await startGateway(flaky(1, (res) => sendJson(res, 429, { message: 'slow down' }, { 'retry-after': '1' })));
    // Waits on the client's clock: a second of virtual time, exactly, and no real second.
    const clock = new FixedClock('2026-11-16T12:00:00Z');
    await makeClient(gateway, { clock }).client.listBalances();
    expect(clock.now().getTime() - Date.parse('2026-11-16T12:00:00Z')).toBe(1_000);
    expect(gateway.dataRequests()).toHaveLength(2);
  });

  it('waits until the Retry-After HTTP-date of a 429', async () => {
    let retryAt = 0;
    // Between one and two seconds after "now" on the client's clock, whole seconds as HTTP-dates are.
    const clock = new FixedClock('2026-11-16T12:00:00.250Z');
    const gateway = await startGateway(
      flaky(1, (res) => {
        retryAt = Math.ceil((clock.now().getTime() + 1000) / 1000) * 1000;
        sendJson(res, 429, {}, { 'retry-after': new Date(retryAt).toUTCString() });
      }),
    );
    await makeClient(gateway, { clock }).client.listBalances();
    expect(gateway.dataRequests()).toHaveLength(2);
    expect(clock.now().getTime()).toBe(retryAt);
  });

  it('fails at once when Retry-After asks for more than maxRetryAfterMs', async () => {
    const gateway = await startGateway(flaky(5, (res) => sendJson(res, 429, {}, { 'retry-after': '3600' })));
    const clock = new FixedClock('2026-11-16T12:00:00Z');
    const h = makeClient(gateway, { maxRetryAfterMs: 5_000, clock });
    const error = await failure(h.client.listBalances());
    // Not a moment waited, on the clock the client waits on.
    expect(clock.now().toISOString()).toBe('2026-11-16T12:00:00.000Z');
    expect(error).toBeInstanceOf(HttpError);
    expect(error.message).toBe(
      'GET /v1/data/wallets/balances answered 429 and asked to wait 3600 s before retrying, more than the 5 s allowed (maxRetryAfterMs); gave up after 1 attempt (account "eu-main").',
    );
    expect(gateway.dataRequests()).toHaveLength(1);
  });

  it('rides out a burst of 503s', async () => {
    const gateway = await startGateway(flaky(3, (res) => sendJson(res, 503, {})));
    const h = makeClient(gateway);
    expect((await h.client.listBalances()).wallets).toHaveLength(1);
    expect(gateway.dataRequests()).toHaveLength(4);
    expect(h.client.requestCount).toBe(5);
  });

  it('names method, path, status and attempts when 5xx never stops', async () => {
    const gateway = await startGateway(flaky(100, (res) => sendJson(res, 502, {})));
    const h = makeClient(gateway, { retryAttempts: 2 });
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 502, method: 'GET', path: BALANCES });
    expect(error.message).toBe('GET /v1/data/wallets/balances answered 502 on every one of 3 attempts; the gateway is failing or limiting us (account "eu-main").');
    expectNothingSecret(h, gateway, error);
  });

  it('retries a reset connection', async () => {
    const gateway = await startGateway(flaky(2, (res) => res.socket?.destroy()));
    expect((await makeClient(gateway).client.listBalances()).wallets).toHaveLength(1);
    expect(gateway.dataRequests()).toHaveLength(3);
  });

  it('ends in a NetworkError when the connection keeps being reset', async () => {
    const gateway = await startGateway(flaky(100, (res) => res.socket?.destroy()));
    const h = makeClient(gateway, { retryAttempts: 1 });
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/^GET \/v1\/data\/wallets\/balances failed on the network after 2 attempts: ECONNRESET/);
    expectNothingSecret(h, gateway, error);
  });

  it('gives up on a request that hangs past the timeout', async () => {
    const gateway = await startGateway(flaky(100, () => undefined));
    const h = makeClient(gateway, { timeoutMs: 150, retryAttempts: 1 });
    // The gateway never answers: only the client's own timeout can end this (else the test's).
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toBe('GET /v1/data/wallets/balances got no answer in time after 2 attempts: no answer within 150 ms (account "eu-main").');
    expect(gateway.dataRequests()).toHaveLength(2);
    expectNothingSecret(h, gateway, error);
  });

  it('fails at once on other 4xx statuses', async () => {
    const gateway = await startGateway(flaky(100, (res) => sendJson(res, 404, {})));
    const error = await failure(makeClient(gateway).client.getWalletBalance('XAU'));
    expect(error).toBeInstanceOf(HttpError);
    expect(error.message).toBe('GET /v1/data/wallets/XAU/balance answered 404, a status that is not retried (account "eu-main").');
    expect(gateway.dataRequests()).toHaveLength(1);
  });

  it("puts the gateway's explanation of a 400 in the error and the log, with secrets masked and the length bounded", async () => {
    let echoed = '';
    const gateway = await startGateway((request, res, token) => {
      echoed = token ?? '';
      sendJson(res, 400, {
        code: 400,
        status: 'error',
        message: `per_page must be an integer from 1 to 100; you sent Authorization: Bearer ${token} and Secret-Key=${API_SECRET} with session=s3ss10n-abcdef ${'and more words '.repeat(40)}`,
      });
    });
    const h = makeClient(gateway, { perPage: 500 });
    const error = await failure(h.client.listBalances());
    expect(error).toBeInstanceOf(HttpError);
    expect(error.message).toMatch(
      /^GET \/v1\/data\/wallets\/balances\?per_page=500 answered 400, a status that is not retried; the gateway said: "per_page must be an integer from 1 to 100; you sent Authorization: Bearer \[redacted\] and Secret-Key=\[redacted\] with session=\[redacted\] and more words .*…" \(account "eu-main"\)\.$/,
    );
    const said = /the gateway said: "(.*)" \(account "eu-main"\)\.$/.exec(error.message)![1]!;
    expect(said.length).toBeLessThanOrEqual(300);
    expect(echoed).not.toBe('');
    const refused = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'gateway request' && l.status === 400);
    expect(refused).toMatchObject({ path: `${BALANCES}?per_page=500`, gatewayMessage: said });
    expectNothingSecret(h, gateway, error);
  });

  it("prefers the JSON error fields, else the body's text, and masks credential-like query values in the path", async () => {
    const gateway = await startGateway(async (request, res) => {
      if (request.path.endsWith('/XAU/balance')) return sendJson(res, 422, { error: 'invalid_request', error_description: 'wallet XAU is closed' });
      res.writeHead(409, { 'content-type': 'text/html' });
      res.end('<html><head><style>p{}</style></head><body><h1>Conflict</h1><p>wallet   XAG is being moved</p></body></html>');
    });
    const h = makeClient(gateway);
    expect((await failure(h.client.getWalletBalance('XAU'))).message).toBe(
      'GET /v1/data/wallets/XAU/balance answered 422, a status that is not retried; the gateway said: "wallet XAU is closed: invalid_request" (account "eu-main").',
    );
    expect((await failure(h.client.getWalletBalance('XAG'))).message).toBe(
      'GET /v1/data/wallets/XAG/balance answered 409, a status that is not retried; the gateway said: "Conflict wallet XAG is being moved" (account "eu-main").',
    );
    expect(pathWithQuery(new URL('https://g.example/v1/x?per_page=5&access_token=abc123&api_key=k&sig=zz&page=2'))).toBe(
      '/v1/x?per_page=5&access_token=[redacted]&api_key=[redacted]&sig=[redacted]&page=2',
    );
  });

  it('says what the gateway said when a retried status never goes away', async () => {
    const gateway = await startGateway(flaky(100, (res) => sendJson(res, 503, { message: 'maintenance until 03:00 UTC' })));
    const error = await failure(makeClient(gateway, { retryAttempts: 1 }).client.getWalletBalance('XAU'));
    expect(error.message).toBe(
      'GET /v1/data/wallets/XAU/balance answered 503 on every one of 2 attempts; the gateway is failing or limiting us; the gateway said: "maintenance until 03:00 UTC" (account "eu-main").',
    );
  });

  it('does not follow a redirect, so the credentials stay home', async () => {
    const elsewhere = await startServer((_r, res) => sendJson(res, 200, envelope('[]')));
    cleanups.push(() => elsewhere.close());
    const gateway = await startGateway(pagedBalances([[W(1)]]), (_r, res) => {
      res.writeHead(307, { location: `${elsewhere.url}/v1/auth/token` });
      res.end();
    });
    const error = await failure(makeClient(gateway).client.listBalances());
    expect(error).toBeInstanceOf(HttpError);
    expect(error.message).toContain('POST /v1/auth/token answered 307, a redirect, which is not followed');
    expect(elsewhere.requests).toHaveLength(0);
  });
});

describe('configuration, concurrency and stopping', () => {
  it('refuses http:// to a host that is not loopback', () => {
    expect(() => createGatewayClient({ baseUrl: 'http://gateway.example.com', apiKey: API_KEY, apiSecret: new Secret(API_SECRET), account: 'eu-main' })).toThrow(ConfigError);
    expect(() => createGatewayClient({ baseUrl: 'http://gateway.example.com', apiKey: API_KEY, apiSecret: new Secret(API_SECRET) })).toThrow(/uses http:\/\/ for a host that is not loopback/);
    expect(() => createGatewayClient({ baseUrl: 'https://gateway.example.com', apiKey: API_KEY, apiSecret: new Secret(API_SECRET), perPage: 0 })).toThrow(/perPage must be a whole number/);
  });

  it('keeps at most `concurrency` single-wallet reads in flight and returns them in input order', async () => {
    let inFlight = 0;
    let peak = 0;
    const gateway = await startGateway((request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      inFlight++;
      peak = Math.max(peak, inFlight);
      const currency = request.path.split('/')[4];
      setTimeout(() => {
        inFlight--;
        sendJson(res, 200, envelope(`{"currency":"${currency}","balance":${currency === 'AAA' ? 1 : 2}}`));
      }, currency === 'AAA' ? 60 : 10);
    });
    const currencies = ['AAA', 'BBB', 'CCC', 'DDD', 'EEE', 'FFF', 'GGG', 'HHH'];
    const done: number[] = [];
    const wallets = await makeClient(gateway, { concurrency: 3 }).client.getWalletBalances(currencies, { onProgress: (d) => done.push(d) });
    expect(wallets.map((w) => w.currency)).toEqual(currencies);
    expect(wallets[0]!.balance).toBe(1n);
    expect(peak).toBe(3);
    expect(done).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('spaces requests to respect maxRps', async () => {
    const gateway = await startGateway((request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      sendJson(res, 200, envelope(`{"currency":"${request.path.split('/')[4]}","balance":1}`));
    });
    // A clock that never moves and waits that return at once: each wait is the distance of its
    // request's slot from the first.
    const waits: number[] = [];
    const rateLimits = new GatewayRateLimits({ now: () => 0, sleep: async (ms) => void waits.push(ms) });
    await makeClient(gateway, { maxRps: 20, rateLimits }).client.getWalletBalances(['AAA', 'BBB', 'CCC', 'DDD', 'EEE']);
    // Six requests (token included), 50 ms apart.
    expect(waits.sort((a, b) => a - b)).toEqual([50, 100, 150, 200, 250]);
  });

  it('shares one rate budget between the clients of every account on one gateway origin', async () => {
    const gateway = await startGateway((request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      sendJson(res, 200, envelope(`{"currency":"${request.path.split('/')[4]}","balance":1}`));
    });
    // A clock that never moves and waits that return at once: each wait is then the distance
    // of its reserved slot from the first, so the waits show which requests shared a budget.
    const waits: number[] = [];
    const rateLimits = new GatewayRateLimits({ now: () => 0, sleep: async (ms) => void waits.push(ms) });
    const eu = makeClient(gateway, { maxRps: 10, rateLimits, account: 'eu-main' });
    const us = makeClient(gateway, { maxRps: 10, rateLimits, account: 'us-main' });
    await Promise.all([eu.client.getWalletBalances(['AAA', 'BBB', 'CCC']), us.client.getWalletBalances(['DDD', 'EEE', 'FFF'])]);
    const requests = eu.client.requestCount + us.client.requestCount;
    expect(requests).toBe(8);
    // One sequence of slots 100 ms apart for both clients, not two sequences starting at 0.
    expect(waits.sort((a, b) => a - b)).toEqual(Array.from({ length: requests - 1 }, (_, i) => (i + 1) * 100));
  });

  it('keeps one limiter per origin for the whole process, the stricter rate winning', () => {
    const a = processRateLimits.limiterFor('http://127.0.0.1:4010/base/', 5);
    expect(processRateLimits.limiterFor('http://127.0.0.1:4010', 5)).toBe(a);
    expect(processRateLimits.limiterFor('https://127.0.0.1:4010', 5)).not.toBe(a);
    const waits: number[] = [];
    const limits = new GatewayRateLimits({ now: () => 0, sleep: async (ms) => void waits.push(ms) });
    const limiter = limits.limiterFor('https://gw.example.com', 10);
    limits.limiterFor('https://gw.example.com/v1', 4);
    return Promise.all([limiter.acquire(), limiter.acquire()]).then(() => expect(waits).toEqual([250]));
  });

  it('stops on abort: the in-flight request is cancelled and no new one starts', async () => {
    const controller = new AbortController();
    const gateway = await startGateway((_request, _res, token) => {
      if (token) setTimeout(() => controller.abort(), 30);
      // never answers
    });
    // A timeout longer than the test's own: only the abort can end these requests.
    const h = makeClient(gateway, { signal: controller.signal, concurrency: 2, timeoutMs: 120_000 });
    const error = await failure(h.client.getWalletBalances(['AAA', 'BBB', 'CCC', 'DDD']));
    expect(error).toBeInstanceOf(InterruptedError);
    const sent = gateway.requests.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(gateway.requests.length).toBe(sent);
    expect(gateway.dataRequests()).toHaveLength(2);
    expect(await failure(h.client.listBalances())).toBeInstanceOf(InterruptedError);
    expect(gateway.requests.length).toBe(sent);
  });

  it('stops a retry wait on abort', async () => {
    const controller = new AbortController();
    const gateway = await startGateway((_request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      setTimeout(() => controller.abort(), 50);
      // Longer than the test's own timeout: only the abort can end the wait.
      sendJson(res, 503, {}, { 'retry-after': '55' });
    });
    const error = await failure(makeClient(gateway, { signal: controller.signal }).client.listBalances());
    expect(error).toBeInstanceOf(InterruptedError);
    expect(gateway.dataRequests()).toHaveLength(1);
  });

  it('stops a retry wait on abort when it waits on a given clock', async () => {
    const controller = new AbortController();
    const gateway = await startGateway((_request, res, token) => {
      if (!token) return sendJson(res, 401, {});
      sendJson(res, 503, {}, { 'retry-after': '30' });
    });
    // A clock whose waits end only when stopped, and the stop comes while the client waits on it.
    const waits: number[] = [];
    const clock: Clock = {
      now: () => new Date(),
      sleep: (ms, signal) =>
        new Promise<void>((_resolve, reject) => {
          waits.push(ms);
          signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
          setImmediate(() => controller.abort());
        }),
    };
    const error = await failure(makeClient(gateway, { signal: controller.signal, clock }).client.listBalances());
    expect(error).toBeInstanceOf(InterruptedError);
    expect(error.message).toMatch(/stopped while waiting to retry/);
    expect(waits).toEqual([30_000]);
    expect(gateway.dataRequests()).toHaveLength(1);
  });
});

describe('capturing a listing and its single reads together', () => {
  /** Pages at /balances, single wallets at /wallets/XXX/balance; `hold(page)` may delay a page. */
  function gatewayOf(pages: (readonly (readonly [string, string])[])[], options: { total?: number; hold?: (page: number) => Promise<void>; single?: (currency: string) => number } = {}) {
    const singlesSeen: string[] = [];
    const list = pagedBalances(pages, { total: options.total });
    return {
      singlesSeen,
      handler: (async (request, res, token) => {
        if (!token) return sendJson(res, 401, {});
        if (request.path === BALANCES) {
          await options.hold?.(Number(request.query.get('page') ?? '1'));
          return list(request, res, token);
        }
        const currency = request.path.split('/')[4]!;
        singlesSeen.push(currency);
        const status = options.single?.(currency) ?? 200;
        if (status !== 200) return sendJson(res, status, { code: status, status: 'error', message: 'no' });
        const balance = pages.flat().find(([c]) => c === currency)?.[1] ?? '0';
        sendJson(res, 200, envelope(`{"currency":"${currency}","balance":${balance}}`));
      }) satisfies DataHandler,
    };
  }

  it('starts the reads of a page before the next page is listed, and returns them in the listing order', async () => {
    let firstPageRead!: () => void;
    const readStarted = new Promise<void>((resolve) => (firstPageRead = resolve));
    // Page 2 is answered only once a wallet of page 1 has been read: a client that waited for the
    // whole listing would never get it (and the test would time out).
    const fake = gatewayOf(
      [
        [['EUR', '1'], ['USD', '2']],
        [['JPY', '3']],
      ],
      { hold: (page) => (page === 2 ? readStarted : Promise.resolve()) },
    );
    const gateway = await startGateway(async (request, res, token) => {
      if (request.path !== BALANCES) firstPageRead();
      await fake.handler(request, res, token);
    });
    const { listing, singles } = await makeClient(gateway, { perPage: 2 }).client.captureBalances();
    expect(listing.wallets.map((w) => w.currency)).toEqual(['EUR', 'USD', 'JPY']);
    expect(singles.map((w) => [w.currency, 'balance' in w ? w.balance : w.unconfirmed])).toEqual([
      ['EUR', 1n],
      ['USD', 2n],
      ['JPY', 3n],
    ]);
  });

  it('asks for the next page only once at most a few rounds of reads wait, so a fast listing cannot pile them up', async () => {
    const page1 = Array.from({ length: 10 }, (_, i) => [`A${String.fromCharCode(65 + i)}A`, String(i)] as const);
    const fake = gatewayOf([page1, [['ZZZ', '9']]]);
    let readsWhenPage2Asked = -1;
    const gateway = await startGateway(async (request, res, token) => {
      if (request.path === BALANCES && request.query.get('page') === '2') readsWhenPage2Asked = fake.singlesSeen.length;
      await fake.handler(request, res, token);
    });
    // One read at a time, so at most 4 may wait: page 2 comes after at least 6 of page 1's 10 reads.
    const { singles } = await makeClient(gateway, { perPage: 10, concurrency: 1 }).client.captureBalances();
    expect(singles).toHaveLength(11);
    expect(readsWhenPage2Asked).toBeGreaterThanOrEqual(6);
  });

  it('returns nothing when the listing fails, starts no read after it and leaves none running', async () => {
    // Two passes that do not add up: the listing is refused after its reads began.
    const fake = gatewayOf([[['EUR', '1'], ['USD', '2']], [['JPY', '3']]], { total: 9 });
    const gateway = await startGateway(fake.handler);
    const harness = makeClient(gateway, { perPage: 2, concurrency: 1 });
    const error = await harness.client.captureBalances().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toMatch(/held 3 distinct wallets but X-PH-Total said 9, and when listed again from the start it held 3 distinct wallets but X-PH-Total said 9/);
    const readsAtFailure = fake.singlesSeen.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(fake.singlesSeen.length).toBe(readsAtFailure);
    // Each wallet is read at most once however many passes listed it.
    expect(new Set(fake.singlesSeen).size).toBe(fake.singlesSeen.length);
  });

  it('fails with the first single read that fails for good after its retries, and stops the reads still waiting', async () => {
    const fake = gatewayOf([[['EUR', '1'], ['USD', '2'], ['JPY', '3'], ['GBP', '4']]], { single: (c) => (c === 'EUR' ? 400 : 200) });
    const gateway = await startGateway(fake.handler);
    const error = await makeClient(gateway, { concurrency: 1 }).client.captureBalances().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect((error as Error).message).toMatch(/GET \/v1\/data\/wallets\/EUR\/balance answered 400/);
    expect(fake.singlesSeen).toEqual(['EUR']);
  });

  it('keeps a listed wallet whose single read answers 404 as unconfirmed, with the reason, and reads the others', async () => {
    const fake = gatewayOf([[['EUR', '1'], ['USD', '2'], ['XOF', '3']]], { single: (c) => (c === 'XOF' ? 404 : 200) });
    const gateway = await startGateway(fake.handler);
    const { singles } = await makeClient(gateway, { concurrency: 1 }).client.captureBalances();
    expect(singles.map((w) => ('balance' in w ? [w.currency, w.balance] : [w.currency, 'unconfirmed']))).toEqual([
      ['EUR', 1n],
      ['USD', 2n],
      ['XOF', 'unconfirmed'],
    ]);
    expect((singles[2] as { unconfirmed: string }).unconfirmed).toMatch(/XOF\/balance answered 404/);
  });
});
