import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import type { PackChainRow } from '../db/evidence-pack.repository.js';
import type { PackFile } from './pack-archive.js';

export type { PackChainRow, PackFile };

/** A sign-off the pack covers, and where its sealed report is inside the pack. */
export interface PackSignoff {
  id: number;
  business_date: string;
  report_path: string;
  report_sha256: string;
  prev_hash: string | null;
  seal_hash: string;
  approval_hash: string | null;
}

/** manifest.json: what the pack holds and how to check it. */
export interface PackManifest {
  format: 'wallet-recon evidence pack 1';
  tool: { name: string; version: string };
  dates: string[];
  accounts: string[];
  timezone: string;
  signoffs: PackSignoff[];
  /** Every sign-off chain row from the first covered to the last, contiguous. */
  chain: PackChainRow[];
  signature: { status: 'signed' | 'unsigned'; algorithm: 'Ed25519' | null; publicKeyFingerprint: string | null };
  files: PackFile[];
  verify: string;
}

export const MANIFEST = 'manifest.json';
export const SIGNATURE = 'manifest.sig';
export const PUBLIC_KEY = 'public-key.pem';

export const VERIFY_TEXT = [
  'Check this pack offline with: wallet-recon verify-pack PACK.zip [--public-key KEY.pem]',
  'By hand: (1) every file listed under "files" has the SHA-256 and size given;',
  '(2) when signed, manifest.sig is the Ed25519 signature of the exact bytes of manifest.json by the key whose SPKI DER SHA-256 is signature.publicKeyFingerprint',
  '(openssl pkeyutl -verify -pubin -inkey public-key.pem -rawin -in manifest.json -sigfile manifest.sig); check that fingerprint against the one you were given;',
  '(3) each chain row\'s hashes are sha256(previous + "|" + content): seal_hash over prev_hash and seal_content, approval_hash over seal_hash and approval_content,',
  'invalidation_hash over approval_hash (else seal_hash) and invalidation_content, reopen_hash over approval_hash and reopen_content; each row\'s prev_hash is the seal_hash of the row before;',
  '(4) each sealed report hashes to the report_sha256 inside its seal_content.',
].join(' ');

/** The SHA-256 (hex) of a public key's DER (SPKI) encoding: how a pack names the key that signed it. */
export function fingerprintOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

/** The public key of a PEM text, or undefined when it holds none. */
export function publicKeyOf(pem: string | Buffer): KeyObject | undefined {
  try {
    return createPublicKey(pem);
  } catch {
    return undefined;
  }
}

const link = (previous: string | null, content: string) => createHash('sha256').update(`${previous ?? ''}|${content}`, 'utf8').digest('hex');

/**
 * What is wrong with the chain rows, first problem first, as "sign-off #ID: what"; undefined when
 * every row's hashes are those of its content and each row links to the one before.
 */
export function checkChainRows(rows: readonly PackChainRow[]): string | undefined {
  let previous: PackChainRow | undefined;
  for (const row of rows) {
    const name = `chain row of sign-off #${row.id} (${row.business_date})`;
    if (previous !== undefined && row.prev_hash !== previous.seal_hash) return `${name} does not link to the row before it (sign-off #${previous.id})`;
    if (previous !== undefined && BigInt(row.chain_seq) !== BigInt(previous.chain_seq) + 1n) return `${name} does not follow the row before it (a row is missing between them)`;
    if (link(row.prev_hash, row.seal_content) !== row.seal_hash) return `${name}: its seal_hash is not the hash of its content`;
    let content: unknown;
    try {
      content = JSON.parse(row.seal_content);
    } catch {
      return `${name}: its seal_content is not JSON`;
    }
    if (!Array.isArray(content) || content[0] !== row.id || content[2] !== row.business_date || content[5] !== row.report_sha256) return `${name}: its seal_content names another sign-off, date or report hash`;
    if ((row.approval_hash === null) !== (row.approval_content === null) || (row.approval_content !== null && link(row.seal_hash, row.approval_content) !== row.approval_hash)) return `${name}: its approval_hash is not the hash of its approval`;
    if (
      (row.invalidation_hash === null) !== (row.invalidation_content === null) ||
      (row.invalidation_content !== null && link(row.approval_hash ?? row.seal_hash, row.invalidation_content) !== row.invalidation_hash)
    ) {
      return `${name}: its invalidation_hash is not the hash of its invalidation`;
    }
    if ((row.reopen_hash === null) !== (row.reopen_content === null) || (row.reopen_content !== null && link(row.approval_hash, row.reopen_content) !== row.reopen_hash)) return `${name}: its reopen_hash is not the hash of its reopening`;
    previous = row;
  }
  return undefined;
}
