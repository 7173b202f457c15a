import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import type { Database } from '../db/database.types.js';
import { insertSignoffSignature } from '../db/signoff.repository.js';
import { ConfigError } from '../errors.js';

export type SignedStep = 'prepare' | 'approve' | 'reopen';

export interface SigningKey {
  privateKey: KeyObject;
  /** The public key derived from it, SPKI DER in base64: stored beside each signature and used by verify. */
  publicKey: string;
}

/**
 * Reads RECON_SIGNING_KEY_FILE, an Ed25519 private key in PEM, each time it is needed (a rotated
 * file is picked up without a restart); undefined when the variable is not set. The key itself is
 * never logged nor put in a message; only the path is named.
 */
export function loadSigningKey(config: { signingKeyFile: string | undefined }): SigningKey | undefined {
  if (config.signingKeyFile === undefined) return undefined;
  refuseOpenKeyFile(config.signingKeyFile);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(config.signingKeyFile));
  } catch (error) {
    throw new ConfigError(`RECON_SIGNING_KEY_FILE ${config.signingKeyFile} is not a readable private key in PEM: ${(error as NodeJS.ErrnoException).code ?? 'unreadable key'}. Create one with: openssl genpkey -algorithm ed25519 -out signing-key.pem`, [], {
      cause: error,
    });
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new ConfigError(`RECON_SIGNING_KEY_FILE ${config.signingKeyFile} holds a ${privateKey.asymmetricKeyType} key, not Ed25519: create one with openssl genpkey -algorithm ed25519.`);
  return { privateKey, publicKey: createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64') };
}

/**
 * Refuses a private key file that group or others may read or write, as ssh does: whoever can read
 * it can sign steps nobody took. Only the path and the mode are named.
 */
function refuseOpenKeyFile(file: string): void {
  if (process.platform === 'win32') return;
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    return; // Reading it names the problem (below).
  }
  if ((mode & 0o077) !== 0) {
    throw new ConfigError(`RECON_SIGNING_KEY_FILE ${file} is readable by group or others (mode ${mode.toString(8).padStart(4, '0')}): a signing key must be private to its owner. Run: chmod 600 ${file}`);
  }
}

/** Signs one step's chain hash (the hex text) with the configured key, stored in the step's transaction; nothing without a key. */
export async function signStep(ctx: AppContext, trx: Kysely<Database> | Transaction<Database>, signoffId: number, step: SignedStep, hash: string | null): Promise<void> {
  const key = loadSigningKey(ctx.config);
  if (key === undefined || hash === null) return;
  const signature = sign(null, Buffer.from(hash, 'utf8'), key.privateKey).toString('base64');
  await insertSignoffSignature(trx, { signoffId, step, signedHash: hash, publicKey: key.publicKey, signature });
}

/** Whether `signature` (base64) is the Ed25519 signature of `hash` by the public key (SPKI DER, base64). */
export function signatureHolds(publicKey: string, hash: string, signature: string): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
    return verify(null, Buffer.from(hash, 'utf8'), key, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}
