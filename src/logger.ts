import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { ReconError } from './errors.js';

export type { Logger } from 'pino';

/**
 * Every path a secret could travel under. pino's redact is case-sensitive and only applies
 * under the key that is logged, hence the spellings and the nesting levels.
 */
export const REDACT_PATHS: readonly string[] = (() => {
  const keys = [
    'authorization',
    'Authorization',
    '["secret-key"]',
    '["Secret-Key"]',
    'secretKey',
    'api_secret',
    'apiSecret',
    'token',
    'access_token',
    'accessToken',
    'refresh_token',
    'password',
    'connectionString',
  ];
  const prefixes = ['', '*.', 'headers.', '*.headers.', 'req.headers.', 'request.headers.', 'options.headers.', '*.*.'];
  const paths: string[] = [];
  for (const prefix of prefixes) {
    for (const key of keys) paths.push(key.startsWith('[') ? `${prefix.replace(/\.$/, '')}${key}` : `${prefix}${key}`);
  }
  return paths.filter((p) => !p.startsWith('['));
})();

/** Removes the password from anything that looks like a connection string or URL with userinfo. */
export function maskUrlPasswords(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)[^@/?#\s]*@/gi, '$1***@');
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
    serializers: { err: serializeError, error: serializeError },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (options.destination) return pino(config, options.destination);
  const fd = options.fd ?? 1;
  const pretty = options.pretty ?? Boolean((fd === 1 ? process.stdout : process.stderr).isTTY);
  if (pretty) {
    return pino({
      ...config,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss', destination: fd, ignore: 'pid,hostname', singleLine: true } },
    });
  }
  return pino(config, pino.destination({ fd, sync: true }));
}

/** A logger that writes nothing, for tests and library use. */
export function createSilentLogger(): Logger {
  return pino({ level: 'silent' });
}
