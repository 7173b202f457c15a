import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { ReconError } from './errors.js';
import { maskSecretValues } from './secret.js';

export type { Logger } from 'pino';

/** Keys whose values are credentials, in the spellings they travel under (redact is case-sensitive). */
export const SECRET_KEYS: readonly string[] = [
  'secret',
  'Secret',
  'secret-key',
  'Secret-Key',
  'secretKey',
  'api_secret',
  'apiSecret',
  'token',
  'Token',
  'access_token',
  'accessToken',
  'refresh_token',
  'refreshToken',
  'authorization',
  'Authorization',
  'password',
  'Password',
  'connectionString',
  'connection-string',
];

/** How deep the wildcard paths reach; deeper values are still caught by the value masks. */
export const REDACT_DEPTH = 4;

/**
 * Wildcard paths for every secret key at depths 1 to REDACT_DEPTH (`token`, `*.token`,
 * `*.*.token`, …; hyphenated keys bracketed). pino has no "any depth" wildcard, so each depth
 * is a path of its own.
 */
export const REDACT_PATHS: readonly string[] = SECRET_KEYS.flatMap((key) =>
  Array.from({ length: REDACT_DEPTH }, (_, depth) => {
    const prefix = '*.'.repeat(depth);
    return /^[A-Za-z_$][\w$]*$/.test(key) ? `${prefix}${key}` : `${prefix.replace(/\.$/, '')}["${key}"]`;
  }),
);

/** Removes the password from anything that looks like a connection string or URL with userinfo. */
export function maskUrlPasswords(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)[^@/?#\s]*@/gi, '$1***@');
}

/** maskUrlPasswords for a JSON line: a password never spans a quote, so one field cannot eat the next. */
function maskUrlPasswordsInJson(line: string): string {
  return line.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#@\s"\\]*:)[^@/?#\s"\\]*@/gi, '$1***@');
}

/**
 * The last net, on every finished line whatever its shape or depth: connection-string passwords,
 * and the exact values of the configured secrets and the tokens in use (an error body that
 * echoes them, a message that quotes them).
 */
export function maskLogLine(line: string): string {
  return maskSecretValues(maskUrlPasswordsInJson(line));
}

/**
 * Errors are serialized field by field: never `err.options`, never headers, so a got error or
 * anything else carrying a request cannot leak a credential through the default serializer.
 */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: maskUrlPasswords(String(error)) };
  const out: Record<string, unknown> = {
    type: error.name,
    message: maskUrlPasswords(error.message),
  };
  if (error instanceof ReconError) out.code = error.code;
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') out.status = status;
  if (error.cause instanceof Error) out.cause = { type: error.cause.name, message: maskUrlPasswords(error.cause.message) };
  return out;
}

export interface CreateLoggerOptions {
  level?: string;
  /** Where JSON lines go (tests pass an in-memory stream); otherwise the file descriptor `fd`. */
  destination?: DestinationStream;
  /** 1 (stdout, the default: the worker's log) or 2 (stderr: commands whose stdout is a report). */
  fd?: 1 | 2;
  /** Human-readable lines; defaults to whether `fd` is a TTY. */
  pretty?: boolean;
}

/** The one logger factory: redaction and the error serializer are configured here and nowhere else. */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const config: LoggerOptions = {
    level: options.level ?? 'info',
    base: undefined,
    redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
    hooks: { streamWrite: maskLogLine },
    serializers: { err: serializeError, error: serializeError },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (options.destination) return pino(config, options.destination);
  const fd = options.fd ?? 1;
  const pretty = options.pretty ?? Boolean((fd === 1 ? process.stdout : process.stderr).isTTY);
  if (pretty) {
    // On a terminal only, so loaded only then; in this thread rather than as a worker transport:
    // the bundled CLI has no pino file tree for a worker to start from, and a person reading a
    // terminal needs no thread for a few lines.
    const pinoPretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    return pino(config, pinoPretty.build({ colorize: true, translateTime: 'SYS:HH:MM:ss', destination: fd, ignore: 'pid,hostname', singleLine: true, sync: true }));
  }
  return pino(config, pino.destination({ fd, sync: true }));
}

/** A logger that writes nothing, for tests and library use. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
