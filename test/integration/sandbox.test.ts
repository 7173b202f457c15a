import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { registerSandboxCommand } from '../../src/cli/sandbox-command.js';
import { UsageError } from '../../src/errors.js';
import { generateWallets, startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';

const TOKEN_PATH = '/v1/auth/token';
const BALANCES_PATH = '/v1/data/wallets/balances';

interface Envelope<T> {
  code: number;
  status: string;
  message: string;
  data: T;
}

let sandbox: Sandbox;
const started: Sandbox[] = [];

async function start(options: SandboxOptions = {}): Promise<Sandbox> {
  const instance = await startSandbox({ port: 0, ...options });
  started.push(instance);
  return instance;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

function requestToken(target: Sandbox, credentials: { apiKey?: string; apiSecret?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
  const secret = 'apiSecret' in credentials ? credentials.apiSecret : target.apiSecret;
  if (secret !== undefined) headers['Secret-Key'] = secret;
  const apiKey = 'apiKey' in credentials ? credentials.apiKey : target.apiKey;
  return fetch(`${target.url}${TOKEN_PATH}`, { method: 'POST', headers, body: JSON.stringify({ api_key: apiKey }) });
}

async function tokenFor(target: Sandbox): Promise<string> {
  const response = await requestToken(target);
  const body = (await response.json()) as Envelope<{ access_token: string }>;
  return body.data.access_token;
}

async function getWithToken(target: Sandbox, pathOrUrl: string, token?: string): Promise<Response> {
  const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${target.url}${pathOrUrl}`;
  return fetch(url, { headers: { Authorization: `Bearer ${token ?? (await tokenFor(target))}` } });
}

/** A minimal RFC 8288 reader: rel → URL. */
function parseLinks(header: string | null): Record<string, string> {
  const links: Record<string, string> = {};
  for (const match of (header ?? '').matchAll(/<([^>]*)>\s*;\s*rel="([^"]+)"/g)) links[match[2]!] = match[1]!;
  return links;
}

/** Currency codes in a list body, read from the raw text so balances keep their digits. */
function currenciesIn(text: string): string[] {
  return [...text.matchAll(/"currency":"([A-Z]{3})"/g)].map((m) => m[1]!);
}

describe('sandbox token endpoint', () => {
  beforeEach(async () => {
    sandbox = await start();
  });

  it('issues a bearer token for the right key and secret', async () => {
    const response = await requestToken(sandbox);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Envelope<{ access_token: string; token_type: string; expires_in: number }>;
    expect(body).toMatchObject({ code: 200, status: 'success', message: 'Token issued', data: { token_type: 'Bearer', expires_in: 3600 } });
    expect(body.data.access_token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(sandbox.stats.tokensIssued).toBe(1);
  });

  it('answers 401 with an error envelope for a wrong secret', async () => {
    const response = await requestToken(sandbox, { apiSecret: 'not-the-secret' });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ code: 401, status: 'error', message: 'Invalid API key or secret' });
  });

  it('answers 401 for a wrong API key', async () => {
    const response = await requestToken(sandbox, { apiKey: 'someone-else' });
    expect(response.status).toBe(401);
    expect(sandbox.stats.tokensIssued).toBe(0);
  });

  it('answers 401 when the Secret-Key header is missing', async () => {
    const response = await requestToken(sandbox, { apiSecret: undefined });
    expect(response.status).toBe(401);
    expect(((await response.json()) as Envelope<never>).message).toMatch(/Secret-Key/);
  });

  it('answers 400 for a body that is not JSON and 415 for another content type', async () => {
    const headers = { 'Content-Type': 'application/json', 'Secret-Key': sandbox.apiSecret };
    const garbled = await fetch(`${sandbox.url}${TOKEN_PATH}`, { method: 'POST', headers, body: '{"api_key": ' });
    expect(garbled.status).toBe(400);
    expect(await garbled.json()).toMatchObject({ code: 400, status: 'error' });
    const form = await fetch(`${sandbox.url}${TOKEN_PATH}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Secret-Key': sandbox.apiSecret },
      body: 'api_key=sandbox-key',
    });
    expect(form.status).toBe(415);
  });

  it('uses the credentials it was started with', async () => {
    const custom = await start({ apiKey: 'merchant-1', apiSecret: 's3cret' });
    expect((await requestToken(custom, { apiKey: 'merchant-1', apiSecret: 's3cret' })).status).toBe(200);
    expect((await requestToken(custom, { apiKey: 'sandbox-key', apiSecret: 'sandbox-secret' })).status).toBe(401);
  });
});

describe('sandbox authorization on data endpoints', () => {
  it('answers 401 without a token, with an unknown token and after revocation', async () => {
    sandbox = await start();
    const missing = await fetch(`${sandbox.url}${BALANCES_PATH}`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await missing.json()).toMatchObject({ code: 401, status: 'error' });
    expect((await getWithToken(sandbox, BALANCES_PATH, 'made-up-token')).status).toBe(401);

    const token = await tokenFor(sandbox);
    expect((await getWithToken(sandbox, BALANCES_PATH, token)).status).toBe(200);
    sandbox.revokeTokens();
    expect((await getWithToken(sandbox, BALANCES_PATH, token)).status).toBe(401);
  });

  it('expires tokens on the clock it was given', async () => {
    let now = new Date('2026-03-01T12:00:00Z');
    sandbox = await start({ now: () => now, tokenTtlSeconds: 60 });
    const token = await tokenFor(sandbox);
    now = new Date('2026-03-01T12:00:59Z');
    expect((await getWithToken(sandbox, BALANCES_PATH, token)).status).toBe(200);
    now = new Date('2026-03-01T12:01:00Z');
    const expired = await getWithToken(sandbox, BALANCES_PATH, token);
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as Envelope<never>).message).toMatch(/expired/);
  });
});

describe('sandbox balance listing', () => {
  let token: string;
  beforeEach(async () => {
    sandbox = await start({ wallets: 25 });
    token = await tokenFor(sandbox);
  });

  it('returns 10 wallets per page by default with the total headers', async () => {
    const response = await getWithToken(sandbox, BALANCES_PATH, token);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ph-total')).toBe('25');
    expect(response.headers.get('x-ph-totalpages')).toBe('3');
    const body = (await response.json()) as Envelope<Array<{ currency: string; balance: number }>>;
    expect(body).toMatchObject({ code: 200, status: 'success' });
    expect(body.data.map((w) => w.currency)).toEqual(sandbox.wallets.slice(0, 10).map((w) => w.currency));
    expect(sandbox.stats.balanceListRequests).toBe(1);
  });

  it('honours per_page and page', async () => {
    const response = await getWithToken(sandbox, `${BALANCES_PATH}?per_page=4&page=3`, token);
    expect(response.headers.get('x-ph-totalpages')).toBe('7');
    expect(currenciesIn(await response.text())).toEqual(sandbox.wallets.slice(8, 12).map((w) => w.currency));
  });

  it('starts at offset, which wins over page', async () => {
    const response = await getWithToken(sandbox, `${BALANCES_PATH}?per_page=5&page=4&offset=3`, token);
    expect(currenciesIn(await response.text())).toEqual(sandbox.wallets.slice(3, 8).map((w) => w.currency));
  });

  it('uses the configured posts_per_page when per_page is omitted', async () => {
    const small = await start({ wallets: 25, postsPerPage: 7 });
    const response = await getWithToken(small, BALANCES_PATH);
    expect(response.headers.get('x-ph-totalpages')).toBe('4');
    expect(currenciesIn(await response.text())).toHaveLength(7);
  });

  it('returns an empty page past the end, still with the headers', async () => {
    const response = await getWithToken(sandbox, `${BALANCES_PATH}?page=9`, token);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-ph-total')).toBe('25');
    expect(((await response.json()) as Envelope<unknown[]>).data).toEqual([]);
    expect(parseLinks(response.headers.get('link')).prev).toBe(`${sandbox.url}${BALANCES_PATH}?per_page=10&page=3`);
  });

  it.each(['per_page=0', 'per_page=101', 'per_page=abc', 'page=0', 'page=1.5', 'offset=-1', 'page=1&page=2'])('refuses %s with 400', async (query) => {
    const response = await getWithToken(sandbox, `${BALANCES_PATH}?${query}`, token);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 400, status: 'error' });
  });

  it('links first, prev, next and last on the first, a middle and the last page', async () => {
    const link = (page: number) => `${sandbox.url}${BALANCES_PATH}?per_page=10&page=${page}`;
    const first = parseLinks((await getWithToken(sandbox, BALANCES_PATH, token)).headers.get('link'));
    expect(first).toEqual({ first: link(1), next: link(2), last: link(3) });
    const middle = parseLinks((await getWithToken(sandbox, `${BALANCES_PATH}?page=2`, token)).headers.get('link'));
    expect(middle).toEqual({ first: link(1), prev: link(1), next: link(3), last: link(3) });
    const last = parseLinks((await getWithToken(sandbox, `${BALANCES_PATH}?page=3`, token)).headers.get('link'));
    expect(last).toEqual({ first: link(1), prev: link(2), last: link(3) });
  });

  it('visits every wallet exactly once by following next links', async () => {
    for (const start of [`${BALANCES_PATH}?per_page=6`, `${BALANCES_PATH}?per_page=6&offset=0`, `${BALANCES_PATH}?per_page=100`]) {
      const seen: string[] = [];
      let next: string | undefined = `${sandbox.url}${start}`;
      while (next) {
        const response = await getWithToken(sandbox, next, token);
        expect(response.status).toBe(200);
        seen.push(...currenciesIn(await response.text()));
        next = parseLinks(response.headers.get('link')).next;
      }
      expect(seen).toEqual(sandbox.wallets.map((w) => w.currency));
    }
  });

  it('writes balances beyond 2^53 as exact JSON integers', async () => {
    const text = await (await getWithToken(sandbox, `${BALANCES_PATH}?per_page=100`, token)).text();
    expect(text).toContain('"balance":9007199254740993}');
    sandbox.setBalance('USD', -(2n ** 70n));
    const single = await (await getWithToken(sandbox, '/v1/data/wallets/USD/balance', token)).text();
    expect(single).toContain(`"balance":${-(2n ** 70n)}}`);
  });

  it('reflects wallets added and removed while running', async () => {
    sandbox.addWallet('AAA', 1n);
    sandbox.removeWallet('USD');
    const text = await (await getWithToken(sandbox, `${BALANCES_PATH}?per_page=100`, token)).text();
    expect(currenciesIn(text)[0]).toBe('AAA');
    expect(currenciesIn(text)).not.toContain('USD');
    expect(() => sandbox.addWallet('usd', 1n)).toThrow(RangeError);
  });
});

describe('sandbox single wallet balance', () => {
  beforeEach(async () => {
    sandbox = await start();
  });

  it('returns the wallet in the success envelope', async () => {
    const eur = sandbox.wallets.find((w) => w.currency === 'EUR')!;
    const response = await getWithToken(sandbox, '/v1/data/wallets/EUR/balance');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(`{"code":200,"status":"success","message":"Wallet balance retrieved","data":{"currency":"EUR","balance":${eur.balance}}}`);
    expect(sandbox.stats.singleRequests).toBe(1);
  });

  it.each(['XYZ', 'usd', 'US', 'U%2FSD', '%E0%A4%A'])('answers 404 for currency %s', async (currency) => {
    const response = await getWithToken(sandbox, `/v1/data/wallets/${currency}/balance`);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 404, status: 'error' });
  });
});

describe('sandbox determinism', () => {
  it('serves the same wallets for the same seed', async () => {
    const a = await start({ seed: 42 });
    const b = await start({ seed: 42 });
    const bodyA = await (await getWithToken(a, `${BALANCES_PATH}?per_page=100`)).text();
    const bodyB = await (await getWithToken(b, `${BALANCES_PATH}?per_page=100`)).text();
    expect(bodyA).toBe(bodyB);
    expect(a.wallets).toEqual(generateWallets(12, 42));
  });
});

describe('sandbox faults', () => {
  it('answers 5xx with a JSON body at fail rate 1', async () => {
    sandbox = await start({ failRate: 1 });
    for (let i = 0; i < 6; i++) {
      const response = await fetch(`${sandbox.url}${BALANCES_PATH}`);
      expect([500, 502, 503]).toContain(response.status);
      expect(await response.json()).toMatchObject({ code: response.status, status: 'error' });
    }
    expect((await requestToken(sandbox)).status).toBeGreaterThanOrEqual(500);
  });

  it('fails the same requests for the same seed', async () => {
    const statuses = async (target: Sandbox) => {
      const token = await tokenFor(target);
      target.setFaults({ failRate: 0.5 });
      const out: number[] = [];
      for (let i = 0; i < 20; i++) out.push((await getWithToken(target, BALANCES_PATH, token)).status);
      return out;
    };
    const first = await statuses(await start({ seed: 9 }));
    expect(first).toContain(200);
    expect(first.some((s) => s >= 500)).toBe(true);
    expect(await statuses(await start({ seed: 9 }))).toEqual(first);
  });

  it('answers 429 with Retry-After beyond the rate limit', async () => {
    sandbox = await start();
    const token = await tokenFor(sandbox);
    sandbox.setFaults({ rateLimit: 2 });
    // The bucket holds two requests; ten sent at once cannot all be refilled for.
    const responses = await Promise.all(Array.from({ length: 10 }, () => getWithToken(sandbox, BALANCES_PATH, token)));
    const limited = responses.filter((r) => r.status === 429);
    expect(responses.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(2);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.headers.get('retry-after')).toBe('1');
    expect(await limited[0]!.json()).toMatchObject({ code: 429, status: 'error' });
  });

  it('resets the connection at drop rate 1', async () => {
    sandbox = await start({ dropRate: 1 });
    await expect(fetch(`${sandbox.url}${BALANCES_PATH}`)).rejects.toThrow(TypeError);
    await expect(requestToken(sandbox)).rejects.toThrow(TypeError);
    expect(sandbox.stats.requests).toBe(2);
  });

  it('delays answers by the configured latency', async () => {
    sandbox = await start();
    const token = await tokenFor(sandbox);
    sandbox.setFaults({ latencyMs: 150 });
    const startedAt = performance.now();
    expect((await getWithToken(sandbox, BALANCES_PATH, token)).status).toBe(200);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(145);
  });

  it('refuses fault settings out of range', async () => {
    sandbox = await start();
    expect(() => sandbox.setFaults({ failRate: 1.5 })).toThrow(/failRate must be a probability from 0 to 1/);
    await expect(startSandbox({ port: 0, postsPerPage: 101 })).rejects.toThrow(/postsPerPage must be an integer from 1 to 100/);
  });

  it('answers 503 to every request during an outage, then serves again', async () => {
    let now = Date.parse('2026-11-20T23:55:00Z');
    sandbox = await start({ outageMs: 40 * 60_000, now: () => new Date(now) });
    const down = await requestToken(sandbox);
    expect(down.status).toBe(503);
    expect(await down.json()).toMatchObject({ code: 503, status: 'error' });
    now += 40 * 60_000 - 1;
    expect((await fetch(`${sandbox.url}${BALANCES_PATH}`)).status).toBe(503);
    now += 1;
    expect((await requestToken(sandbox)).status).toBe(200);
    // Set while running, an outage starts then.
    sandbox.setFaults({ outageMs: 60_000 });
    expect((await requestToken(sandbox)).status).toBe(503);
  });

  it('closes promptly while a request waits out its latency', async () => {
    sandbox = await start({ latencyMs: 60_000 });
    const pending = fetch(`${sandbox.url}${BALANCES_PATH}`).catch((error: unknown) => error);
    while (sandbox.stats.requests === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await sandbox.close();
    expect(await pending).toBeInstanceOf(TypeError);
  });
});

describe('wallet-recon sandbox command', () => {
  async function runCommand(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ output: string; sandbox: Sandbox | undefined }> {
    let output = '';
    let running: Sandbox | undefined;
    const stop = new AbortController();
    const program = new Command('wallet-recon').exitOverride();
    registerSandboxCommand(program, {
      env,
      write: (text) => (output += text),
      stop: stop.signal,
      onListening: (instance) => {
        running = instance;
        stop.abort();
      },
    });
    await program.parseAsync(['node', 'wallet-recon', 'sandbox', ...args]);
    return { output, sandbox: running };
  }

  it('takes its secret from SANDBOX_API_SECRET, prints where it listens and the environment to use, never the secret', async () => {
    const env: NodeJS.ProcessEnv = { SANDBOX_API_SECRET: 'top-secret-value' };
    const { output, sandbox: ran } = await runCommand(['--port', '0', '--wallets', '30'], env);
    expect(ran!.apiSecret).toBe('top-secret-value');
    expect(output).toContain(`listening on ${ran!.url}`);
    expect(output).toContain(`GATEWAY_ENV=sandbox GATEWAY_SANDBOX_URL=${ran!.url} GATEWAY_API_KEY=sandbox-key GATEWAY_API_SECRET=<the value of SANDBOX_API_SECRET>`);
    expect(output).toContain('Wallets:     30');
    expect(output).not.toContain('top-secret-value');
    expect(output).toContain('Sandbox stopped.');
    expect(env.SANDBOX_API_SECRET).toBeUndefined();
  });

  it('takes its secret from the file named by SANDBOX_API_SECRET_FILE', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-secret-'));
    const file = path.join(dir, 'secret');
    writeFileSync(file, 'secret-from-a-file\n', { mode: 0o600 });
    const { sandbox: ran } = await runCommand(['--port', '0'], { SANDBOX_API_SECRET_FILE: file });
    expect(ran!.apiSecret).toBe('secret-from-a-file');
  });

  it('refuses a secret on the command line, where ps shows it, and says where it goes instead', async () => {
    const attempt = runCommand(['--port', '0', '--api-secret', 'top-secret-value']);
    await expect(attempt).rejects.toBeInstanceOf(UsageError);
    await expect(attempt).rejects.toThrow(/--api-secret is not accepted: .*Set SANDBOX_API_SECRET, or SANDBOX_API_SECRET_FILE/);
  });

  it('announces an outage given as a duration', async () => {
    const { output, sandbox: ran } = await runCommand(['--port', '0', '--outage', '40s']);
    expect(output).toContain('Faults:      outage (every request 503) for 40 s after start');
    expect(ran).toBeDefined();
  });

  it('prints the public default secret when none was given', async () => {
    const { output } = await runCommand(['--port', '0']);
    expect(output).toContain('GATEWAY_API_SECRET=sandbox-secret');
    expect(output).toContain('sandbox-secret (the public default)');
  });

  it.each([
    [['--port', '70000'], /--port must be an integer from 0/],
    [['--wallets', 'many'], /--wallets must be an integer from 0 to 17576 \(got "many"\)/],
    [['--posts-per-page', '0'], /--posts-per-page must be an integer from 1 to 100/],
    [['--token-ttl', '-5'], /--token-ttl must be an integer from 1/],
    [['--fail-rate', '2'], /--fail-rate must be a probability from 0 to 1/],
    [['--drop-rate', 'x'], /--drop-rate must be a probability/],
    [['--rate-limit', '1.5'], /--rate-limit must be an integer from 0/],
    [['--latency-ms', '-1'], /--latency-ms must be an integer from 0/],
    [['--api-key', ''], /--api-key must not be empty/],
    [['--outage', '40'], /--outage must be a duration such as 0s, 40s, 5m or 1h \(got "40"\)/],
    [['--outage', '8d'], /--outage must be a duration from 0 to 7 days/],
  ])('refuses %j with a usage error naming the flag', async (args, message) => {
    const attempt = runCommand(['--port', '0', ...args]);
    await expect(attempt).rejects.toBeInstanceOf(UsageError);
    await expect(attempt).rejects.toThrow(message);
  });
});
