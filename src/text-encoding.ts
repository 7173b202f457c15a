import { createReadStream } from 'node:fs';
import { FileEncodingError } from './errors.js';

/**
 * The text encodings a books or statement file may be written in (`--encoding`), as node's
 * TextDecoder names them. A byte order mark decides over any of them; without one and without
 * `--encoding` a file must be valid UTF-8, or it is refused naming the encoding it looks like.
 */
export const TEXT_ENCODINGS = ['utf-8', 'utf-16le', 'utf-16be', 'windows-1252', 'iso-8859-1', 'iso-8859-15'] as const;
export type TextEncodingName = (typeof TEXT_ENCODINGS)[number];

// Other names people write for the same encodings.
const ALIASES: Record<string, TextEncodingName> = {
  utf8: 'utf-8',
  'utf-16': 'utf-16le',
  utf16: 'utf-16le',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
  cp1252: 'windows-1252',
  'win-1252': 'windows-1252',
  latin1: 'iso-8859-1',
  'latin-1': 'iso-8859-1',
  'iso8859-1': 'iso-8859-1',
  latin9: 'iso-8859-15',
  'latin-9': 'iso-8859-15',
  'iso8859-15': 'iso-8859-15',
};

/** The encoding `text` names (any case, common aliases such as latin1 or cp1252); undefined when none. */
export function parseTextEncoding(text: string): TextEncodingName | undefined {
  const lower = text.trim().toLowerCase();
  return (TEXT_ENCODINGS as readonly string[]).includes(lower) ? (lower as TextEncodingName) : ALIASES[lower];
}

/** The encoding a byte order mark at the start of `head` declares, if it starts with one. */
export function encodingOfBom(head: Uint8Array): TextEncodingName | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** How a file is decoded: a byte order mark first, then `--encoding`, then UTF-8 (strict). */
export function chooseEncoding(head: Uint8Array, given: TextEncodingName | undefined): { encoding: TextEncodingName; strict: boolean } {
  const bom = encodingOfBom(head);
  if (bom !== undefined) return { encoding: bom, strict: false };
  return given === undefined ? { encoding: 'utf-8', strict: true } : { encoding: given, strict: false };
}

/**
 * The encoding bytes that are not UTF-8 most likely are: UTF-16 when every other byte is zero,
 * else the Western European single-byte encoding of spreadsheets and ERPs on Windows.
 */
export function likelyEncoding(bytes: Uint8Array): TextEncodingName {
  const sample = bytes.subarray(0, 4096);
  let evenZeros = 0;
  let oddZeros = 0;
  for (let i = 0; i < sample.length; i++) {
    if (sample[i] !== 0) continue;
    if (i % 2 === 0) evenZeros++;
    else oddZeros++;
  }
  const half = sample.length / 2;
  if (half >= 2 && oddZeros > half * 0.3) return 'utf-16le';
  if (half >= 2 && evenZeros > half * 0.3) return 'utf-16be';
  return 'windows-1252';
}

/** The refusal of a file that is not valid UTF-8, naming where, what it looks like and the option. */
export function notUtf8Error(name: string, bytes: Uint8Array, line: number, option = '--encoding'): FileEncodingError {
  const guess = likelyEncoding(bytes);
  return new FileEncodingError(
    `${name} line ${line} is not valid UTF-8; it looks like ${guess}: pass ${option} ${guess}` +
      ` (encodings: ${TEXT_ENCODINGS.join(', ')}; a byte order mark is read by itself). Nothing was imported.`,
  );
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Decodes a whole file's bytes (a byte order mark removed); not-UTF-8 without an encoding is refused. */
export function decodeText(bytes: Uint8Array, name: string, given?: TextEncodingName, option?: string): string {
  const { encoding, strict } = chooseEncoding(bytes, given);
  try {
    return new TextDecoder(encoding, { fatal: strict }).decode(bytes);
  } catch {
    // The line of the first bad byte: the text before it decodes.
    const valid = validUtf8Prefix(bytes);
    throw notUtf8Error(name, bytes, countLines(new TextDecoder('utf-8').decode(bytes.subarray(0, valid))) + 1, option);
  }
}

/** How many leading bytes form valid UTF-8 (a byte at a time from the last line start before the failure). */
function validUtf8Prefix(bytes: Uint8Array): number {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let good = 0;
  // Lines decode independently in UTF-8: the first line that fails holds the first bad byte.
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    end = end === -1 ? bytes.length : end + 1;
    try {
      decoder.decode(bytes.subarray(start, end));
    } catch {
      return good;
    }
    good = end;
    start = end;
  }
  return good;
}

/**
 * A file's text in chunks, decoded as it streams (memory: one chunk). Bytes that are not UTF-8,
 * when no byte order mark or encoding says otherwise, end the stream with a FileEncodingError.
 */
export async function* decodeFileStream(filePath: string, name: string, head: Uint8Array, given?: TextEncodingName): AsyncGenerator<string> {
  const { encoding, strict } = chooseEncoding(head, given);
  const decoder = new TextDecoder(encoding, { fatal: strict });
  let lines = 0;
  for await (const chunk of createReadStream(filePath) as AsyncIterable<Buffer>) {
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      const valid = validUtf8Prefix(chunk);
      throw notUtf8Error(name, chunk, lines + countLines(new TextDecoder('utf-8').decode(chunk.subarray(0, valid))) + 1);
    }
    lines += countLines(text);
    if (text !== '') yield text;
  }
  let rest: string;
  try {
    rest = decoder.decode();
  } catch {
    throw notUtf8Error(name, head, lines + 1);
  }
  if (rest !== '') yield rest;
}

/** The start of a file decoded for a first look (its delimiter, its format); never refused here. */
export function decodeHead(head: Uint8Array, given?: TextEncodingName): string {
  const { encoding } = chooseEncoding(head, given);
  return new TextDecoder(encoding, { fatal: false }).decode(head, { stream: true });
}
