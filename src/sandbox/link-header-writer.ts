/** Relations the emulator advertises, in the order they are written. */
export type LinkRelation = 'first' | 'prev' | 'next' | 'last';

/** Formats an RFC 8288 `Link` header value: `<url>; rel="next", <url>; rel="last"`. */
export function formatLinkHeader(links: Partial<Record<LinkRelation, string>>): string {
  const order: LinkRelation[] = ['first', 'prev', 'next', 'last'];
  return order
    .filter((rel) => links[rel] !== undefined)
    .map((rel) => `<${links[rel]!}>; rel="${rel}"`)
    .join(', ');
}
