/**
 * A small RFC 8288 (Web Linking) parser. got's own parser splits on every comma and matches
 * `rel` literally, so a next URL containing a comma, `rel="next last"` or an unquoted `rel=next`
 * defeat it; this one follows the grammar:
 *
 *   Link       = #link-value
 *   link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )
 *   link-param = token BWS [ "=" BWS ( token / quoted-string ) ]
 */

/** One link of a Link header: its target as written, relation types (lower case) and parameters. */
export interface LinkValue {
  /** The URI-Reference between `<` and `>`, unresolved. */
  target: string;
  /** Relation types from the first `rel` parameter, lower-cased (registered types compare case-insensitively). */
  rel: string[];
  /** Parameters by lower-cased name; only the first occurrence of a name counts (RFC 8288 §3.3 for rel). */
  params: Record<string, string>;
}

const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const WHITESPACE = /[ \t]/;

/** Parses one or more Link header field values (several header lines may be passed as an array). */
export function parseLinkHeader(header: string | readonly string[] | undefined): LinkValue[] {
  if (header === undefined) return [];
  const lines = typeof header === 'string' ? [header] : header;
  const links: LinkValue[] = [];
  for (const line of lines) parseLine(line, links);
  return links;
}

function parseLine(text: string, out: LinkValue[]): void {
  let i = 0;
  const skipWhitespace = (): void => {
    while (i < text.length && WHITESPACE.test(text[i]!)) i++;
  };
  // After a malformed link-value, resume at the next comma that is not inside <...> or quotes.
  const skipToNextLinkValue = (): void => {
    let inQuotes = false;
    let inBrackets = false;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (inQuotes) {
        if (c === '\\') i++;
        else if (c === '"') inQuotes = false;
      } else if (inBrackets) {
        if (c === '>') inBrackets = false;
      } else if (c === '"') inQuotes = true;
      else if (c === '<') inBrackets = true;
      else if (c === ',') return;
    }
  };

  while (i < text.length) {
    skipWhitespace();
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (i >= text.length) break;
    if (text[i] !== '<') {
      skipToNextLinkValue();
      continue;
    }
    const close = text.indexOf('>', i + 1);
    if (close < 0) break;
    const target = text.slice(i + 1, close).trim();
    i = close + 1;
    const params: Record<string, string> = {};
    let valid = true;
    for (;;) {
      skipWhitespace();
      if (i >= text.length || text[i] === ',') break;
      if (text[i] !== ';') {
        valid = false;
        break;
      }
      i++;
      skipWhitespace();
      const nameStart = i;
      while (i < text.length && TOKEN_CHAR.test(text[i]!)) i++;
      const name = text.slice(nameStart, i).toLowerCase();
      if (name === '') {
        // A stray ";" (e.g. a trailing one) carries no parameter.
        continue;
      }
      skipWhitespace();
      let value = '';
      if (text[i] === '=') {
        i++;
        skipWhitespace();
        if (text[i] === '"') {
          i++;
          let closed = false;
          while (i < text.length) {
            const c = text[i]!;
            if (c === '\\' && i + 1 < text.length) {
              value += text[i + 1];
              i += 2;
            } else if (c === '"') {
              i++;
              closed = true;
              break;
            } else {
              value += c;
              i++;
            }
          }
          if (!closed) {
            valid = false;
            break;
          }
        } else {
          const valueStart = i;
          while (i < text.length && TOKEN_CHAR.test(text[i]!)) i++;
          value = text.slice(valueStart, i);
        }
      }
      if (!(name in params)) params[name] = value;
    }
    if (!valid) {
      skipToNextLinkValue();
      continue;
    }
    const rel = (params.rel ?? '')
      .split(/[ \t]+/)
      .filter((r) => r !== '')
      .map((r) => r.toLowerCase());
    out.push({ target, rel, params });
  }
}

/** A link of the wanted relation: its target as written and, when it resolves, the absolute URL. */
export interface ResolvedLink {
  target: string;
  url: URL | undefined;
}

/**
 * Every link with relation type `relation`, resolved against the URL of the response that
 * carried the header (RFC 8288 §3.1). Links with an `anchor` parameter describe another
 * resource, so they are not links of this page and are skipped. A target that cannot be
 * resolved is returned with `url` undefined so the caller can refuse it rather than stop early.
 */
export function findLinks(header: string | readonly string[] | undefined, responseUrl: URL | string, relation: string): ResolvedLink[] {
  const wanted = relation.toLowerCase();
  const found: ResolvedLink[] = [];
  for (const link of parseLinkHeader(header)) {
    if (!link.rel.includes(wanted) || 'anchor' in link.params) continue;
    let url: URL | undefined;
    try {
      url = new URL(link.target, responseUrl);
    } catch {
      url = undefined;
    }
    found.push({ target: link.target, url });
  }
  return found;
}
