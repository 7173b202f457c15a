import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { looksLikeXml, readCamt } from './camt-reader.js';
import { looksLikeMt940, readMt940 } from './mt940-reader.js';
import type { ParsedStatement } from './statement.js';
import { shownFileName, StatementFileError } from './statement-file-error.js';

/** The statements of a file's text, its format detected from the content (never from the name). */
export function readStatementText(text: string, file: string): ParsedStatement[] {
  const body = text.replace(/^\uFEFF/, '');
  if (looksLikeXml(body)) return readCamt(body, file);
  if (looksLikeMt940(body)) return readMt940(body, file);
  throw new StatementFileError(`${file}: neither a camt.053/camt.052 XML file nor an MT940 message (it should start with "<" or with ":20:" or "{1:").`);
}

/** A statement file as read: its statements, and the SHA-256 and size of the bytes they were read from. */
export interface StatementFileRead {
  statements: ParsedStatement[];
  sha256: string;
  size: bigint;
}

/**
 * Reads a statement file; a file that cannot be opened, or is not UTF-8 text, is refused naming
 * it (control characters of its name escaped) and, for bad bytes, the line.
 */
export function readStatementFile(file: string): StatementFileRead {
  const shown = shownFileName(file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new StatementFileError(`${shown}: cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return { statements: readStatementText(utf8Text(bytes, shown), shown), sha256, size: BigInt(bytes.length) };
}

/** The bytes as UTF-8 text; bytes that are not UTF-8 refuse the file naming the line. */
export function utf8Text(bytes: Buffer, shown: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const text = bytes.toString('utf8');
    const line = text.slice(0, text.indexOf('\uFFFD')).split('\n').length;
    throw new StatementFileError(`${shown}, line ${line}: bytes that are not UTF-8 text (statements are read as UTF-8).`);
  }
}
