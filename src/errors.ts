/**
 * The error hierarchy. Every class has a stable `code` and an exit code the CLI maps it to;
 * messages are written for the person reading them at 7 a.m. and never contain a secret.
 */
export class ReconError extends Error {
  readonly code: string = 'E_RECON';
  /** Process exit code the CLI uses when this error ends a command. */
  readonly exitCode: number = 1;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Invalid or missing configuration: nothing was touched. */
export class ConfigError extends ReconError {
  override readonly code = 'E_CONFIG';
  override readonly exitCode = 2;
  constructor(
    message: string,
    readonly problems: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A command line that does not make sense (unknown flag values, contradictory options). */
export class UsageError extends ReconError {
  override readonly code = 'E_USAGE';
  override readonly exitCode = 2;
}

/** The gateway refused our credentials or token. */
export class AuthError extends ReconError {
  override readonly code = 'E_AUTH';
}

/** The gateway answered with an HTTP status we cannot use. */
export class HttpError extends ReconError {
  override readonly code = 'E_HTTP';
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly method: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** No answer in time, a reset connection, a DNS failure: the request never got a usable response. */
export class NetworkError extends ReconError {
  override readonly code = 'E_NETWORK';
}

/** The gateway answered, but not in the shape the published interface describes. */
export class ProtocolError extends ReconError {
  override readonly code = 'E_PROTOCOL';
}

/** A listing could not be trusted: foreign next link, cycle, too many pages, totals that do not add up. */
export class PaginationError extends ReconError {
  override readonly code = 'E_PAGINATION';
}

/** A database problem: connection, migration, or a query that failed. */
export class DatabaseError extends ReconError {
  override readonly code = 'E_DATABASE';
}

/** The database holds migrations this version does not know, or a migration failed. */
export class MigrationError extends ReconError {
  override readonly code = 'E_MIGRATION';
}

/** The database's schema is behind (not migrated) or ahead of this version: a setup problem, nothing touched. */
export class SchemaMismatchError extends MigrationError {
  override readonly exitCode = 2;
}

/** Another process holds what we need (the embedded database, an account's run lock). */
export class LockHeldError extends ReconError {
  override readonly code = 'E_LOCK_HELD';
  override readonly exitCode = 4;
}

/** The run was stopped by a signal. */
export class InterruptedError extends ReconError {
  override readonly code = 'E_INTERRUPTED';
  constructor(message = 'interrupted', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An input file (books, statements, accounts) has rows we cannot accept. */
export class InputFileError extends ReconError {
  override readonly code = 'E_INPUT';
  constructor(
    message: string,
    readonly problems: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A file whose bytes are not text in the encoding it was read with (not UTF-8 and no --encoding): nothing read, exit 2. */
export class FileEncodingError extends ReconError {
  override readonly code = 'E_ENCODING';
  override readonly exitCode = 2;
}

/** A short, secret-free description of any thrown value, for logs and the run ledger. */
export function describeError(error: unknown): string {
  if (error instanceof ReconError) return error.message;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** A notification could not be delivered to a channel (webhook, Slack, e-mail). */
export class NotificationError extends ReconError {
  override readonly code = 'E_NOTIFY';
  constructor(
    message: string,
    /** Worth trying again later (a 5xx, 429, a timeout); false: the channel refused it for good. */
    readonly retryable: boolean,
    /** How long the channel asked us to wait (Retry-After), in ms. */
    readonly retryAfterMs?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A sign-off step refused because a date is not settled yet (owed, awaiting books, still capturable): nothing changed. */
export class DateNotSettledError extends ReconError {
  override readonly code = 'E_NOT_SETTLED';
  override readonly exitCode = 2;
}

/** A write refused because an approved sign-off locks the date: nothing was written. */
export class DateLockedError extends ReconError {
  override readonly code = 'E_DATE_LOCKED';
  override readonly exitCode = 2;
}

/** An approval refused because the date's sealed inputs changed since it was prepared: nothing was approved. */
export class SignoffInputsChangedError extends ReconError {
  override readonly code = 'E_SIGNOFF_CHANGED';
  override readonly exitCode = 2;
}

/** A sealed report whose bytes no longer hash to its seal: it is not served. */
export class SealMismatchError extends ReconError {
  override readonly code = 'E_SEAL_MISMATCH';
}

/** A stored file's bytes cannot be given back as they arrived (missing, lost or altered in the database). */
export class StoredFileError extends ReconError {
  override readonly code = 'E_STORED_FILE';
}
