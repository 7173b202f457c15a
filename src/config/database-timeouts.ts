import * as z from 'zod';
import { parseDuration } from '../business-date/duration.js';
import type { DatabaseTimeouts } from './config-types.js';

/** A database timeout: a duration from 1s to 1h (0 is refused: a call must never wait forever). */
const databaseTimeout = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === undefined || ms < 1000 || ms > 3_600_000) {
        ctx.addIssue({ code: 'custom', message: 'must be a duration from 1s to 1h, such as 10s, 90s or 5m' });
        return z.NEVER;
      }
      return ms;
    });

/**
 * The PostgreSQL server sessions' timeouts, part of the one environment schema. A database call
 * that hangs (a black-holed server, a lock never released, a transaction left open) fails the
 * attempt, which the night retries, instead of holding the worker past its capture window.
 */
export const databaseTimeoutVariables = {
  DATABASE_CONNECT_TIMEOUT: databaseTimeout('10s'),
  DATABASE_STATEMENT_TIMEOUT: databaseTimeout('60s'),
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT: databaseTimeout('60s'),
};

type DatabaseTimeoutValues = z.output<z.ZodObject<typeof databaseTimeoutVariables>>;

export function databaseTimeoutsOf(v: DatabaseTimeoutValues): DatabaseTimeouts {
  return { connectMs: v.DATABASE_CONNECT_TIMEOUT, statementMs: v.DATABASE_STATEMENT_TIMEOUT, idleInTransactionMs: v.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT };
}
