import { describe, expect, it } from 'vitest';
import { PaginationError } from '../../src/errors.js';
import { collectBalancePages } from '../../src/gateway/balance-listing.js';
import type { BalancePage, PageProgress } from '../../src/gateway/gateway-types.js';
import { captureLogs } from '../helpers/capture-logs.js';

/**
 * Given the pages of one pass over the balance list, the merge keeps each wallet once, refuses
 * a wallet listed twice with different balances, and says when the listing's X-PH-Total cannot
 * be trusted — the completeness guard behind every snapshot.
 */

const where = ' (account "eu-main")';

type PageSpec = { items: Array<[string, bigint]>; totalItems?: number; totalPages?: number };

async function* pagesOf(specs: PageSpec[]): AsyncGenerator<BalancePage> {
  for (const [index, spec] of specs.entries()) {
    yield {
      items: spec.items.map(([currency, balance]) => ({ currency, balance })),
      page: index + 1,
      totalItems: spec.totalItems,
      totalPages: spec.totalPages,
      url: `http://127.0.0.1/v1/data/wallets/balances?page=${index + 1}`,
    };
  }
}

function collect(specs: PageSpec[], onProgress?: (p: PageProgress) => void) {
  const logs = captureLogs();
  return { logs, pass: collectBalancePages(pagesOf(specs), { logger: logs.logger, where, onProgress }) };
}

describe('collectBalancePages', () => {
  it('merges the pages into one wallet per currency and reports what the gateway said', async () => {
    const { pass } = collect([
      { items: [['EUR', 100n], ['USD', -5n]], totalItems: 3, totalPages: 2 },
      { items: [['GBP', 9_007_199_254_740_993n]], totalItems: 3, totalPages: 2 },
    ]);
    expect(await pass).toEqual({
      wallets: [
        { currency: 'EUR', balance: 100n },
        { currency: 'USD', balance: -5n },
        { currency: 'GBP', balance: 9_007_199_254_740_993n },
      ],
      pagesFetched: 2,
      totalReported: 3,
      totalPagesReported: 2,
      mismatch: undefined,
    });
  });

  it('says a listing that ends before X-PH-TotalPages is incomplete, with or without X-PH-Total', async () => {
    const withoutTotal = await collect([{ items: [['EUR', 1n]], totalPages: 3 }, { items: [['USD', 2n]], totalPages: 3 }]).pass;
    expect(withoutTotal.mismatch).toBe('ended after 2 pages although X-PH-TotalPages said 3');
    const oneOfTwo = await collect([{ items: [['EUR', 1n]], totalItems: 1, totalPages: 2 }]).pass;
    expect(oneOfTwo.mismatch).toBe('ended after 1 page although X-PH-TotalPages said 2');
  });

  it('keeps a wallet repeated with the same balance once (a page boundary that shifted) and logs the merge', async () => {
    const { pass, logs } = collect([
      { items: [['EUR', 100n], ['USD', 7n]], totalItems: 3 },
      { items: [['USD', 7n], ['JPY', 1n]], totalItems: 3 },
    ]);
    const result = await pass;
    expect(result.wallets.map((w) => w.currency)).toEqual(['EUR', 'USD', 'JPY']);
    expect(result.mismatch).toBeUndefined();
    expect(logs.lines()).toContainEqual(expect.objectContaining({ level: 20, msg: 'identical repeated wallet merged', currency: 'USD', page: 2, firstPage: 1 }));
  });

  it('refuses a wallet listed twice with different balances, naming both balances and pages', async () => {
    const { pass } = collect([{ items: [['EUR', 100n]] }, { items: [['USD', 1n], ['EUR', 101n]] }]);
    const error = await pass.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toBe(
      'The balance list reports wallet EUR twice with different balances (100 on page 1, 101 on page 2); the listing cannot be trusted (account "eu-main").',
    );
  });

  it('says the listing cannot be trusted when X-PH-Total changed while the list was being read', async () => {
    const { pass } = collect([
      { items: [['EUR', 1n]], totalItems: 2 },
      { items: [['USD', 1n]], totalItems: 3 },
      { items: [['JPY', 1n]], totalItems: 3 },
    ]);
    // Three wallets and a final total of 3 would add up: only the change itself gives it away.
    expect((await pass).mismatch).toBe('changed its X-PH-Total while being read (2, then 3)');
  });

  it('says how many distinct wallets it held when they miss X-PH-Total', async () => {
    expect((await collect([{ items: [['EUR', 1n], ['USD', 2n]], totalItems: 3 }]).pass).mismatch).toBe('held 2 distinct wallets but X-PH-Total said 3');
    expect((await collect([{ items: [['EUR', 1n]], totalItems: 2 }]).pass).mismatch).toBe('held 1 distinct wallet but X-PH-Total said 2');
    // A repeat counts once: two entries, one wallet, and X-PH-Total said 2.
    expect((await collect([{ items: [['EUR', 1n]], totalItems: 2 }, { items: [['EUR', 1n]], totalItems: 2 }]).pass).mismatch).toBe(
      'held 1 distinct wallet but X-PH-Total said 2',
    );
  });

  it('compares with X-PH-Total when only some pages carry it', async () => {
    const result = await collect([{ items: [['EUR', 1n]] }, { items: [['USD', 1n]], totalItems: 2 }]).pass;
    expect(result).toMatchObject({ mismatch: undefined, totalReported: 2 });
  });

  it('has nothing to compare without X-PH-Total', async () => {
    const result = await collect([{ items: [['EUR', 1n]] }, { items: [] }]).pass;
    expect(result).toMatchObject({ mismatch: undefined, totalReported: undefined, totalPagesReported: undefined, pagesFetched: 2 });
  });

  it('reports progress after every page, counting distinct wallets, and logs each page', async () => {
    const progress: PageProgress[] = [];
    const { pass, logs } = collect(
      [
        { items: [['EUR', 1n], ['USD', 2n]], totalItems: 3, totalPages: 2 },
        { items: [['USD', 2n], ['JPY', 3n]], totalItems: 3, totalPages: 2 },
      ],
      (p) => progress.push(p),
    );
    await pass;
    expect(progress).toEqual([
      { page: 1, totalPages: 2, items: 2, totalItems: 3 },
      { page: 2, totalPages: 2, items: 3, totalItems: 3 },
    ]);
    const pageLines = logs.lines().filter((l) => l.msg === 'gateway balance page');
    expect(pageLines).toEqual([
      expect.objectContaining({ level: 30, page: 1, totalPages: 2, items: 2, totalItems: 3, pageItems: 2 }),
      expect.objectContaining({ level: 30, page: 2, totalPages: 2, items: 3, totalItems: 3, pageItems: 2 }),
    ]);
  });

  it('works without a progress callback', async () => {
    const logs = captureLogs();
    const result = await collectBalancePages(pagesOf([{ items: [['EUR', 1n]], totalItems: 1 }]), { logger: logs.logger, where });
    expect(result.wallets).toEqual([{ currency: 'EUR', balance: 1n }]);
  });
});
