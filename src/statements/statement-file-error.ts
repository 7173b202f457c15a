import { InputFileError } from '../errors.js';

/**
 * A statement file that cannot be read, or whose statements the configuration cannot place: the
 * message names the file and, where it can, the line or the XML path. Exit code 2: the file (or
 * the accounts file) must change, running the command again cannot help.
 */
export class StatementFileError extends InputFileError {
  override readonly exitCode = 2;
}

/** A file name as it can be shown on a terminal: control characters escaped (`\x1b`), never raw. */
export function shownFileName(file: string): string {
  // eslint-disable-next-line no-control-regex
  return file.replace(/[\u0000-\u001F\u007F-\u009F\\]/g, (c) => (c === '\\' ? '\\\\' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}
