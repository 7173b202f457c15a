import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { applyCaseAction } from '../../src/cases/case-actions.js';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { reopenSignoff } from '../../src/signoff/reopen.js';
import { approveSignoff, prepareSignoff } from '../../src/signoff/signoff-service.js';
import { verifySeals } from '../../src/signoff/verify-seals.js';
import { MORNING, NIGHT, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
let ctx: AppContext;
let keyFile: string;
const clock = new FixedClock(MORNING);
const anna = { id: 1, name: 'anna', role: 'preparer' as const };
const ben = { id: 2, name: 'ben', role: 'approver' as const };

function writeKey(name: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return file;
}

/** Runs `fn` as an owner who sets the triggers aside: what `signoff verify` is there to catch. */
const pastTheTriggers = (db: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<unknown>) =>
  db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await fn(trx);
  });

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-seals-'));
  keyFile = writeKey('signing-key.pem');
  ctx = createTestContext(t, { RECON_SIGNING_KEY_FILE: keyFile }, { clock });
  await produceNightWithBreak(ctx, dir);
  const { id } = await t.handle.db.selectFrom('reconciliation_cases').select('id').executeTakeFirstOrThrow();
  await applyCaseAction(ctx, { caseId: id, action: 'accept', actor: 'anna', note: 'timing difference' });
  await prepareSignoff(ctx, anna, NIGHT, null);
  clock.advance(60_000);
  await approveSignoff(ctx, ben, NIGHT, null);
  clock.advance(60_000);
  await reopenSignoff(ctx, ben, NIGHT, 'EUR fee booked on the wrong day', null);
}, 120_000);

afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`seals, chains and signatures (${backend})`, () => {
  it('signs prepare, approve and reopen with RECON_SIGNING_KEY_FILE and verifies all of it', async () => {
    const steps = await t.handle.db.selectFrom('signoff_signatures').select(['step']).orderBy('id').execute();
    expect(steps.map((s) => s.step)).toEqual(['prepare', 'approve', 'reopen']);
    const verified = await verifySeals(ctx);
    expect(verified.problem).toBeUndefined();
    expect(verified).toMatchObject({ keyChecked: true, checked: { signoffs: 1, reports: 1, signatures: 3 } });
    expect(verified.checked.caseEvents).toBeGreaterThanOrEqual(2);
    expect(verified.checked.auditRows).toBeGreaterThanOrEqual(3);
  });

  it('names signatures made with another key than the configured one', async () => {
    const other = createTestContext(t, { RECON_SIGNING_KEY_FILE: writeKey('other-key.pem') }, { clock });
    expect((await verifySeals(other)).problem).toEqual({ table: 'signoff_signatures', id: '1/prepare', problem: "the prepare signature of sign-off #1 was made with another key than RECON_SIGNING_KEY_FILE's" });
  });

  it('finds an approval rewritten past the triggers, and a forged signature', async () => {
    const db = t.handle.db;
    await pastTheTriggers(db, (trx) => sql`update signoffs set approved_by = 'mallory'`.execute(trx));
    expect((await verifySeals(ctx)).problem).toMatchObject({ table: 'signoffs', id: '1', problem: `sign-off #1 of ${NIGHT}: its approval was changed or added past the database rules` });
    await pastTheTriggers(db, (trx) => sql`update signoffs set approved_by = 'ben'`.execute(trx));
    expect((await verifySeals(ctx)).problem).toBeUndefined();
    await pastTheTriggers(db, (trx) => sql`update signoff_signatures set signature = ${Buffer.alloc(64, 1).toString('base64')} where step = 'approve'`.execute(trx));
    expect((await verifySeals(ctx)).problem).toEqual({ table: 'signoff_signatures', id: '1/approve', problem: 'the approve signature of sign-off #1 does not verify' });
  });

  it('finds a case event changed and an audit row removed past the triggers', async () => {
    const db = t.handle.db;
    const event = await db.selectFrom('case_events').select(['id', 'note']).where('action', '=', 'accepted').executeTakeFirstOrThrow();
    await pastTheTriggers(db, (trx) => sql`update case_events set note = 'approved by the CFO' where id = ${event.id}`.execute(trx));
    expect((await verifySeals(ctx)).problem).toEqual({ table: 'case_events', id: String(event.id), problem: `case_events row ${event.id} was changed after it was written (its hash does not match its content)` });
    await pastTheTriggers(db, (trx) => sql`update case_events set note = ${event.note} where id = ${event.id}`.execute(trx));
    const audits = await db.selectFrom('console_audit').select('id').orderBy('id').execute();
    await pastTheTriggers(db, (trx) => sql`delete from console_audit where id = ${audits[1]!.id}`.execute(trx));
    expect((await verifySeals(ctx)).problem).toEqual({
      table: 'console_audit',
      id: audits[2]!.id,
      problem: `console_audit row ${audits[2]!.id} does not link to the row before it (a row was removed, inserted or changed before it)`,
    });
  });

  it('refuses a signing key file readable by group or others, naming the file and its mode in octal', async () => {
    const open = writeKey('open-key.pem');
    chmodSync(open, 0o644);
    const other = createTestContext(t, { RECON_SIGNING_KEY_FILE: open }, { clock });
    await expect(verifySeals(other)).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining(`RECON_SIGNING_KEY_FILE ${open} is readable by group or others (mode 0644)`) });
  });
});
