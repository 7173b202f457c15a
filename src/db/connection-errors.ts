import { describeError, ReconError } from '../errors.js';
import { maskUrlPasswords } from '../logger.js';

// Node's socket errors that mean the server cannot be reached or went away.
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// pg's own messages for a connection that ended or never came.
const LOST_MESSAGES = [/connection terminated/i, /timeout exceeded when trying to connect/i, /not queryable/i, /connection (?:is )?closed/i, /terminating connection/i, /the database system is (?:starting up|shutting down|in recovery mode)/i];

type Failure = 'lost' | 'statement-timeout' | 'idle-timeout';

function classify(error: unknown): Failure | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (SOCKET_CODES.has(code) || code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return 'lost';
      if (code === '57014') return 'statement-timeout';
      if (code === '25P03') return 'idle-timeout';
    }
    if (LOST_MESSAGES.some((pattern) => pattern.test(e.message))) return 'lost';
  }
  return undefined;
}

/** Whether the error is the database being unreachable or gone (worth waiting for and trying again). */
export function isConnectionLost(error: unknown): boolean {
  return classify(error) !== undefined;
}

/**
 * A run's failure reason that names the database when the database was the cause: "the database
 * connection was lost (…)", a statement or transaction that outlived its timeout; else the
 * error's own description.
 */
export function describeDatabaseFailure(error: unknown, where: string): string {
  const detail = maskUrlPasswords(error instanceof Error && !(error instanceof ReconError) ? error.message : describeError(error));
  switch (classify(error)) {
    case 'lost':
      return `the database connection was lost (${where}: ${detail})`;
    case 'statement-timeout':
      return `a database statement took longer than DATABASE_STATEMENT_TIMEOUT and was cancelled (${where}: ${detail})`;
    case 'idle-timeout':
      return `a database transaction stayed idle longer than DATABASE_IDLE_IN_TRANSACTION_TIMEOUT and was ended (${where}: ${detail})`;
    default:
      return describeError(error);
  }
}
