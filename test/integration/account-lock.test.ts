import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/open-database.js';
import { MAX_LOCK_SESSIONS, tryAcquireAccountLock } from '../../src/snapshot/account-lock.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});

/** Sessions of this test database holding advisory locks, and how many locks. */
async function advisoryLocks(db: DatabaseHandle): Promise<{ sessions: number; locks: number }> {
  const { rows } = await db.connectDedicated().then(async (client) => {
    try {
      return await client.query<{ sessions: string; locks: string }>(
        `select count(distinct l.pid) as sessions, count(*) as locks
         from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where l.locktype = 'advisory' and a.datname = current_database()`,
      );
    } finally {
      await client.end();
    }
  });
  return { sessions: Number(rows[0]!.sessions), locks: Number(rows[0]!.locks) };
}

describe.skipIf(backend !== 'postgres')('account locks on PostgreSQL', () => {
  it('holds the locks of many accounts on a few shared sessions, and closes them when all are released', async () => {
    const accounts = Array.from({ length: 40 }, (_, i) => `acct-${i}`);
    const locks = await Promise.all(accounts.map((a) => tryAcquireAccountLock(t.handle, a)));
    expect(locks.every((l) => l !== undefined)).toBe(true);
    const held = await advisoryLocks(t.handle);
    expect(held.locks).toBe(40);
    expect(held.sessions).toBeGreaterThanOrEqual(1);
    expect(held.sessions).toBeLessThanOrEqual(MAX_LOCK_SESSIONS);

    // Another process (here: another handle, so other sessions) cannot take them.
    const other = await openDatabase({ databaseUrl: t.childEnv.DATABASE_URL!, dataDir: 'memory://', command: 'test other replica' });
    try {
      expect(await tryAcquireAccountLock(other, 'acct-7')).toBeUndefined();
      await Promise.all(locks.map((l) => l!.release()));
      expect(await advisoryLocks(t.handle)).toEqual({ sessions: 0, locks: 0 });
      const taken = await tryAcquireAccountLock(other, 'acct-7');
      expect(taken).toBeDefined();
      await taken!.release();
    } finally {
      await other.close();
    }
  });

  it('tells every run whose lock lived on a session that ended that it lost its lock', async () => {
    const [a, b] = await Promise.all([tryAcquireAccountLock(t.handle, 'lost-a'), tryAcquireAccountLock(t.handle, 'lost-b')]);
    const admin = await t.handle.connectDedicated();
    try {
      // The server ends the sessions, as it does for a replica whose connection went silent.
      await admin.query(
        `select pg_terminate_backend(l.pid) from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where l.locktype = 'advisory' and a.datname = current_database() and l.pid <> pg_backend_pid()`,
      );
    } finally {
      await admin.end();
    }
    for (let i = 0; i < 100 && !(a!.lost.aborted && b!.lost.aborted); i++) await new Promise((r) => setTimeout(r, 20));
    expect([a!.lost.aborted, b!.lost.aborted]).toEqual([true, true]);
    await Promise.all([a!.release(), b!.release()]);
    // The account is free again for the next run.
    const again = await tryAcquireAccountLock(t.handle, 'lost-a');
    expect(again).toBeDefined();
    await again!.release();
  });
});

describe('account locks within one process', () => {
  it('refuses a second lock on an account this process already holds, on either database', async () => {
    const first = await tryAcquireAccountLock(t.handle, 'twice');
    expect(first).toBeDefined();
    expect(await tryAcquireAccountLock(t.handle, 'twice')).toBeUndefined();
    await first!.release();
    const again = await tryAcquireAccountLock(t.handle, 'twice');
    expect(again).toBeDefined();
    await again!.release();
  });
});
