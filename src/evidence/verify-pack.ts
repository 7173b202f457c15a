import { createHash, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { checkChainRows, fingerprintOf, MANIFEST, PUBLIC_KEY, publicKeyOf, SIGNATURE, type PackManifest } from './pack-manifest.js';

/** What verifying a pack came to: 0 every check holds, 1 something does not (named), 2 not a pack. */
export interface PackVerification {
  code: 0 | 1 | 2;
  /** What was checked (code 0), or the first thing that does not hold. */
  lines: string[];
}

function openZip(file: string): Promise<ZipFile> {
  return new Promise((resolve, reject) => yauzl.open(file, { lazyEntries: true, autoClose: false, strictFileNames: true }, (error, zip) => (error ? reject(error) : resolve(zip))));
}

function listEntries(zip: ZipFile): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Entry>();
    zip.on('entry', (entry: Entry) => {
      entries.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', reject);
    zip.readEntry();
  });
}

/** An entry's SHA-256, size and (when `keep`) bytes; yauzl checks its CRC as it is read. */
async function readEntry(zip: ZipFile, entry: Entry, keep = false): Promise<{ sha256: string; size: number; bytes?: Buffer }> {
  const stream: Readable = await new Promise((resolve, reject) => zip.openReadStream(entry, (error, s) => (error ? reject(error) : resolve(s))));
  const hash = createHash('sha256');
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    hash.update(bytes);
    size += bytes.length;
    if (keep) parts.push(bytes);
  }
  return { sha256: hash.digest('hex'), size, bytes: keep ? Buffer.concat(parts) : undefined };
}

/**
 * Checks an evidence pack offline, with nothing but the file (and optionally the public key the
 * auditor was given): the manifest's signature, every file against the manifest (and no file
 * beside them), the sign-off chain's links and hashes, and each sealed report against its seal.
 * Reads no database, no configuration and no environment.
 */
export async function verifyEvidencePack(file: string, options: { publicKeyFile?: string } = {}): Promise<PackVerification> {
  const bad = (line: string): PackVerification => ({ code: 1, lines: [line] });
  let zip: ZipFile;
  let entries: Map<string, Entry>;
  try {
    zip = await openZip(file);
    entries = await listEntries(zip);
  } catch (error) {
    return { code: 2, lines: [`${file} is not an evidence pack: it cannot be read as a zip (${(error as Error).message}).`] };
  }
  try {
    const manifestEntry = entries.get(MANIFEST);
    if (manifestEntry === undefined) return { code: 2, lines: [`${file} is not an evidence pack: it holds no ${MANIFEST}.`] };
    let manifestBytes: Buffer;
    let manifest: PackManifest;
    try {
      manifestBytes = (await readEntry(zip, manifestEntry, true)).bytes!;
      manifest = JSON.parse(manifestBytes.toString('utf8')) as PackManifest;
      if (!Array.isArray(manifest.files) || !Array.isArray(manifest.chain) || !Array.isArray(manifest.signoffs) || typeof manifest.signature !== 'object') throw new Error('files, chain, signoffs or signature missing');
    } catch (error) {
      return bad(`${MANIFEST}: it is not a pack manifest (${(error as Error).message}).`);
    }
    const lines: string[] = [];

    // The signature first: the manifest is what every other check trusts.
    let key: KeyObject | undefined;
    let keySource = '';
    if (options.publicKeyFile !== undefined) {
      let pem: Buffer;
      try {
        pem = readFileSync(options.publicKeyFile);
      } catch (error) {
        return { code: 2, lines: [`--public-key ${options.publicKeyFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'unreadable'}).`] };
      }
      key = publicKeyOf(pem);
      if (key === undefined) return { code: 2, lines: [`--public-key ${options.publicKeyFile} holds no public key in PEM.`] };
      keySource = options.publicKeyFile;
    }
    const sigEntry = entries.get(SIGNATURE);
    if (manifest.signature.status !== 'signed' || sigEntry === undefined) {
      if (key !== undefined) return bad(`${SIGNATURE}: the pack is not signed, so it cannot be checked against ${keySource}.`);
      if (manifest.signature.status === 'signed') return bad(`${SIGNATURE}: the manifest says the pack is signed, but it holds no ${SIGNATURE}.`);
      lines.push('UNSIGNED: this pack was exported without a signing key. Its checks prove that its files are whole and agree with each other, not who made it.');
    } else {
      if (key === undefined) {
        const pemEntry = entries.get(PUBLIC_KEY);
        if (pemEntry === undefined) return bad(`${SIGNATURE}: the pack is signed but holds no ${PUBLIC_KEY}; give the key with --public-key.`);
        key = publicKeyOf((await readEntry(zip, pemEntry, true)).bytes!);
        if (key === undefined) return bad(`${PUBLIC_KEY}: it holds no public key in PEM.`);
        keySource = `the pack's ${PUBLIC_KEY}`;
      }
      const fingerprint = fingerprintOf(key);
      const signature = (await readEntry(zip, sigEntry, true)).bytes!;
      let holds = false;
      try {
        holds = key.asymmetricKeyType === 'ed25519' && verify(null, manifestBytes, key, signature);
      } catch {
        holds = false;
      }
      if (!holds) return bad(`${SIGNATURE}: it is not a signature of ${MANIFEST} by the key with fingerprint ${fingerprint} (${keySource}): the manifest was changed or signed by another key.`);
      if (manifest.signature.publicKeyFingerprint !== fingerprint) return bad(`${SIGNATURE}: the manifest names the key ${manifest.signature.publicKeyFingerprint}, but it verifies with ${fingerprint}.`);
      lines.push(`Signed: ${MANIFEST} carries an Ed25519 signature by the key with SHA-256 fingerprint ${fingerprint} (checked against ${keySource}${options.publicKeyFile === undefined ? '; compare that fingerprint with the one you were given, or pass --public-key' : ''}).`);
    }

    // Every file the manifest lists, and nothing beside them.
    const listed = new Set<string>();
    const bytesOf = new Map<string, string>();
    for (const f of manifest.files) {
      listed.add(f.path);
      const entry = entries.get(f.path);
      if (entry === undefined) return bad(`${f.path}: listed in ${MANIFEST} but missing from the pack.`);
      let read;
      try {
        read = await readEntry(zip, entry);
      } catch (error) {
        return bad(`${f.path}: its bytes cannot be read back (${(error as Error).message}): the file was altered.`);
      }
      if (read.sha256 !== f.sha256 || read.size !== f.size) return bad(`${f.path}: its SHA-256 is ${read.sha256} (${read.size} bytes), the manifest says ${f.sha256} (${f.size} bytes): the file was altered.`);
      bytesOf.set(f.path, read.sha256);
    }
    for (const name of entries.keys()) {
      if (!listed.has(name) && name !== MANIFEST && name !== SIGNATURE) return bad(`${name}: the pack holds it, but ${MANIFEST} does not list it.`);
    }
    lines.push(`Files: all ${manifest.files.length} listed in ${MANIFEST} are present with the SHA-256 and size it gives, and nothing else is in the pack.`);

    const chainProblem = checkChainRows(manifest.chain);
    if (chainProblem !== undefined) return bad(`${MANIFEST}: ${chainProblem}.`);
    for (const s of manifest.signoffs) {
      const row = manifest.chain.find((c) => c.id === s.id);
      if (row === undefined || row.seal_hash !== s.seal_hash || row.report_sha256 !== s.report_sha256 || row.prev_hash !== s.prev_hash || row.approval_hash !== s.approval_hash) {
        return bad(`${MANIFEST}: sign-off #${s.id} (${s.business_date}) does not match its chain row.`);
      }
      const reportHash = bytesOf.get(s.report_path);
      if (reportHash === undefined) return bad(`${s.report_path}: the sealed report of sign-off #${s.id} is not in the pack.`);
      if (reportHash !== s.report_sha256) return bad(`${s.report_path}: it hashes to ${reportHash}, but sign-off #${s.id} sealed ${s.report_sha256}.`);
    }
    lines.push(`Chain: ${manifest.chain.length} sign-off chain row(s) link to each other and hash to their content; ${manifest.signoffs.length} sealed report(s) match their seals.`);
    lines.push(`Dates: ${manifest.dates.join(', ')}; accounts: ${manifest.accounts.join(', ')}.`);
    return { code: 0, lines };
  } finally {
    zip.close();
  }
}
