import { describe, expect, it } from 'vitest';
import { findLinks, parseLinkHeader } from '../../src/gateway/link-header.js';

const base = 'https://gw.example/v1/data/wallets/balances?page=1';
const nextOf = (header: string | string[]): string[] => findLinks(header, base, 'next').map((l) => l.url?.href ?? 'invalid');

describe('parseLinkHeader (RFC 8288)', () => {
  it('reads a quoted rel and keeps other parameters', () => {
    expect(parseLinkHeader('<https://gw.example/p?page=2>; rel="next"; title="Page 2"')).toEqual([
      { target: 'https://gw.example/p?page=2', rel: ['next'], params: { rel: 'next', title: 'Page 2' } },
    ]);
  });

  it('reads an unquoted rel token', () => {
    expect(nextOf('</p?page=2>; rel=next')).toEqual(['https://gw.example/p?page=2']);
  });

  it('matches one relation type among several in one rel ("next last")', () => {
    expect(nextOf('</p?page=2>; rel="next last"')).toEqual(['https://gw.example/p?page=2']);
    expect(nextOf('</p?page=9>; rel="last"')).toEqual([]);
  });

  it('compares relation types case-insensitively', () => {
    expect(nextOf('</p?page=2>; REL="Next"')).toEqual(['https://gw.example/p?page=2']);
  });

  it('finds next among several links on one line, whatever their order', () => {
    const header = '</p?page=1>; rel="first", </p?page=9>; rel="last", </p?page=2>; rel="next", </p?page=0>; rel="prev"';
    expect(nextOf(header)).toEqual(['https://gw.example/p?page=2']);
  });

  it('accepts several header lines', () => {
    expect(nextOf(['</p?page=1>; rel="first"', '</p?page=2>; rel="next"'])).toEqual(['https://gw.example/p?page=2']);
  });

  it('keeps commas and semicolons inside <...> as part of the URI', () => {
    expect(nextOf('</p?ids=1,2,3;x&page=2>; rel="next", </p?page=1>; rel="first"')).toEqual(['https://gw.example/p?ids=1,2,3;x&page=2']);
  });

  it('keeps commas and semicolons inside quoted parameter values', () => {
    const links = parseLinkHeader('</a>; title="a, b; c"; rel="prev", </b>; rel="next"');
    expect(links.map((l) => [l.target, l.rel])).toEqual([
      ['/a', ['prev']],
      ['/b', ['next']],
    ]);
    expect(links[0]!.params.title).toBe('a, b; c');
  });

  it('unescapes quoted-pairs in quoted strings', () => {
    expect(parseLinkHeader('</a>; title="say \\"hi\\""; rel=next')[0]!.params.title).toBe('say "hi"');
  });

  it('tolerates whitespace around ";" and "=" and before the first link', () => {
    expect(nextOf('  </p?page=2>  ;  rel = "next"  ;  type="application/json"')).toEqual(['https://gw.example/p?page=2']);
  });

  it('uses only the first rel parameter of a link (RFC 8288 §3.3)', () => {
    expect(nextOf('</p?page=2>; rel="prev"; rel="next"')).toEqual([]);
  });

  it('resolves relative targets against the response URL', () => {
    expect(nextOf('<?page=2>; rel="next"')).toEqual(['https://gw.example/v1/data/wallets/balances?page=2']);
    expect(nextOf('<balances?page=3>; rel="next"')).toEqual(['https://gw.example/v1/data/wallets/balances?page=3']);
    expect(nextOf('<//other.example/x>; rel="next"')).toEqual(['https://other.example/x']);
  });

  it('skips links with an anchor: they describe another resource', () => {
    expect(nextOf('</p?page=2>; rel="next"; anchor="/elsewhere"')).toEqual([]);
  });

  it('skips a malformed link-value and still reads the following ones', () => {
    expect(nextOf('garbage; rel="next", </p?page=2>; rel="next"')).toEqual(['https://gw.example/p?page=2']);
    expect(nextOf('</x> junk, </p?page=3>; rel=next')).toEqual(['https://gw.example/p?page=3']);
  });

  it('returns nothing for an absent or empty header', () => {
    expect(parseLinkHeader(undefined)).toEqual([]);
    expect(parseLinkHeader('')).toEqual([]);
    expect(parseLinkHeader([])).toEqual([]);
  });

  it('reports a target that does not resolve instead of dropping it', () => {
    expect(findLinks('<http://[bad>; rel="next"', base, 'next')).toEqual([{ target: 'http://[bad', url: undefined }]);
  });
});
