import type pg from 'pg';
import type { DatabaseHandle } from '../db/open-database.js';

/** A held per-account run lock; release it when the run is recorded. */
export interface AccountLock {
  /** Aborted if the lock's session dies mid-run: another process may then take the account. */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

// Within one process (the embedded database is one process by construction) accounts are
// guarded by this set; across processes and machines, by PostgreSQL advisory locks.
const heldInProcess = new Set<string>();

function inProcessLock(key: string): AccountLock | undefined {
  if (heldInProcess.has(key)) return undefined;
  heldInProcess.add(key);
  let released = false;
  return {
    lost: new AbortController().signal,
    async release() {
      if (released) return;
      released = true;
      heldInProcess.delete(key);
    },
  };
}

/**
 * Tries to take the account's run lock without waiting. On PostgreSQL it is a session advisory
 * lock on a dedicated connection held for the whole run, so it dies with the process that holds
 * it (kill -9 included) and never blocks the pool. Returns undefined when someone else holds it.
 */
export async function tryAcquireAccountLock(database: DatabaseHandle, account: string): Promise<AccountLock | undefined> {
  const key = `${database.description}|${account}`;
  const local = inProcessLock(key);
  if (!local) return undefined;
  if (database.kind === 'embedded') return local;

  let client: pg.Client;
  try {
    client = await database.connectDedicated();
  } catch (error) {
    await local.release();
    throw error;
  }
  try {
    // A replica that dies without closing its socket (power loss, a cut network) keeps its
    // session, and so the account, until the server notices: probe it after 10 s of silence,
    // every 5 s, and drop it after 3 missed probes (about 25 s), well inside one retry delay.
    await client.query('set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3');
    const result = await client.query<{ locked: boolean }>(
      `select pg_try_advisory_lock(hashtextextended('wallet-recon:account:' || $1, 0)) as locked`,
      [account],
    );
    if (!result.rows[0]?.locked) {
      await client.end().catch(() => undefined);
      await local.release();
      return undefined;
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    await local.release();
    throw error;
  }
  const lost = new AbortController();
  let releasing = false;
  const onLost = () => {
    if (!releasing) lost.abort(new Error(`the database session holding the lock of account "${account}" ended`));
  };
  client.on('error', onLost);
  client.on('end', onLost);
  return {
    lost: lost.signal,
    async release() {
      releasing = true;
      // Closing the session releases the advisory lock even if the unlock query fails.
      await client.end().catch(() => undefined);
      await local.release();
    },
  };
}
