import { describe, expect, it } from 'vitest';
import type { IssuedToken } from '../../src/gateway/token-response.js';
import { TokenStore } from '../../src/gateway/token-store.js';

function issuer(lifetimeMs: number | undefined, clock: { now: number }) {
  let issued = 0;
  const issue = async (): Promise<IssuedToken> => {
    issued++;
    await new Promise((r) => setTimeout(r, 5));
    return { value: `t${issued}`, expiresAt: lifetimeMs === undefined ? undefined : clock.now + lifetimeMs };
  };
  return { issue, count: () => issued };
}

describe('TokenStore', () => {
  it('issues once for concurrent first use (single-flight) and then reuses the token', async () => {
    const clock = { now: 0 };
    const { issue, count } = issuer(undefined, clock);
    const store = new TokenStore(issue, () => clock.now);
    expect(await Promise.all([store.get(), store.get(), store.get()])).toEqual(['t1', 't1', 't1']);
    expect(await store.get()).toBe('t1');
    expect(count()).toBe(1);
  });

  it('renews 30 s before a long expiry', async () => {
    const clock = { now: 0 };
    const { issue, count } = issuer(3_600_000, clock);
    const store = new TokenStore(issue, () => clock.now);
    await store.get();
    clock.now = 3_600_000 - 30_001;
    expect(await store.get()).toBe('t1');
    clock.now = 3_600_000 - 30_000;
    expect(await store.get()).toBe('t2');
    expect(count()).toBe(2);
  });

  it('renews at 90 % of a short lifetime, once for many waiting callers', async () => {
    const clock = { now: 0 };
    const { issue, count } = issuer(10_000, clock);
    const store = new TokenStore(issue, () => clock.now);
    await store.get();
    clock.now = 8_999;
    expect(await store.get()).toBe('t1');
    clock.now = 9_000;
    expect(await Promise.all(Array.from({ length: 10 }, () => store.get()))).toEqual(Array(10).fill('t2'));
    expect(count()).toBe(2);
  });

  it('invalidates only the rejected token, so many 401s cause one renewal', async () => {
    const clock = { now: 0 };
    const { issue, count } = issuer(undefined, clock);
    const store = new TokenStore(issue, () => clock.now);
    const stale = await store.get();
    store.invalidate(stale);
    const renewed = store.get();
    store.invalidate(stale);
    expect(await Promise.all([renewed, store.get()])).toEqual(['t2', 't2']);
    store.invalidate(stale);
    expect(await store.get()).toBe('t2');
    expect(count()).toBe(2);
  });

  it('lets the next caller try again after a failed renewal', async () => {
    let calls = 0;
    const store = new TokenStore(async () => {
      calls++;
      if (calls === 1) throw new Error('refused');
      return { value: 'ok', expiresAt: undefined };
    });
    await expect(store.get()).rejects.toThrow('refused');
    expect(await store.get()).toBe('ok');
  });
});
