import { describe, expect, it } from 'vitest';
import type { IssuedToken } from '../../src/gateway/token-response.js';
import { TokenStore } from '../../src/gateway/access-token-store.js';

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
    const store = new TokenStore(issue, { now: () => clock.now });
    expect(await Promise.all([store.get(), store.get(), store.get()])).toEqual(['t1', 't1', 't1']);
    expect(await store.get()).toBe('t1');
    expect(count()).toBe(1);
  });

  it('renews 30 s before a long expiry', async () => {
    const clock = { now: 0 };
    const { issue, count } = issuer(3_600_000, clock);
    const store = new TokenStore(issue, { now: () => clock.now });
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
    const store = new TokenStore(issue, { now: () => clock.now });
    await store.get();
    clock.now = 8_999;
    expect(await store.get()).toBe('t1');
    clock.now = 9_000;
    expect(await Promise.all(Array.from({ length: 10 }, () => store.get()))).toEqual(Array(10).fill('t2'));
    expect(count()).toBe(2);
  });

  it('renews a token refused after it served, once for all the requests in flight with it', async () => {
    const clock = { now: 0 };
    const { issue, count } = issuer(undefined, clock);
    const store = new TokenStore(issue, { now: () => clock.now });
    const stale = await store.get();
    for (let i = 0; i < 4; i++) store.begin(stale);
    store.finish(stale, true);
    const verdicts = await Promise.all([store.refused(stale), store.refused(stale), store.refused(stale)]);
    expect(verdicts).toEqual(['retry', 'retry', 'retry']);
    expect(await Promise.all([store.get(), store.get()])).toEqual(['t2', 't2']);
    expect(count()).toBe(2);
    expect(store.revocations).toBe(1);
  });

  it('calls a token refused on its first use a refusal, once every request with it has answered', async () => {
    const store = new TokenStore(issuer(undefined, { now: 0 }).issue);
    const token = await store.get();
    store.begin(token);
    store.begin(token);
    const first = store.refused(token);
    const second = store.refused(token);
    expect(await Promise.all([first, second])).toEqual(['refused-on-first-use', 'refused-on-first-use']);
    expect(store.revocations).toBe(0);
  });

  it('waits for the other requests before judging a 401: a later acceptance makes it a revocation', async () => {
    const store = new TokenStore(issuer(undefined, { now: 0 }).issue);
    const token = await store.get();
    store.begin(token);
    store.begin(token);
    const verdict = store.refused(token);
    store.finish(token, true);
    expect(await verdict).toBe('retry');
  });

  it('stops after the allowed number of revocations', async () => {
    const store = new TokenStore(issuer(undefined, { now: 0 }).issue, { maxRevocations: 2 });
    const verdicts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const token = await store.get();
      store.begin(token);
      store.finish(token, true);
      store.begin(token);
      verdicts.push(await store.refused(token));
    }
    expect(verdicts).toEqual(['retry', 'retry', 'too-many-revocations']);
    expect(store.revocations).toBe(2);
  });

  it('reports every issued token, and forgets them all when cleared', async () => {
    const issued: string[] = [];
    const forgotten: string[] = [];
    const store = new TokenStore(issuer(undefined, { now: 0 }).issue, { onIssued: (v) => issued.push(v), onForgotten: (v) => forgotten.push(v) });
    const token = await store.get();
    store.begin(token);
    store.finish(token, true);
    store.begin(token);
    await store.refused(token);
    await store.get();
    store.clear();
    expect(issued).toEqual(['t1', 't2']);
    expect(forgotten.sort()).toEqual(['t1', 't2']);
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
