import { describe, expect, it } from 'vitest';
import { findLinks, parseLinkHeader } from '../../src/gateway/link-header-parser.js';

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

  it('ignores text that does not start a link and keeps the links after it', () => {
    expect(parseLinkHeader('</x> junk, </y>; rel=next')).toEqual([{ target: '/y', rel: ['next'], params: { rel: 'next' } }]);
    expect(parseLinkHeader('</x>; rel=prev junk, </y>; rel=next').map((l) => l.target)).toEqual(['/y']);
  });

  it('skips a malformed link-value up to the next comma outside quotes, brackets and quoted-pairs', () => {
    // Each malformed part hides a well-formed next link behind a comma that does not end it.
    expect(nextOf('junk "a, <https://evil.example/>; rel=next, b", </p?page=2>; rel=next')).toEqual(['https://gw.example/p?page=2']);
    expect(nextOf('junk "a \\", <https://evil.example/>; rel=next, b", </p?page=2>; rel=next')).toEqual(['https://gw.example/p?page=2']);
    expect(nextOf('junk <https://x.example/?a=1, <https://evil.example/>; rel=next, </p?page=2>; rel=next')).toEqual(['https://gw.example/p?page=2']);
  });

  it('drops a link whose target is never closed, keeping the links before it', () => {
    expect(parseLinkHeader('</p?page=2; rel=next')).toEqual([]);
    expect(nextOf('</a>; rel=next, </b; rel=next')).toEqual(['https://gw.example/a']);
  });

  it('drops a link whose quoted parameter is never closed', () => {
    expect(parseLinkHeader('</a>; rel="next')).toEqual([]);
    expect(parseLinkHeader('</a>; title="x\\')).toEqual([]);
  });

  it('trims spaces inside the angle brackets', () => {
    expect(parseLinkHeader('< /p?page=2 >; rel=next')[0]!.target).toBe('/p?page=2');
  });

  it('reads a parameter without a value, also as the last thing on the line', () => {
    expect(parseLinkHeader('</a>; crossorigin')).toEqual([{ target: '/a', rel: [], params: { crossorigin: '' } }]);
    expect(parseLinkHeader('</a>; crossorigin; rel=next')).toEqual([{ target: '/a', rel: ['next'], params: { crossorigin: '', rel: 'next' } }]);
  });

  it('ignores stray semicolons', () => {
    expect(parseLinkHeader('</a>;; rel=next ;')).toEqual([{ target: '/a', rel: ['next'], params: { rel: 'next' } }]);
  });

  it('has no relation types without rel, or with an empty one, and ignores extra spaces between them', () => {
    expect(parseLinkHeader('</a>; title=x')[0]!.rel).toEqual([]);
    expect(parseLinkHeader('</a>; rel=""')[0]!.rel).toEqual([]);
    expect(parseLinkHeader('</a>; rel=" next \t last "')[0]!.rel).toEqual(['next', 'last']);
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
