import { describe, expect, it } from 'vitest';
import { PaginationError, ProtocolError } from '../../src/errors.js';
import { paginate, type FetchedPage, type Page, type PaginateOptions } from '../../src/gateway/paginate.js';

/**
 * Given a gateway whose pages say what they say (headers, Link lines), the paginator follows
 * next links only while every guard holds, and otherwise stops with an error the operator can
 * read: which listing, which page, what was wrong, and which account.
 */

const ORIGIN = 'https://gw.example';
const LIST = `${ORIGIN}/v1/data/wallets/balances`;
const where = ' (account "eu-main")';

interface FakePage {
  items?: string[];
  headers?: Record<string, string | string[] | undefined>;
  links?: string[];
  /** The URL that answered, when it is not the one requested (a redirect the transport followed). */
  answeredFrom?: string;
}

/** A gateway of fixed pages by URL; every URL asked for is recorded, and an unknown one fails the test. */
function fakeGateway(pages: Record<string, FakePage>) {
  const requested: string[] = [];
  const fetchPage = async (url: URL, page: number): Promise<FetchedPage<string>> => {
    requested.push(`${page} ${url.href}`);
    const answer = pages[url.href];
    if (answer === undefined) throw new Error(`test gateway has no page ${url.href}`);
    return { items: answer.items ?? [], headers: answer.headers ?? {}, linkHeaders: answer.links ?? [], url: new URL(answer.answeredFrom ?? url.href) };
  };
  return { requested, fetchPage };
}

function options(fetchPage: PaginateOptions<string>['fetchPage'], overrides: Partial<PaginateOptions<string>> = {}): PaginateOptions<string> {
  return { firstUrl: new URL(`${LIST}?page=1`), origin: ORIGIN, maxPages: 100, totalPagesSlack: 2, what: 'the balance list', where, fetchPage, ...overrides };
}

async function collect(opts: PaginateOptions<string>): Promise<{ pages: Page<string>[]; error: unknown }> {
  const pages: Page<string>[] = [];
  try {
    for await (const page of paginate(opts)) pages.push(page);
    return { pages, error: undefined };
  } catch (error) {
    return { pages, error };
  }
}

/** Pages 1..n of the list, each linking to the next by a relative link, the last to none. */
function chain(n: number, headers: Record<string, string> = {}): Record<string, FakePage> {
  const pages: Record<string, FakePage> = {};
  for (let p = 1; p <= n; p++) pages[`${LIST}?page=${p}`] = { items: [`w${p}`], headers, links: p < n ? [`<?page=${p + 1}>; rel="next"`] : [] };
  return pages;
}

describe('paginate: following next links', () => {
  it('yields every page in order with its number, counts and the URL that answered, then stops at a page without next', async () => {
    const gateway = fakeGateway(chain(3, { 'x-ph-total': '3', 'x-ph-totalpages': '3' }));
    const { pages, error } = await collect(options(gateway.fetchPage));
    expect(error).toBeUndefined();
    expect(pages).toEqual([
      { items: ['w1'], page: 1, totalItems: 3, totalPages: 3, url: `${LIST}?page=1` },
      { items: ['w2'], page: 2, totalItems: 3, totalPages: 3, url: `${LIST}?page=2` },
      { items: ['w3'], page: 3, totalItems: 3, totalPages: 3, url: `${LIST}?page=3` },
    ]);
    expect(gateway.requested).toEqual([`1 ${LIST}?page=1`, `2 ${LIST}?page=2`, `3 ${LIST}?page=3`]);
  });

  it('leaves the counts undefined when the gateway sends no X-PH headers', async () => {
    const { pages } = await collect(options(fakeGateway(chain(1)).fetchPage));
    expect(pages).toEqual([{ items: ['w1'], page: 1, totalItems: undefined, totalPages: undefined, url: `${LIST}?page=1` }]);
  });

  it('resolves a relative next link against the URL that answered, not the one requested', async () => {
    const gateway = fakeGateway({
      [`${LIST}?page=1`]: { answeredFrom: `${ORIGIN}/v2/list?page=1`, links: ['<?page=2>; rel="next"'] },
      [`${ORIGIN}/v2/list?page=2`]: {},
    });
    const { pages } = await collect(options(gateway.fetchPage));
    expect(pages.map((p) => p.url)).toEqual([`${ORIGIN}/v2/list?page=1`, `${ORIGIN}/v2/list?page=2`]);
  });

  it('accepts the same next target written twice on one page', async () => {
    const gateway = fakeGateway({
      [`${LIST}?page=1`]: { links: ['<?page=2>; rel="next"', `<${LIST}?page=2>; rel="next last"`] },
      [`${LIST}?page=2`]: {},
    });
    expect((await collect(options(gateway.fetchPage))).pages.map((p) => p.page)).toEqual([1, 2]);
  });

  it('reads a count header sent twice from its first value, with surrounding spaces', async () => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { headers: { 'x-ph-total': [' 12 ', '13'], 'x-ph-totalpages': ' 4' } } });
    const { pages } = await collect(options(gateway.fetchPage));
    expect(pages[0]).toMatchObject({ totalItems: 12, totalPages: 4 });
  });
});

describe('paginate: the guards', () => {
  it('refuses a next link to another origin before requesting it: our credentials stay with the gateway', async () => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { links: ['<https://evil.example/steal?page=2>; rel="next"'] } });
    const { pages, error } = await collect(options(gateway.fetchPage));
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toBe(
      'The balance list (page 1) points its next link to https://evil.example, not to the configured gateway https://gw.example; it was not requested, so our credentials stayed with the gateway (account "eu-main").',
    );
    expect(pages).toEqual([]);
    expect(gateway.requested).toEqual([`1 ${LIST}?page=1`]);
  });

  it('refuses a next link that only changes the scheme or the port of the same host', async () => {
    for (const target of ['http://gw.example/v1/data/wallets/balances?page=2', 'https://gw.example:8443/v1/data/wallets/balances?page=2']) {
      const gateway = fakeGateway({ [`${LIST}?page=1`]: { links: [`<${target}>; rel="next"`] } });
      const { error } = await collect(options(gateway.fetchPage));
      expect(error).toBeInstanceOf(PaginationError);
      expect((error as Error).message).toContain('not to the configured gateway https://gw.example');
      expect(gateway.requested).toHaveLength(1);
    }
  });

  it('stops a loop of next links, naming the page seen before but not the query', async () => {
    const gateway = fakeGateway({
      [`${LIST}?page=1&cursor=abc`]: { links: ['<?page=2>; rel="next"'] },
      [`${LIST}?page=2`]: { links: ['<?cursor=abc&page=1#top>; rel="next"'] },
    });
    const { pages, error } = await collect(options(gateway.fetchPage, { firstUrl: new URL(`${LIST}?page=1&cursor=abc`) }));
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toBe(
      'The balance list (page 2) names page 1 (/v1/data/wallets/balances) as its next page again: the pagination loops, so it was stopped (account "eu-main").',
    );
    expect(pages.map((p) => p.page)).toEqual([1]);
    expect(gateway.requested).toHaveLength(2);
  });

  it('stops a page that names itself as its next page', async () => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { links: ['<?page=1>; rel="next"'] } });
    const { error } = await collect(options(gateway.fetchPage));
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toContain('(page 1) names page 1');
  });

  it('stops after maxPages when the listing never ends', async () => {
    const gateway = fakeGateway(chain(10));
    const { pages, error } = await collect(options(gateway.fetchPage, { maxPages: 3 }));
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toBe(
      'The balance list did not end after 3 pages (maxPages); stopped so a gateway that never ends a listing cannot keep us busy forever (account "eu-main").',
    );
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3]);
    expect(gateway.requested).toHaveLength(3);
  });

  it('reads exactly maxPages pages when the listing ends there', async () => {
    const { pages, error } = await collect(options(fakeGateway(chain(3)).fetchPage, { maxPages: 3 }));
    expect(error).toBeUndefined();
    expect(pages).toHaveLength(3);
  });

  it('tolerates the slack beyond X-PH-TotalPages and stops at the page after it', async () => {
    const gateway = fakeGateway(chain(10, { 'x-ph-totalpages': '2' }));
    const { pages, error } = await collect(options(gateway.fetchPage, { totalPagesSlack: 1 }));
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toBe(
      'The balance list offered page 4 although X-PH-TotalPages said 2 (1 extra pages tolerated); stopped (account "eu-main").',
    );
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3]);
    expect(gateway.requested).toHaveLength(3);
  });

  it('reads a listing that ends exactly at X-PH-TotalPages plus the slack', async () => {
    const { pages, error } = await collect(options(fakeGateway(chain(3, { 'x-ph-totalpages': '2' })).fetchPage, { totalPagesSlack: 1 }));
    expect(error).toBeUndefined();
    expect(pages).toHaveLength(3);
  });

  it('keeps the last X-PH-TotalPages when a later page leaves the header out', async () => {
    const pages = chain(5);
    pages[`${LIST}?page=1`]!.headers = { 'x-ph-totalpages': '1' };
    const { error } = await collect(options(fakeGateway(pages).fetchPage, { totalPagesSlack: 1 }));
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toContain('offered page 3 although X-PH-TotalPages said 1');
  });

  it.each([
    ['x-ph-total', 'X-PH-Total', 'many'],
    ['x-ph-total', 'X-PH-Total', '-1'],
    ['x-ph-total', 'X-PH-Total', '1.5'],
    ['x-ph-total', 'X-PH-Total', ''],
    ['x-ph-total', 'X-PH-Total', '1234567890123456'],
    ['x-ph-total', 'X-PH-Total', '12abc'],
    ['x-ph-total', 'X-PH-Total', 'abc12'],
    ['x-ph-totalpages', 'X-PH-TotalPages', 'two'],
    ['x-ph-totalpages', 'X-PH-TotalPages', '1e3'],
  ])('refuses a %s header of %j that is not a whole number, naming the header', async (header, shown, value) => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { headers: { [header]: value } } });
    const { pages, error } = await collect(options(gateway.fetchPage));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toBe(`The balance list (page 1) has an ${shown} header that is not a whole number (account "eu-main").`);
    expect(pages).toEqual([]);
  });

  it('refuses a count header present without a value', async () => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { headers: { 'x-ph-total': [] } } });
    const { error } = await collect(options(gateway.fetchPage));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toContain('has an X-PH-Total header that is not a whole number');
  });

  it('accepts the largest count it reads (15 digits)', async () => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { headers: { 'x-ph-total': '999999999999999' } } });
    expect((await collect(options(gateway.fetchPage))).pages[0]!.totalItems).toBe(999_999_999_999_999);
  });

  it('refuses two different next pages on one page instead of guessing', async () => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { links: ['<?page=2>; rel="next"', '<?page=3>; rel="next"'] } });
    const { pages, error } = await collect(options(gateway.fetchPage));
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toBe('The balance list (page 1) names 2 different next pages; cannot tell which to follow (account "eu-main").');
    expect(pages).toEqual([]);
  });

  it('refuses a next link that is not a valid URL', async () => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { links: ['<http://[bad>; rel="next"'] } });
    const { pages, error } = await collect(options(gateway.fetchPage));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toBe('The balance list (page 1) has a next link that is not a valid URL (account "eu-main").');
    expect(pages).toEqual([]);
  });

  it('refuses an invalid next link even beside a valid one', async () => {
    const gateway = fakeGateway({ [`${LIST}?page=1`]: { links: ['<?page=2>; rel="next", <http://[bad>; rel="next"'] } });
    const { error } = await collect(options(gateway.fetchPage));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toContain('has a next link that is not a valid URL');
  });
});
