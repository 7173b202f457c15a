import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { InputFileError } from '../errors.js';
import { chooseEncoding, notUtf8Error, type TextEncodingName } from '../text-encoding.js';
import { CamtStream, type CamtStatementHead } from './camt-reader.js';
import type { StatementEntry } from './statement.js';
import { BookedKeys } from './statement-fingerprint.js';

/** The bytes read at a time: one chunk of text is parsed before the next is read. */
const READ_CHUNK_BYTES = 1024 * 1024;

/** A statement of a camt file after the first reading: everything but its entries, which are read again when stored. */
export interface ScannedCamtStatement {
  head: CamtStatementHead;
  entryCount: number;
  /** The sum of its booked entries (minor units): what its proof needs of them. */
  booked: bigint;
  /** statementFingerprint of the statement, its entries included. */
  fingerprint: string;
}

/**
 * The text of a file as it streams, decoded (a byte order mark, else `encoding`, else UTF-8,
 * strict), with the SHA-256 and size of the bytes read so far in `digest` once it ends.
 */
async function* decodedChunks(filePath: string, shown: string, head: Uint8Array, encoding: TextEncodingName | undefined, digest?: { sha256: string; size: bigint }): AsyncGenerator<string> {
  const chosen = chooseEncoding(head, encoding);
  const decoder = new TextDecoder(chosen.encoding, { fatal: chosen.strict });
  const hash = createHash('sha256');
  let size = 0n;
  let lines = 0;
  const lineOf = (bytes: Uint8Array): number => {
    // The line of the first byte that is not UTF-8: the lines before it in this chunk, decoded loosely.
    const text = new TextDecoder('utf-8').decode(bytes);
    const bad = text.indexOf('\uFFFD');
    return lines + (text.slice(0, bad === -1 ? text.length : bad).match(/\n/g)?.length ?? 0) + 1;
  };
  for await (const chunk of createReadStream(filePath, { highWaterMark: READ_CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += BigInt(chunk.length);
    let text: string;
    try {
      text = decoder.decode(chunk, { stream: true });
    } catch {
      throw notUtf8Error(shown, chunk, lineOf(chunk));
    }
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
    if (text !== '') yield text;
  }
  let rest: string;
  try {
    rest = decoder.decode();
  } catch {
    throw notUtf8Error(shown, head, lines + 1);
  }
  if (rest !== '') yield rest;
  if (digest !== undefined) {
    digest.sha256 = hash.digest('hex');
    digest.size = size;
  }
}

/**
 * First reading of a camt file: every statement checked and summed up (entries counted, booked
 * entries summed, the fingerprint taken), no entry kept — memory stays that of one chunk of text
 * and one short amount per booked entry (BookedKeys). Also the file's SHA-256 and size.
 */
export async function scanCamtFile(filePath: string, shown: string, head: Uint8Array, encoding: TextEncodingName | undefined): Promise<{ statements: ScannedCamtStatement[]; sha256: string; size: bigint }> {
  const statements: ScannedCamtStatement[] = [];
  let booked = 0n;
  let keys = new BookedKeys();
  const reader = new CamtStream(shown, {
    entry: (entry) => {
      if (entry.status !== 'BOOK') return;
      booked += entry.amount;
      keys.add(entry);
    },
    statement: (statementHead, _index, entryCount) => {
      statements.push({ head: statementHead, entryCount, booked, fingerprint: keys.fingerprint(statementHead) });
      booked = 0n;
      keys = new BookedKeys();
    },
  });
  const digest = { sha256: '', size: 0n };
  for await (const text of decodedChunks(filePath, shown, head, encoding, digest)) reader.write(text);
  reader.close();
  return { statements, ...digest };
}

/**
 * Second reading: the entries of statement `index` of the file, in slices of at most `slice`,
 * read as the file streams (reading stops once that statement has ended). The file must still
 * hold what the first reading found: another count or sum of entries is refused.
 */
export async function* camtEntrySlices(
  filePath: string,
  shown: string,
  head: Uint8Array,
  encoding: TextEncodingName | undefined,
  index: number,
  expected: { entryCount: number; booked: bigint },
  slice: number,
): AsyncGenerator<StatementEntry[]> {
  let pending: StatementEntry[] = [];
  let done = false;
  let count = 0;
  let booked = 0n;
  const reader = new CamtStream(shown, {
    entry: (entry, at) => {
      if (at !== index) return;
      count += 1;
      if (entry.status === 'BOOK') booked += entry.amount;
      pending.push(entry);
    },
    statement: (_head, at) => {
      if (at === index) done = true;
    },
  });
  for await (const text of decodedChunks(filePath, shown, head, encoding)) {
    reader.write(text);
    while (pending.length >= slice) {
      yield pending.slice(0, slice);
      pending = pending.slice(slice);
    }
    if (done) break;
  }
  if (!done) reader.close();
  if (pending.length > 0) yield pending;
  if (count !== expected.entryCount || booked !== expected.booked) {
    throw new InputFileError(`${shown}: the file changed while it was being imported (${expected.entryCount} entries, then ${count}). Nothing was imported: import it again once it is complete.`);
  }
}
