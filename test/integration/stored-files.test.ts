import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { Database } from '../../src/db/database.types.js';
import { StoredFileError } from '../../src/errors.js';
import { findStoredFile, hasStoredFile, readStoredFile, STORED_FILE_CHUNK_BYTES, storeFileFromPath, storeFileFromStream } from '../../src/db/stored-file.repository.js';
import { writeCamt053 } from '../../src/statements/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

let t: TestDatabase;
let dir: string;
const at = new Date('2026-12-02T08:00:00Z');

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-stored-files-'));
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function readBack(sha256: string, db: Kysely<Database> = t.handle.db): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of readStoredFile(db, sha256)) parts.push(part);
  return Buffer.concat(parts);
}

/** The chunks' sizes in order, as the database holds them. */
async function chunkSizes(sha256: string): Promise<number[]> {
  const rows = await sql<{ seq: number; size: number }>`select seq, octet_length(bytes) as size from stored_file_chunks where sha256 = ${sha256} order by seq`.execute(t.handle.db);
  return rows.rows.map((r) => Number(r.size));
}

/** A stream of `bytes` in pieces of the given sizes, cycling: as a pipe or a socket hands them over. */
async function* inPieces(bytes: Buffer, sizes: number[]): AsyncGenerator<Buffer> {
  let offset = 0;
  for (let i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

describe(`stored files: imported files' original bytes, content-addressed (${backend})`, () => {
  it('stores a file of 3.5 MiB from its path in chunks of at most 1 MiB and gives it back byte for byte', async () => {
    const bytes = randomBytes(3.5 * STORED_FILE_CHUNK_BYTES);
    const file = path.join(dir, 'statement.xml');
    writeFileSync(file, bytes);
    const outcome = await t.handle.db.transaction().execute((trx) => storeFileFromPath(trx, file, { kind: 'bank_statement', storedAt: at }));
    expect(outcome).toEqual({ sha256: sha(bytes), size: BigInt(bytes.length), stored: true });
    expect(await chunkSizes(outcome.sha256)).toEqual([STORED_FILE_CHUNK_BYTES, STORED_FILE_CHUNK_BYTES, STORED_FILE_CHUNK_BYTES, STORED_FILE_CHUNK_BYTES / 2]);
    expect(await findStoredFile(t.handle.db, outcome.sha256)).toEqual({ sha256: sha(bytes), size: BigInt(bytes.length), kind: 'bank_statement', firstName: 'statement.xml', storedAt: at, chunks: 4 });
    expect((await readBack(outcome.sha256)).equals(bytes)).toBe(true);
  });

  it('stores the same content once, whatever its name or how it arrives; another content beside it', async () => {
    const bytes = randomBytes(2 * STORED_FILE_CHUNK_BYTES + 17);
    const file = path.join(dir, 'first-name.sta');
    writeFileSync(file, bytes);
    const first = await t.handle.db.transaction().execute((trx) => storeFileFromPath(trx, file, { kind: 'books_file', storedAt: at }));
    writeFileSync(path.join(dir, 'second-name.sta'), bytes);
    const again = await t.handle.db.transaction().execute((trx) => storeFileFromPath(trx, path.join(dir, 'second-name.sta'), { kind: 'books_file', storedAt: new Date('2026-12-03T08:00:00Z') }));
    const streamed = await t.handle.db.transaction().execute((trx) => storeFileFromStream(trx, inPieces(bytes, [65_536, 1, 300_000]), { kind: 'books_file', name: 'stdin', storedAt: at }));
    expect([first.stored, again.stored, streamed.stored]).toEqual([true, false, false]);
    expect(new Set([first.sha256, again.sha256, streamed.sha256])).toEqual(new Set([sha(bytes)]));
    expect((await findStoredFile(t.handle.db, first.sha256))?.firstName).toBe('first-name.sta');
    expect(await chunkSizes(first.sha256)).toEqual([STORED_FILE_CHUNK_BYTES, STORED_FILE_CHUNK_BYTES, 17]);

    // A stream of new content, in pieces that straddle the chunks' edges, filed under its digest.
    const other = randomBytes(STORED_FILE_CHUNK_BYTES + 5);
    const stored = await t.handle.db.transaction().execute((trx) => storeFileFromStream(trx, inPieces(other, [333_333, 700_001]), { kind: 'gateway_statement_file', name: 'payouts.csv', storedAt: at }));
    expect(stored).toEqual({ sha256: sha(other), size: BigInt(other.length), stored: true });
    expect(await chunkSizes(stored.sha256)).toEqual([STORED_FILE_CHUNK_BYTES, 5]);
    expect((await readBack(stored.sha256)).equals(other)).toBe(true);
    const provisional = await t.handle.db.selectFrom('stored_file_chunks').select('sha256').where('sha256', 'like', 'pending-%').execute();
    expect(provisional).toEqual([]);
  });

  it('keeps nothing of a file whose transaction rolls back, and stores an empty file as no chunks', async () => {
    const bytes = randomBytes(1000);
    await expect(
      t.handle.db.transaction().execute(async (trx) => {
        await storeFileFromStream(trx, inPieces(bytes, [10]), { kind: 'bank_statement', name: 'a.xml', storedAt: at });
        throw new Error('the import failed later');
      }),
    ).rejects.toThrow('the import failed later');
    expect(await hasStoredFile(t.handle.db, sha(bytes))).toBe(false);

    const empty = path.join(dir, 'empty.sta');
    writeFileSync(empty, '');
    const outcome = await t.handle.db.transaction().execute((trx) => storeFileFromPath(trx, empty, { kind: 'bank_statement', storedAt: at }));
    expect(outcome).toEqual({ sha256: sha(Buffer.alloc(0)), size: 0n, stored: true });
    expect(await chunkSizes(outcome.sha256)).toEqual([]);
    expect((await readBack(outcome.sha256)).length).toBe(0);
  });

  it('refuses to give back bytes altered or lost in the database, naming the file', async () => {
    const bytes = randomBytes(STORED_FILE_CHUNK_BYTES + 10);
    const file = path.join(dir, 'altered.xml');
    writeFileSync(file, bytes);
    const { sha256 } = await t.handle.db.transaction().execute((trx) => storeFileFromPath(trx, file, { kind: 'bank_statement', storedAt: at }));
    await sql`update stored_file_chunks set bytes = overlay(bytes placing '\\x00'::bytea from 3 for 1) where sha256 = ${sha256} and seq = 1`.execute(t.handle.db);
    await expect(readBack(sha256)).rejects.toThrow(new StoredFileError(`The stored file ${sha256} (altered.xml) no longer hashes to its digest (its bytes give ${sha(Buffer.concat([bytes.subarray(0, STORED_FILE_CHUNK_BYTES + 2), Buffer.from([0]), bytes.subarray(STORED_FILE_CHUNK_BYTES + 3)]))}, ${bytes.length} bytes): it was altered in the database.`));
    await sql`delete from stored_file_chunks where sha256 = ${sha256} and seq = 1`.execute(t.handle.db);
    await expect(readBack(sha256)).rejects.toThrow(/has lost chunk 1 of 2/);
    await expect(readBack('0'.repeat(64))).rejects.toThrow(`No stored file has SHA-256 ${'0'.repeat(64)}.`);
  });

  it('refuses a file that changed on disk between its reading and its storing', async () => {
    const file = path.join(dir, 'growing.sta');
    writeFileSync(file, 'first bytes');
    const known = { sha256: sha(Buffer.from('first bytes')), size: 11n };
    writeFileSync(file, 'first bytes and more');
    await expect(t.handle.db.transaction().execute((trx) => storeFileFromPath(trx, file, { kind: 'bank_statement', storedAt: at }, known))).rejects.toThrow(/growing\.sta: the file changed while it was being imported/);
    expect(await hasStoredFile(t.handle.db, known.sha256)).toBe(false);
  });

  it('statements import records each statement\'s file_sha256 and stores the file\'s bytes with it; --dry-run stores nothing', async () => {
    const accounts = path.join(dir, 'accounts.yaml');
    writeFileSync(accounts, 'bankAccounts:\n  - { name: eu-bank, iban: DE89370400440532013000, currency: EUR }\n');
    const env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC', RECON_ACCOUNTS_FILE: accounts };
    const statement = path.join(dir, 'eu-bank.xml');
    writeFileSync(statement, writeCamt053({ iban: 'DE89370400440532013000', currency: 'EUR', opening: 100n, days: [{ sequence: 1, date: '2026-11-02', entries: [5n] }, { sequence: 2, date: '2026-11-03', entries: [-7n] }] }));
    const bytes = readFileSync(statement);
    const clock = new FixedClock(new Date('2026-11-10T12:00:00Z'));
    // Last in this file: from here the commands, not this file's handle, own the embedded database.
    await serveToCommands(t);
    const dryRun = await runCliInProcess(['statements', 'import', '--dry-run', statement], env, { clock });
    expect(dryRun.code).toBe(0);
    expect(await withDatabase(t, (db) => hasStoredFile(db, sha(bytes)))).toBe(false);

    expect((await runCliInProcess(['statements', 'import', statement], env, { clock })).code).toBe(0);
    const rows = await withDatabase(t, (db) => db.selectFrom('bank_statements').select(['statement_id', 'file_sha256']).orderBy('id').execute());
    expect(rows).toEqual([
      { statement_id: 'STMT-2026-11-02-1', file_sha256: sha(bytes) },
      { statement_id: 'STMT-2026-11-03-2', file_sha256: sha(bytes) },
    ]);
    expect((await withDatabase(t, (db) => readBack(sha(bytes), db))).equals(bytes)).toBe(true);
    expect((await withDatabase(t, (db) => findStoredFile(db, sha(bytes))))?.kind).toBe('bank_statement');
  });
});
