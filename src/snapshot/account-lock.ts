import { setMaxListeners } from 'node:events';
import { sql, type Transaction } from 'kysely';
import type pg from 'pg';
import type { Database } from '../db/database.types.js';
import type { DatabaseHandle } from '../db/open-database.js';
import { lockRunningRun, RunNoLongerRunningError } from '../db/snapshot-run.repository.js';
import { DatabaseError, describeError } from '../errors.js';

/** A held per-account run lock; release it when the run is recorded. */
export interface AccountLock {
  /** Aborted if the lock's session dies mid-run: another process may then take the account. */
  readonly lost: AbortSignal;
  /**
   * Inside the transaction that writes the run's outcome: throws AccountLockLostError unless the
   * lock is still ours (its session holds it and no one acquired it since). On PostgreSQL it
   * locks the account's fence row until that transaction ends, so a replica taking the account
   * over waits for the write and then sees it. Then locks the row of run `runId`, and throws
   * RunNoLongerRunningError unless it is still `running` (on PostgreSQL in the same round trip).
   */
  assertHeld(trx: Transaction<Database>, runId: number): Promise<void>;
  release(): Promise<void>;
}

/** The account's lock is no longer ours: whatever the run fetched must not be written. */
export class AccountLockLostError extends DatabaseError {
  constructor(
    readonly account: string,
    why: string,
  ) {
    super(`the lock of account "${account}" was lost mid-run (${why}); nothing was written`);
  }
}

/** The name lock sessions carry in pg_stat_activity, so an operator (and the fault tests) can find them. */
export const LOCK_SESSION_APPLICATION_NAME = 'wallet-recon account locks';

// Within one process (the embedded database is one process by construction) accounts are
// guarded by this set; across processes and machines, by PostgreSQL advisory locks.
const heldInProcess = new Set<string>();

function inProcessLock(key: string, account: string): AccountLock | undefined {
  if (heldInProcess.has(key)) return undefined;
  heldInProcess.add(key);
  let released = false;
  return {
    lost: new AbortController().signal,
    async assertHeld(trx, runId) {
      if (released) throw new AccountLockLostError(account, 'it was released');
      await lockRunningRun(trx, runId);
    },
    async release() {
      if (released) return;
      released = true;
      heldInProcess.delete(key);
    },
  };
}

/**
 * Advisory locks are held by database sessions, and one session can hold any number of them:
 * a process keeps at most this many lock sessions whatever its account concurrency, so a fleet
 * of accounts (or several replicas) does not exhaust max_connections. A session is opened when
 * needed and closed as soon as it holds no lock.
 */
export const MAX_LOCK_SESSIONS = 4;

interface LockSession {
  readonly client: pg.Client;
  /** The server process of the session: pg_locks names the holder of an advisory lock by it. */
  pid: number;
  /** Aborted when the session ends unexpectedly: every lock it held is lost. */
  readonly lost: AbortController;
  held: number;
  /** The session's queries, one after another: a pg client must not be given a second query while one runs. */
  queue: Promise<unknown>;
}

function query<R extends pg.QueryResultRow>(session: LockSession, text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
  const result = session.queue.then(() => session.client.query<R>(text, values));
  session.queue = result.catch(() => undefined);
  return result;
}

interface SessionSet {
  readonly sessions: LockSession[];
  /** Choosing, opening and closing sessions take turns, so two acquirers never both open the last slot. */
  turn: Promise<void>;
}

const sessionSets = new WeakMap<DatabaseHandle, SessionSet>();

function inTurn<T>(set: SessionSet, fn: () => Promise<T>): Promise<T> {
  const result = set.turn.then(fn);
  set.turn = result.then(
    () => undefined,
    () => undefined,
  );
  return result;
}

async function openSession(database: DatabaseHandle): Promise<LockSession> {
  const client = await database.connectDedicated();
  const session: LockSession = { client, pid: 0, lost: new AbortController(), held: 0, queue: Promise.resolve() };
  // Every run whose lock lives on this session listens for its loss: as many as the locks it holds.
  setMaxListeners(0, session.lost.signal);
  // The first word wins: an error says why (a restart, a terminated session), the end that follows does not.
  client.on('error', (error: Error) => session.lost.abort(new DatabaseError(`the database session holding account locks ended (${error.message})`)));
  client.on('end', () => session.lost.abort(new DatabaseError('the database session holding account locks ended')));
  try {
    // A replica that dies without closing its socket (power loss, a cut network) keeps its
    // session, and so its accounts, until the server notices: probe it after 10 s of silence,
    // every 5 s, and drop it after 3 missed probes (about 25 s), well inside one retry delay.
    await client.query(`set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3; set application_name = '${LOCK_SESSION_APPLICATION_NAME}'`);
    session.pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  } catch (error) {
    await closeSession(session);
    throw error;
  }
  return session;
}

// How long closing a lock session may wait for the server's goodbye before its socket is dropped.
const CLOSE_SESSION_MS = 5_000;

async function closeSession(session: LockSession): Promise<void> {
  session.client.removeAllListeners('end');
  // Closing the session releases whatever advisory locks it still holds. Over a network that went
  // silent the goodbye never comes back: drop the socket then (the server ends the session itself).
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    session.client.end().then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_SESSION_MS))),
  ]);
  clearTimeout(timer);
  if (!ended) (session.client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/** The least busy live session, or a new one while there are fewer than MAX_LOCK_SESSIONS. */
function takeSession(database: DatabaseHandle, set: SessionSet): Promise<LockSession> {
  return inTurn(set, async () => {
    for (const dead of set.sessions.filter((s) => s.lost.signal.aborted)) set.sessions.splice(set.sessions.indexOf(dead), 1);
    const idlest = set.sessions.reduce<LockSession | undefined>((best, s) => (best === undefined || s.held < best.held ? s : best), undefined);
    const session = idlest !== undefined && (idlest.held === 0 || set.sessions.length >= MAX_LOCK_SESSIONS) ? idlest : await openSession(database);
    if (!set.sessions.includes(session)) set.sessions.push(session);
    session.held++;
    return session;
  });
}

function giveBack(set: SessionSet, session: LockSession): Promise<void> {
  return inTurn(set, async () => {
    session.held--;
    if (session.held > 0 && !session.lost.signal.aborted) return;
    const index = set.sessions.indexOf(session);
    if (index >= 0) set.sessions.splice(index, 1);
    await closeSession(session);
  });
}

// The lock's key, computed from the account name passed as $1.
const LOCK_KEY = `hashtextextended('wallet-recon:account:' || $1, 0)`;

/**
 * Tries to take the account's run lock without waiting. On PostgreSQL it is a session advisory
 * lock on one of the process's few lock sessions (never a pool connection), held for the whole
 * run, so it dies with the process that holds it (kill -9 included) and never blocks the pool.
 * Returns undefined when someone else holds it.
 */
export async function tryAcquireAccountLock(database: DatabaseHandle, account: string): Promise<AccountLock | undefined> {
  const key = `${database.description}|${account}`;
  const local = inProcessLock(key, account);
  if (!local) return undefined;
  if (database.kind === 'embedded') return local;

  let set = sessionSets.get(database);
  if (set === undefined) {
    set = { sessions: [], turn: Promise.resolve() };
    sessionSets.set(database, set);
  }
  let session: LockSession;
  try {
    session = await takeSession(database, set);
  } catch (error) {
    await local.release();
    throw error;
  }
  let locked = false;
  let fence = '';
  try {
    // Taken and, once ours, fenced in one round trip: the fence is bumped only when the lock was
    // had, so a write of an earlier holder that lost the lock unnoticed fails. A session advisory
    // lock outlives the statement that took it, even one that fails: on an error it is released.
    let result: pg.QueryResult<{ fence: string }>;
    try {
      result = await query<{ fence: string }>(
        session,
        `with attempt as (select pg_try_advisory_lock(${LOCK_KEY}) as locked)
         insert into account_lock_fences (account, fence, acquired_at) select $1, 1, now() from attempt where attempt.locked
         on conflict (account) do update set fence = account_lock_fences.fence + 1, acquired_at = now()
         returning fence`,
        [account],
      );
    } catch (error) {
      // Not fenced, not held: unlock (or the session's end does) and let the caller see why.
      await query(session, `select pg_advisory_unlock(${LOCK_KEY})`, [account]).catch(() => session.lost.abort(new Error('unlock failed')));
      throw error;
    }
    if (result.rows.length === 1) {
      fence = result.rows[0]!.fence;
      locked = true;
    }
  } finally {
    if (!locked) {
      await giveBack(set, session);
      await local.release();
    }
  }
  if (!locked) return undefined;
  const sessionSet = set;
  let released = false;
  return {
    lost: session.lost.signal,
    async assertHeld(trx, runId) {
      if (released) throw new AccountLockLostError(account, 'it was released');
      if (session.lost.signal.aborted) throw new AccountLockLostError(account, describeError(session.lost.signal.reason));
      // In one round trip: the fence row, locked until the transaction ends, whether our session
      // is still alive and holding the lock (it may have died with no one taking over yet), and
      // the run's row, locked too (before the date locks the writes take, as lockRunningRun does).
      const row = await sql<{ fence: string; held: boolean; run_status: string | null }>`
        with run as (select status from snapshot_runs where id = ${runId} for update)
        select f.fence, (select status from run) as run_status, exists (
          select 1 from pg_locks
          where locktype = 'advisory' and granted and pid = ${session.pid} and objsubid = 1
            and classid = ((hashtextextended('wallet-recon:account:' || ${account}::text, 0) >> 32) & 4294967295)::oid
            and objid = (hashtextextended('wallet-recon:account:' || ${account}::text, 0) & 4294967295)::oid
        ) as held
        from account_lock_fences f where f.account = ${account} for update of f`.execute(trx);
      const found = row.rows[0];
      if (found?.fence !== fence) {
        throw new AccountLockLostError(account, `another process acquired it since (fence ${found?.fence ?? 'gone'}, ours ${fence}): its session had ended unnoticed`);
      }
      if (found.held !== true) throw new AccountLockLostError(account, 'the database session holding it ended');
      if (found.run_status !== 'running') throw new RunNoLongerRunningError(runId, found.run_status ?? undefined);
    },
    async release() {
      if (released) return;
      released = true;
      if (!session.lost.signal.aborted) {
        // Unlocked on the session that holds it; if that fails the session is closed, which unlocks too.
        await query(session, `select pg_advisory_unlock(${LOCK_KEY})`, [account]).catch(() => session.lost.abort(new Error('unlock failed')));
      }
      await giveBack(sessionSet, session);
      await local.release();
    },
  };
}
