import { InputFileError } from '../errors.js';

/** A statement file that cannot be read: the message names the file and, where it can, the line or element. */
export class StatementFileError extends InputFileError {}
