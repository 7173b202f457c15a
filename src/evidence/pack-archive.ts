import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import { once } from 'node:events';
import { ZipFile } from 'yazl';

/** A file of a pack as the manifest lists it. */
export interface PackFile {
  path: string;
  sha256: string;
  size: number;
}

// Every entry has the same time and mode: the archive's bytes depend on its content only, so two
// exports of the same data compare equal by hash. DOS time fields are local-time fields: a date
// made from local parts writes the same fields in every time zone, and no UTC extra field is added.
const ENTRY = { mtime: new Date(1980, 0, 1, 0, 0, 0), mode: 0o100644, compress: true, forceDosTimestamp: true } as const;

/**
 * A zip written entry by entry in the order given, streamed to `outPath`: an entry's bytes pass
 * through (hashed on the way for the manifest), so memory does not grow with the pack's size.
 */
export class PackArchive {
  private readonly zip = new ZipFile();
  private readonly written: Promise<void>;
  private readonly out: ReturnType<typeof createWriteStream>;
  private failure: unknown;
  readonly files: PackFile[] = [];

  constructor(outPath: string) {
    const out = createWriteStream(outPath);
    this.out = out;
    this.zip.outputStream.pipe(out);
    this.written = new Promise((resolve, reject) => {
      out.on('close', resolve);
      out.on('error', reject);
      this.zip.outputStream.on('error', reject);
    });
    // Kept so a write error surfaces at the next entry, not as an unhandled rejection.
    this.written.catch((error: unknown) => (this.failure = error ?? new Error('the pack could not be written')));
  }

  /** Adds one entry from bytes or a stream of them; `listed` entries are recorded for the manifest. */
  async add(path: string, source: Buffer | string | AsyncIterable<Buffer | Uint8Array | string>, listed = true): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const hash = createHash('sha256');
    let size = 0;
    if (typeof source === 'string' || Buffer.isBuffer(source)) {
      const bytes = Buffer.isBuffer(source) ? source : Buffer.from(source, 'utf8');
      hash.update(bytes);
      size = bytes.length;
      this.zip.addBuffer(bytes, path, ENTRY);
    } else {
      const pass = new PassThrough();
      this.zip.addReadStream(pass, path, ENTRY);
      for await (const piece of source) {
        const bytes = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
        hash.update(bytes);
        size += bytes.length;
        if (!pass.write(bytes)) await Promise.race([once(pass, 'drain'), this.written]);
        if (this.failure !== undefined) throw this.failure;
      }
      pass.end();
    }
    if (listed) this.files.push({ path, sha256: hash.digest('hex'), size });
  }

  /** Gives up a pack half written: its file is closed (the caller removes it). */
  async abort(): Promise<void> {
    this.out.destroy();
    await this.written.catch(() => undefined);
  }

  /** Ends the archive and waits until every byte is on disk. */
  async finish(): Promise<void> {
    this.zip.end();
    await this.written;
  }
}
