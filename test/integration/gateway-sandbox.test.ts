import { afterEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { createGatewayClient, type GatewayClient, type GatewayClientOptions } from '../../src/gateway/index.js';
import { createLogger } from '../../src/logger.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { Secret } from '../../src/secret.js';

/** Given the emulator, with or without faults, the client lists exactly the emulator's balances. */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sandboxWith(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await startSandbox({ port: 0, ...options });
  cleanups.push(() => sandbox.close());
  return sandbox;
}

function clientFor(sandbox: Sandbox, overrides: Partial<GatewayClientOptions> = {}, logs: string[] = []): GatewayClient {
  const client = createGatewayClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    apiSecret: new Secret(sandbox.apiSecret),
    account: 'sandbox',
    timeoutMs: 2_000,
    retryBaseDelayMs: 5,
    logger: createLogger({ level: 'debug', destination: { write: (line: string) => void logs.push(line) } }),
    ...overrides,
  });
  cleanups.push(() => client.close());
  return client;
}

describe('gateway client against the sandbox emulator', () => {
  it('says what the emulator said when it refuses a request, in the error and the log, query included', async () => {
    const sandbox = await sandboxWith({ wallets: 3 });
    const logs: string[] = [];
    const client = clientFor(sandbox, { perPage: 500 }, logs);
    const error = await client.listBalances().then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toBe(
      'GET /v1/data/wallets/balances?per_page=500 answered 400, a status that is not retried; the gateway said: "per_page must be an integer from 1 to 100 (got "500")" (account "sandbox").',
    );
    const refused = logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'gateway request' && l.status === 400);
    expect(refused).toMatchObject({ path: '/v1/data/wallets/balances?per_page=500', gatewayMessage: 'per_page must be an integer from 1 to 100 (got "500")' });
  });

  it('lists exactly the emulator balances, identically for per_page 1, 7 and 100', async () => {
    const sandbox = await sandboxWith({ wallets: 23 });
    const expected = sandbox.wallets.map((w) => ({ currency: w.currency, balance: w.balance }));
    expect(expected).toHaveLength(23);
    for (const perPage of [1, 7, 100]) {
      const listing = await clientFor(sandbox, { perPage }).listBalances();
      expect(listing.wallets).toEqual(expected);
      expect(listing.totalReported).toBe(23);
      expect(listing.pagesFetched).toBe(Math.ceil(23 / perPage));
      expect(listing.totalPagesReported).toBe(Math.ceil(23 / perPage));
    }
  });

  it('keeps a balance beyond 2^53 exact', async () => {
    const sandbox = await sandboxWith({ wallets: 5 });
    sandbox.setBalance(sandbox.wallets[2]!.currency, 2n ** 53n + 1n);
    const listing = await clientFor(sandbox).listBalances();
    expect(listing.wallets[2]!.balance).toBe(9007199254740993n);
  });

  it('returns exactly the emulator balances despite failures, dropped connections and a rate limit', async () => {
    // The emulator's rate limit refills on the clock the client waits on (backoff, Retry-After of
    // one second), a virtual one: what is refused and retried does not depend on the machine's speed.
    const clock = new FixedClock('2026-11-22T10:00:00Z');
    const sandbox = await sandboxWith({ wallets: 30, failRate: 0.2, dropRate: 0.05, rateLimit: 20, seed: 7, now: () => clock.now(), rateLimitOnClock: true });
    const expected = sandbox.wallets.map((w) => ({ currency: w.currency, balance: w.balance }));
    const logs: string[] = [];
    // More retries than the default: with a 25 % fault rate, five misses in a row happen now and then.
    const client = clientFor(sandbox, { perPage: 7, retryAttempts: 10, concurrency: 8, clock }, logs);
    for (let run = 0; run < 3; run++) expect((await client.listBalances()).wallets).toEqual(expected);
    // Eight reads at once against a bucket of five: three are refused with 429 and waited out.
    sandbox.setFaults({ rateLimit: 5 });
    const sample = expected.slice(0, 8);
    const singles = await client.getWalletBalances(sample.map((w) => w.currency));
    expect(singles.map((w) => ({ currency: w.currency, balance: w.balance }))).toEqual(sample);
    const all = logs.join('\n');
    // The faults really happened and were ridden out: 500/502/503, 429 and resets alike.
    const retried = logs.map((l) => JSON.parse(l) as { msg: string; status?: number; problem?: string }).filter((l) => l.msg === 'gateway request will be retried');
    expect(retried.some((l) => l.status === 429)).toBe(true);
    expect(retried.some((l) => l.status !== undefined && l.status >= 500)).toBe(true);
    expect(retried.some((l) => l.problem?.startsWith('ECONNRESET'))).toBe(true);
    expect(client.requestCount).toBe(3 * 5 + 8 + sandbox.stats.tokensIssued + retried.length);
    expect(all).not.toContain(sandbox.apiSecret);
  });

  it('reads single wallets with bounded concurrency and a request rate cap', async () => {
    const sandbox = await sandboxWith({ wallets: 12, failRate: 0.1, rateLimit: 50, seed: 3 });
    const expected = sandbox.wallets.map((w) => ({ currency: w.currency, balance: w.balance }));
    const client = clientFor(sandbox, { concurrency: 4, maxRps: 40, retryAttempts: 10 });
    const reversed = [...expected].reverse();
    expect(await client.getWalletBalances(reversed.map((w) => w.currency))).toEqual(reversed);
  });

  it('renews the token when the emulator revokes it', async () => {
    const sandbox = await sandboxWith({ wallets: 4 });
    const client = clientFor(sandbox);
    await client.listBalances();
    sandbox.revokeTokens();
    expect((await client.listBalances()).wallets).toHaveLength(4);
    expect(sandbox.stats.tokensIssued).toBe(2);
  });

  it('renews the token when the emulator says it expired', async () => {
    let now = Date.now();
    const sandbox = await sandboxWith({ wallets: 4, now: () => new Date(now) });
    const client = clientFor(sandbox);
    await client.getWalletBalance(sandbox.wallets[0]!.currency);
    now += 2 * 3600 * 1000;
    await client.getWalletBalance(sandbox.wallets[1]!.currency);
    expect(sandbox.stats.tokensIssued).toBe(2);
  });
});
