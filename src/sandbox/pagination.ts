import type { LinkRelation } from './link-header-writer.js';
import { MAX_PER_PAGE } from './sandbox-options.js';

/** Where one page of a listing starts, and how the client asked for it. */
export interface PageRequest {
  perPage: number;
  page: number;
  /** Set when the client paged by offset; it wins over `page` for the start index. */
  offset: number | undefined;
  start: number;
}

/** Reads `per_page`, `page` and `offset`; returns the problem text for a 400 when one is invalid. */
export function parsePageRequest(query: URLSearchParams, defaultPerPage: number): PageRequest | { problem: string } {
  const read = (name: string, min: number, max: number): number | string | undefined => {
    const values = query.getAll(name);
    if (values.length === 0) return undefined;
    if (values.length > 1) return `${name} was given ${values.length} times; give it once`;
    const text = values[0]!;
    const value = /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;
    if (!(value >= min && value <= max)) return `${name} must be an integer from ${min} to ${max} (got "${text}")`;
    return value;
  };
  const perPage = read('per_page', 1, MAX_PER_PAGE) ?? defaultPerPage;
  if (typeof perPage === 'string') return { problem: perPage };
  const page = read('page', 1, 999_999_999) ?? 1;
  if (typeof page === 'string') return { problem: page };
  // Offset counts from the first resource, so 0 is a valid start.
  const offset = read('offset', 0, 999_999_999);
  if (typeof offset === 'string') return { problem: offset };
  return { perPage, page, offset, start: offset ?? (page - 1) * perPage };
}

/** The total number of pages of `perPage` items; 0 for an empty listing. */
export function totalPages(total: number, perPage: number): number {
  return Math.ceil(total / perPage);
}

/**
 * Absolute URLs for first/prev/next/last, in the same style (page or offset) the client used,
 * always carrying per_page so a followed link never falls back to another page size.
 */
export function pageLinks(requestUrl: URL, request: PageRequest, total: number): Partial<Record<LinkRelation, string>> {
  const pages = totalPages(total, request.perPage);
  const lastPage = Math.max(pages, 1);
  const at = (params: { page?: number; offset?: number }): string => {
    const url = new URL(requestUrl);
    url.searchParams.delete('page');
    url.searchParams.delete('offset');
    url.searchParams.set('per_page', String(request.perPage));
    if (params.offset !== undefined) url.searchParams.set('offset', String(params.offset));
    if (params.page !== undefined) url.searchParams.set('page', String(params.page));
    return url.href;
  };
  const links: Partial<Record<LinkRelation, string>> = {};
  if (request.offset === undefined) {
    links.first = at({ page: 1 });
    if (request.page > 1) links.prev = at({ page: Math.min(request.page - 1, lastPage) });
    if (request.page < pages) links.next = at({ page: request.page + 1 });
    links.last = at({ page: lastPage });
  } else {
    // Links stay on the client's grid (offset + k × per_page), so following them never repeats an item.
    const phase = request.offset % request.perPage;
    const lastOffset = total > phase ? phase + Math.floor((total - 1 - phase) / request.perPage) * request.perPage : 0;
    links.first = at({ offset: 0 });
    if (request.offset > 0) links.prev = at({ offset: Math.min(Math.max(request.offset - request.perPage, 0), lastOffset) });
    if (request.offset + request.perPage < total) links.next = at({ offset: request.offset + request.perPage });
    links.last = at({ offset: lastOffset });
  }
  return links;
}
