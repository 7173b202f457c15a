import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { camtEntrySlices, scanCamtFile } from './camt-file.js';
import { looksLikeXml, readCamt } from './camt-reader.js';
import { looksLikeMt940, readMt940 } from './mt940-reader.js';
import { looksLikeBai2, readBai2 } from './bai2-reader.js';
import type { ParsedStatement, StatementEntry } from './statement.js';
import { statementFingerprint } from './statement-fingerprint.js';
import { shownFileName, StatementFileError } from './statement-file-error.js';
import { decodeHead, decodeText, encodingOfBom, parseTextEncoding, type TextEncodingName } from '../text-encoding.js';

/** The statements of a file's text, its format detected from the content (never from the name). */
export function readStatementText(text: string, file: string): ParsedStatement[] {
  const body = text.replace(/^\uFEFF/, '');
  if (looksLikeXml(body)) return readCamt(body, file);
  if (looksLikeMt940(body)) return readMt940(body, file);
  if (looksLikeBai2(body)) return readBai2(body, file);
  throw new StatementFileError(`${file}: neither a camt.053/camt.052 XML file nor an MT940 message nor a BAI2 file (it should start with "<", with ":20:" or "{1:", or with "01,").`);
}

/** A statement file as read: its statements, and the SHA-256 and size of the bytes they were read from. */
export interface StatementFileRead {
  statements: ParsedStatement[];
  sha256: string;
  size: bigint;
}

/**
 * A statement file's text, decoded before it is parsed: a byte order mark, else `--encoding`, else
 * the encoding an XML declaration names, else UTF-8 — bytes that are not UTF-8 (an MT940 file is
 * often Latin-1) are refused naming the encoding they look like and the option.
 */
export function decodeStatementBytes(bytes: Buffer, file: string, encoding?: TextEncodingName): string {
  if (encoding === undefined && encodingOfBom(bytes) === undefined) {
    const declared = /^<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/.exec(bytes.subarray(0, 200).toString('latin1'))?.[1];
    const known = declared === undefined ? undefined : parseTextEncoding(declared);
    if (known !== undefined) return decodeText(bytes, file, known);
  }
  return decodeText(bytes, file, encoding);
}

/**
 * Reads a statement file; a file that cannot be opened, or whose bytes are not text in its
 * encoding, is refused naming it (control characters of its name escaped).
 */
export function readStatementFile(file: string, encoding?: TextEncodingName): StatementFileRead {
  const shown = shownFileName(file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new StatementFileError(`${shown}: cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { statements: readStatementText(decodeStatementBytes(bytes, shown, encoding), shown), sha256, size: BigInt(bytes.length) };
}

/** A statement ready to be stored: what it says, and its entries, given a slice at a time. */
export interface StatementToImport {
  /** The statement; its `entries` are empty when it was read as a stream (camt): entrySlices gives them. */
  statement: ParsedStatement;
  entryCount: number;
  /** The sum of its booked entries, minor units. */
  booked: bigint;
  fingerprint: string;
  /** Its entries in file order, at most `slice` at a time. */
  entrySlices(slice: number): AsyncIterable<StatementEntry[]>;
}

/** A statement file as read for an import: its statements, and the SHA-256 and size of its bytes. */
export interface ScannedStatementFile {
  statements: StatementToImport[];
  sha256: string;
  size: bigint;
}

/** How much of a file's start is looked at to tell its format and declared encoding. */
const HEAD_BYTES = 4096;

/**
 * Reads a statement file for an import. A file larger than `maxBytes` is refused before any of it
 * is read. camt (XML) is read as a stream, twice: now, checked whole and summed up, and again,
 * entry by entry, when it is stored — never held whole. Other formats (MT940) are read at once.
 */
export async function scanStatementFile(file: string, options: { encoding?: TextEncodingName; maxBytes: number }): Promise<ScannedStatementFile> {
  const shown = shownFileName(file);
  const cannotRead = (error: unknown) => new StatementFileError(`${shown}: cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  let size: number;
  let head: Buffer;
  try {
    size = statSync(file).size;
    if (size > options.maxBytes) {
      throw new StatementFileError(
        `${shown}: ${size} bytes, more than RECON_STATEMENT_MAX_BYTES (${options.maxBytes} bytes${mebibytes(options.maxBytes)}): refused before it was read, nothing imported. Raise RECON_STATEMENT_MAX_BYTES to import a file this large.`,
      );
    }
    const fd = openSync(file, 'r');
    try {
      head = Buffer.alloc(Math.min(HEAD_BYTES, size));
      readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof StatementFileError) throw error;
    throw cannotRead(error);
  }
  if (!looksLikeXml(decodeHead(head, options.encoding).replace(/^\uFEFF/, ''))) {
    const read = readStatementFile(file, options.encoding);
    return {
      sha256: read.sha256,
      size: read.size,
      statements: read.statements.map((statement) => ({
        statement,
        entryCount: statement.entries.length,
        booked: statement.entries.filter((e) => e.status === 'BOOK').reduce((sum, e) => sum + e.amount, 0n),
        fingerprint: statementFingerprint(statement),
        entrySlices: (slice) => slicesOf(statement.entries, slice),
      })),
    };
  }
  const encoding = options.encoding ?? (encodingOfBom(head) === undefined ? declaredEncoding(head) : undefined);
  const scanned = await scanCamtFile(file, shown, head, encoding).catch((error: unknown) => {
    throw (error as NodeJS.ErrnoException).code !== undefined && !(error instanceof Error && 'exitCode' in error) ? cannotRead(error) : error;
  });
  return {
    sha256: scanned.sha256,
    size: scanned.size,
    statements: scanned.statements.map((s, index) => ({
      statement: { ...s.head, entries: [] },
      entryCount: s.entryCount,
      booked: s.booked,
      fingerprint: s.fingerprint,
      entrySlices: (slice) => camtEntrySlices(file, shown, head, encoding, index, s, slice),
    })),
  };
}

/** The encoding an XML declaration names, when it is one files are read in. */
function declaredEncoding(head: Uint8Array): TextEncodingName | undefined {
  const declared = /^<\?xml[^>]*\bencoding\s*=\s*["']([^"']+)["']/.exec(Buffer.from(head).subarray(0, 200).toString('latin1'))?.[1];
  return declared === undefined ? undefined : parseTextEncoding(declared);
}

/** `, 256 MiB` for a limit of at least one MiB; nothing below. */
function mebibytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib < 1 ? '' : `, ${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}

async function* slicesOf<T>(items: readonly T[], slice: number): AsyncGenerator<T[]> {
  for (let start = 0; start < items.length; start += slice) yield items.slice(start, start + slice);
}
