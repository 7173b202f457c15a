import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseLinkHeader } from '../../src/gateway/link-header-parser.js';

/**
 * For any Link header formatted by the RFC 8288 grammar — targets with commas and semicolons,
 * relation types in any case, quoted or bare values, quoted-pairs, optional whitespace, spread
 * over one or several header lines — the parser gives back exactly the links that were written.
 */

interface GeneratedLink {
  target: string;
  rel: string[];
  /** Parameters other than rel, in the order written; names are distinct. */
  params: Array<{ name: string; value: string; quoted: boolean }>;
  relName: string;
  relQuoted: boolean;
  /** Where rel sits among the other parameters. */
  relAt: number;
}

const ows = fc.stringMatching(/^[ \t]{0,2}$/);
// A URI-Reference with the characters that break naive parsers: commas, semicolons, quotes, "=".
const target = fc.stringMatching(/^[A-Za-z0-9/?=&,;:'"._~%#-]{1,30}$/);
const relationType = fc.stringMatching(/^[A-Za-z][A-Za-z.-]{0,10}$/);
const paramName = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/).filter((n) => n !== 'rel' && n !== 'anchor');
const tokenValue = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,10}$/);
const quotedValue = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '\t', ',', ';', '=', '"', '\\', '<', '>', '/'), maxLength: 15 });

const param = fc.oneof(
  fc.record({ value: tokenValue, quoted: fc.boolean() }),
  fc.record({ value: quotedValue, quoted: fc.constant(true) }),
);

const link: fc.Arbitrary<GeneratedLink> = fc
  .record({
    target,
    rel: fc.array(relationType, { minLength: 1, maxLength: 3 }),
    names: fc.uniqueArray(paramName, { maxLength: 3 }),
    values: fc.array(param, { minLength: 3, maxLength: 3 }),
    relName: fc.constantFrom('rel', 'REL', 'Rel'),
    relQuoted: fc.boolean(),
    relAt: fc.nat(3),
  })
  .map(({ target, rel, names, values, relName, relQuoted, relAt }) => ({
    target,
    rel,
    params: names.map((name, i) => ({ name, ...values[i]! })),
    relName,
    // A bare token can hold one relation type only.
    relQuoted: relQuoted || rel.length > 1,
    relAt: Math.min(relAt, names.length),
  }));

const quote = (value: string): string => `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;

/** Writes one link-value with the given whitespace pieces (cycled) wherever the grammar allows OWS. */
function formatLink(l: GeneratedLink, space: string[]): string {
  let n = 0;
  const s = (): string => space[n++ % space.length]!;
  const relValue = l.relQuoted ? quote(l.rel.join(`${s()} `)) : l.rel[0]!;
  const written = l.params.map((p) => `${p.name}${s()}=${s()}${p.quoted ? quote(p.value) : p.value}`);
  written.splice(l.relAt, 0, `${l.relName}${s()}=${s()}${relValue}`);
  return `<${l.target}>${written.map((p) => `${s()};${s()}${p}`).join('')}`;
}

const header = fc
  .record({
    links: fc.array(link, { minLength: 1, maxLength: 5 }),
    space: fc.array(ows, { minLength: 1, maxLength: 6 }),
    lineBreaks: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  })
  .map(({ links, space, lineBreaks }) => {
    // Consecutive links joined by "," on one line, or split onto separate header lines.
    const lines: string[] = [];
    let current: string[] = [];
    links.forEach((l, i) => {
      if (i > 0 && lineBreaks[i]) {
        lines.push(current.join(`${space[0]},${space[space.length - 1]}`));
        current = [];
      }
      current.push(formatLink(l, space));
    });
    lines.push(current.join(`${space[0]},${space[space.length - 1]}`));
    return { links, lines };
  });

describe('parseLinkHeader (properties)', () => {
  it('gives back the targets, relation types and parameters of any well-formed header', () => {
    fc.assert(
      fc.property(header, ({ links, lines }) => {
        const parsed = parseLinkHeader(lines);
        expect(parsed.map((p) => p.target)).toEqual(links.map((l) => l.target));
        expect(parsed.map((p) => p.rel)).toEqual(links.map((l) => l.rel.map((r) => r.toLowerCase())));
        for (const [i, l] of links.entries()) {
          const expected = Object.fromEntries([...l.params.map((p) => [p.name, p.value]), ['rel', l.rel.join(' ')]]);
          const { rel, ...others } = parsed[i]!.params;
          expect({ ...others, rel: rel!.split(/[ \t]+/).join(' ') }).toEqual(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads the same links from one line as from the same links over several lines', () => {
    fc.assert(
      fc.property(header, ({ lines }) => {
        expect(parseLinkHeader(lines.join(', '))).toEqual(parseLinkHeader(lines));
      }),
      { numRuns: 200 },
    );
  });
});
