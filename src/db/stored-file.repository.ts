import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { Kysely, Transaction } from 'kysely';
import { InputFileError, StoredFileError } from '../errors.js';
import type { Database, StoredFileKind } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The size of a stored chunk: a file is written and read back one chunk at a time. */
export const STORED_FILE_CHUNK_BYTES = 1024 * 1024;

/** A stored file as its row describes it. */
export interface StoredFile {
  sha256: string;
  size: bigint;
  kind: StoredFileKind;
  firstName: string;
  storedAt: Date;
  chunks: number;
}

/** What storing a file did: its digest and size, and whether its bytes were new (false: already stored). */
export interface StoredFileOutcome {
  sha256: string;
  size: bigint;
  stored: boolean;
}

/** What a stored file is and when it arrived: the name is the first one it came under. */
export interface StoredFileMeta {
  kind: StoredFileKind;
  name: string;
  storedAt: Date;
}

/** The stored file of a digest, if any. */
export async function findStoredFile(db: Db, sha256: string): Promise<StoredFile | undefined> {
  const row = await db.selectFrom('stored_files').select(['sha256', 'size', 'kind', 'first_name', 'stored_at', 'chunks']).where('sha256', '=', sha256).executeTakeFirst();
  return row === undefined ? undefined : { sha256: row.sha256, size: BigInt(row.size), kind: row.kind, firstName: row.first_name, storedAt: row.stored_at, chunks: row.chunks };
}

/** Whether a file of this digest is stored. */
export async function hasStoredFile(db: Db, sha256: string): Promise<boolean> {
  return (await db.selectFrom('stored_files').select('sha256').where('sha256', '=', sha256).executeTakeFirst()) !== undefined;
}

/** The SHA-256 (hex) and size of a file on disk, read as a stream. */
export async function digestFile(filePath: string): Promise<{ sha256: string; size: bigint }> {
  const hash = createHash('sha256');
  let size = 0n;
  for await (const chunk of createReadStream(filePath)) {
    hash.update(chunk as Buffer);
    size += BigInt((chunk as Buffer).length);
  }
  return { sha256: hash.digest('hex'), size };
}

/**
 * Stores a file on disk inside transaction `db` (so it commits or rolls back with what was read
 * from it), unless a file of the same content is stored already. `known`, when the caller has
 * already hashed the bytes it read, spares the first pass; the bytes written are hashed again
 * and must match, or the file changed on disk meanwhile and the store is refused.
 */
export async function storeFileFromPath(db: Transaction<Database>, filePath: string, meta: Omit<StoredFileMeta, 'name'> & { name?: string }, known?: { sha256: string; size: bigint }): Promise<StoredFileOutcome> {
  const { sha256, size } = known ?? (await digestFile(filePath));
  const name = meta.name ?? path.basename(filePath);
  // Inserted first: a transaction storing the same bytes at the same time waits here for this
  // one to end, then finds them stored (or stores them itself if this one rolled back).
  const inserted = await db
    .insertInto('stored_files')
    .values({ sha256, size: size.toString(), kind: meta.kind, first_name: name, stored_at: meta.storedAt, chunks: chunkCount(size) })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .returning('sha256')
    .executeTakeFirst();
  if (inserted === undefined) return { sha256, size, stored: false };
  const written = await writeChunks(db, sha256, createReadStream(filePath));
  if (written.sha256 !== sha256 || written.size !== size) {
    throw new InputFileError(`${filePath}: the file changed while it was being imported (its SHA-256 was ${sha256}, then ${written.sha256}). Nothing was imported: import it again once it is complete.`);
  }
  return { sha256, size, stored: true };
}

/**
 * Stores the bytes of a stream (standard input, a download) inside transaction `db`, hashing
 * them as they pass: written under a provisional key, then filed under their digest — or
 * dropped when a file of that content is stored already.
 */
export async function storeFileFromStream(db: Transaction<Database>, stream: AsyncIterable<Uint8Array | string>, meta: StoredFileMeta): Promise<StoredFileOutcome> {
  const provisional = `pending-${randomUUID()}`;
  const { sha256, size } = await writeChunks(db, provisional, stream);
  const inserted = await db
    .insertInto('stored_files')
    .values({ sha256, size: size.toString(), kind: meta.kind, first_name: meta.name, stored_at: meta.storedAt, chunks: chunkCount(size) })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .returning('sha256')
    .executeTakeFirst();
  if (inserted === undefined) {
    await db.deleteFrom('stored_file_chunks').where('sha256', '=', provisional).execute();
    return { sha256, size, stored: false };
  }
  // Only the key changes: PostgreSQL keeps each chunk's (toasted) bytes where they are.
  await db.updateTable('stored_file_chunks').set({ sha256 }).where('sha256', '=', provisional).execute();
  return { sha256, size, stored: true };
}

/**
 * The bytes of a stored file, a chunk at a time, checked as they pass: a missing chunk or bytes
 * that no longer hash to the file's digest end the stream with a StoredFileError (after the bad
 * bytes, so a consumer writing a file must discard it on error).
 */
export async function* readStoredFile(db: Db, sha256: string): AsyncGenerator<Buffer> {
  const file = await findStoredFile(db, sha256);
  if (file === undefined) throw new StoredFileError(`No stored file has SHA-256 ${sha256}.`);
  const hash = createHash('sha256');
  let size = 0n;
  for (let seq = 0; seq < file.chunks; seq++) {
    const row = await db.selectFrom('stored_file_chunks').select('bytes').where('sha256', '=', sha256).where('seq', '=', seq).executeTakeFirst();
    if (row === undefined) throw new StoredFileError(`The stored file ${sha256} (${file.firstName}) has lost chunk ${seq} of ${file.chunks}: its bytes cannot be given back.`);
    const bytes = Buffer.from(row.bytes);
    hash.update(bytes);
    size += BigInt(bytes.length);
    yield bytes;
  }
  const digest = hash.digest('hex');
  if (digest !== sha256 || size !== file.size) {
    throw new StoredFileError(`The stored file ${sha256} (${file.firstName}) no longer hashes to its digest (its bytes give ${digest}, ${size} bytes): it was altered in the database.`);
  }
}

function chunkCount(size: bigint): number {
  return Number((size + BigInt(STORED_FILE_CHUNK_BYTES) - 1n) / BigInt(STORED_FILE_CHUNK_BYTES));
}

/** Writes a stream's bytes as chunks of exactly STORED_FILE_CHUNK_BYTES (the last one shorter) under `key`. */
async function writeChunks(db: Transaction<Database>, key: string, stream: AsyncIterable<Uint8Array | string>): Promise<{ sha256: string; size: bigint }> {
  const hash = createHash('sha256');
  let size = 0n;
  let seq = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async (bytes: Buffer) => {
    await db.insertInto('stored_file_chunks').values({ sha256: key, seq, bytes }).execute();
    seq += 1;
  };
  for await (const piece of stream) {
    let data = typeof piece === 'string' ? Buffer.from(piece) : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    hash.update(data);
    size += BigInt(data.length);
    while (pendingBytes + data.length >= STORED_FILE_CHUNK_BYTES) {
      const take = STORED_FILE_CHUNK_BYTES - pendingBytes;
      pending.push(data.subarray(0, take));
      await flush(Buffer.concat(pending, STORED_FILE_CHUNK_BYTES));
      data = data.subarray(take);
      pending = [];
      pendingBytes = 0;
    }
    if (data.length > 0) {
      // A copy: a stream may reuse the buffer it handed out.
      pending.push(Buffer.from(data));
      pendingBytes += data.length;
    }
  }
  if (pendingBytes > 0) await flush(Buffer.concat(pending, pendingBytes));
  return { sha256: hash.digest('hex'), size };
}
