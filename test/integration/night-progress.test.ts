import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reversedArrayLiteral, someAccountWithoutEndOfDay } from '../../src/queue/night-progress.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
}, 120_000);

afterAll(async () => {
  await t?.drop();
});

const NAMES = ['plain', 'with space', 'comma,inside', 'brace{}', 'quote"d', 'back\\slash', 'NULL', 'ünïcode €', '', 'tab\there'];

describe(`the night's progress question (${backend})`, () => {
  it('passes every account name to the server exactly, in reverse order, whatever its characters', async () => {
    const { rows } = await sql<{ name: string }>`select unnest(${reversedArrayLiteral(NAMES)}::text[]) as name`.execute(t.handle.db);
    expect(rows.map((r) => r.name)).toEqual([...NAMES].reverse());
  });

  it('makes the literal again when the list changes, even to one with the same length', () => {
    const first = reversedArrayLiteral(['a', 'b']);
    expect(reversedArrayLiteral(['a', 'b'])).toBe(first);
    expect(reversedArrayLiteral(['a', 'c'])).toBe('{"c","a"}');
    expect(reversedArrayLiteral(['a\nb'])).toBe('{"a\nb"}');
  });

  it('finds an account without its end-of-day run, and none once each has one after the slot', async () => {
    const db = t.handle.db;
    const slot = new Date('2026-12-01T22:00:00Z');
    const accounts = ['night-a', 'night "b"'];
    expect(await someAccountWithoutEndOfDay(db, accounts, '2026-12-01', slot)).toBe(true);
    for (const account of accounts) {
      await sql`
        insert into snapshot_runs (account, environment, trigger, business_date, status, started_at, finished_at, end_of_day, cutoff_at, cutoff_drift_seconds, reads_finished_at)
        values (${account}, 'sandbox', 'schedule', '2026-12-01', 'succeeded', ${slot}, ${new Date(slot.getTime() + 60_000)}, true, ${slot}, 60, ${new Date(slot.getTime() + 30_000)})`.execute(db);
      expect(await someAccountWithoutEndOfDay(db, accounts, '2026-12-01', slot)).toBe(account === accounts[0]);
    }
    expect(await someAccountWithoutEndOfDay(db, accounts, '2026-12-01', new Date(slot.getTime() + 120_000))).toBe(true);
  });
});
