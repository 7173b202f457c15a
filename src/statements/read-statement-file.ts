import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { looksLikeXml, readCamt } from './camt-reader.js';
import { looksLikeMt940, readMt940 } from './mt940-reader.js';
import { looksLikeBai2, readBai2 } from './bai2-reader.js';
import type { ParsedStatement } from './statement.js';
import { shownFileName, StatementFileError } from './statement-file-error.js';
import { decodeText, encodingOfBom, parseTextEncoding, type TextEncodingName } from '../text-encoding.js';

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
