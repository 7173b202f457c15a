import { PaginationError, ProtocolError } from '../errors.js';
import { findLinks } from './link-header-parser.js';

/** A page as the fetcher returns it: items already validated, plus what pagination needs. */
export interface FetchedPage<T> {
  items: T[];
  headers: Record<string, string | string[] | undefined>;
  /** Each Link header line. */
  linkHeaders: string[];
  /** The URL that answered; relative next links resolve against it. */
  url: URL;
}

/** One page of a listing. */
export interface Page<T> {
  items: T[];
  /** 1-based position in this listing. */
  page: number;
  totalItems?: number;
  totalPages?: number;
  url: string;
}

export interface PaginateOptions<T> {
  /** The first page's URL, `per_page` included. */
  firstUrl: URL;
  /** The only origin next links may point to (the configured base URL's). */
  origin: string;
  maxPages: number;
  /** How many pages beyond X-PH-TotalPages are tolerated (a listing that grew meanwhile). */
  totalPagesSlack: number;
  /** Names the listing in messages: "the balance list". */
  what: string;
  /** Appended to messages: ` (account "x")`. */
  where: string;
  fetchPage(url: URL, page: number): Promise<FetchedPage<T>>;
}

/** Extra pages tolerated beyond X-PH-TotalPages before the listing is declared runaway. */
export const DEFAULT_TOTAL_PAGES_SLACK = 2;

/**
 * The generic paginator: fetches the first page, then follows `Link: rel="next"` until a page
 * has none. Before any next link is requested it must be on the configured origin (our
 * credentials go with every request), not yet visited, and within X-PH-TotalPages + slack and
 * maxPages — each breach ends the listing with PaginationError.
 */
export async function* paginate<T>(options: PaginateOptions<T>): AsyncGenerator<Page<T>, void, undefined> {
  const { what, where } = options;
  const visited = new Map<string, number>();
  let url: URL | undefined = options.firstUrl;
  let totalPages: number | undefined;
  for (let page = 1; url !== undefined; page++) {
    if (page > options.maxPages) {
      throw new PaginationError(
        `${capitalize(what)} did not end after ${options.maxPages} pages (maxPages); stopped so a gateway that never ends a listing cannot keep us busy forever${where}.`,
      );
    }
    if (totalPages !== undefined && page > totalPages + options.totalPagesSlack) {
      throw new PaginationError(
        `${capitalize(what)} offered page ${page} although X-PH-TotalPages said ${totalPages} (${options.totalPagesSlack} extra pages tolerated); stopped${where}.`,
      );
    }
    visited.set(pageKey(url), page);
    const fetched = await options.fetchPage(url, page);
    const totalItems = readCountHeader(fetched.headers, 'x-ph-total', what, page, where);
    totalPages = readCountHeader(fetched.headers, 'x-ph-totalpages', what, page, where) ?? totalPages;
    const next = nextLink(fetched, what, page, where);
    if (next !== undefined) {
      if (next.origin !== options.origin) {
        throw new PaginationError(
          `${capitalize(what)} (page ${page}) points its next link to ${next.origin}, not to the configured gateway ${options.origin}; it was not requested, so our credentials stayed with the gateway${where}.`,
        );
      }
      const seenAt = visited.get(pageKey(next));
      if (seenAt !== undefined) {
        // The query is left out of the message: it is the gateway's and may carry a cursor.
        throw new PaginationError(
          `${capitalize(what)} (page ${page}) names page ${seenAt} (${next.pathname}) as its next page again: the pagination loops, so it was stopped${where}.`,
        );
      }
    }
    yield { items: fetched.items, page, totalItems, totalPages, url: fetched.url.href };
    url = next;
  }
}

function nextLink(fetched: FetchedPage<unknown>, what: string, page: number, where: string): URL | undefined {
  const links = findLinks(fetched.linkHeaders, fetched.url, 'next');
  if (links.length === 0) return undefined;
  const hrefs = new Set<string>();
  for (const link of links) {
    if (link.url === undefined) throw new ProtocolError(`${capitalize(what)} (page ${page}) has a next link that is not a valid URL${where}.`);
    hrefs.add(link.url.href);
  }
  if (hrefs.size > 1) throw new PaginationError(`${capitalize(what)} (page ${page}) names ${hrefs.size} different next pages; cannot tell which to follow${where}.`);
  return links[0]!.url;
}

function readCountHeader(headers: FetchedPage<unknown>['headers'], name: string, what: string, page: number, where: string): number | undefined {
  const raw = headers[name];
  if (raw === undefined) return undefined;
  const text = (Array.isArray(raw) ? raw[0] : raw)?.trim() ?? '';
  if (!/^\d{1,15}$/.test(text)) {
    throw new ProtocolError(`${capitalize(what)} (page ${page}) has an ${headerName(name)} header that is not a whole number${where}.`);
  }
  return Number(text);
}

function headerName(name: string): string {
  return name === 'x-ph-total' ? 'X-PH-Total' : name === 'x-ph-totalpages' ? 'X-PH-TotalPages' : name;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The same page whatever the order of its query parameters: `?page=1&per_page=5` is `?per_page=5&page=1`. */
function pageKey(url: URL): string {
  const normalized = new URL(url.href);
  normalized.hash = '';
  normalized.searchParams.sort();
  return normalized.href;
}
