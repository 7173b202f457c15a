import { setMaxListeners } from 'node:events';
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
 * Advisory locks are held by database sessions, and one session can hold any number of them:
 * a process keeps at most this many lock sessions whatever its account concurrency, so a fleet
 * of accounts (or several replicas) does not exhaust max_connections. A session is opened when
 * needed and closed as soon as it holds no lock.
 */
export const MAX_LOCK_SESSIONS = 4;

interface LockSession {
  readonly client: pg.Client;
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
  const session: LockSession = { client, lost: new AbortController(), held: 0, queue: Promise.resolve() };
  // Every run whose lock lives on this session listens for its loss: as many as the locks it holds.
  setMaxListeners(0, session.lost.signal);
  const onLost = () => session.lost.abort(new Error('the database session holding account locks ended'));
  client.on('error', onLost);
  client.on('end', onLost);
  try {
    // A replica that dies without closing its socket (power loss, a cut network) keeps its
    // session, and so its accounts, until the server notices: probe it after 10 s of silence,
    // every 5 s, and drop it after 3 missed probes (about 25 s), well inside one retry delay.
    await client.query('set tcp_keepalives_idle = 10; set tcp_keepalives_interval = 5; set tcp_keepalives_count = 3');
  } catch (error) {
    await closeSession(session);
    throw error;
  }
  return session;
}

async function closeSession(session: LockSession): Promise<void> {
  session.client.removeAllListeners('end');
  // Closing the session releases whatever advisory locks it still holds.
  await session.client.end().catch(() => undefined);
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
  const local = inProcessLock(key);
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
  try {
    const result = await query<{ locked: boolean }>(session, `select pg_try_advisory_lock(${LOCK_KEY}) as locked`, [account]);
    locked = result.rows[0]?.locked === true;
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
