import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../app-context.js';
import type { Database } from '../db/database.types.js';
import { insertSignoffSignature } from '../db/signoff.repository.js';
import { addStepSignature, findStepHash, type StepKind } from '../db/signoff-steps.repository.js';
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

const STEP_KIND: Record<SignedStep, StepKind> = { prepare: 'prepared', approve: 'approved', reopen: 'reopened' };

/**
 * Signs one step with the configured key, in the step's transaction: the chain hash of the
 * sign-off row (signoff_signatures, as before) and the hash of its row in signoff_steps. Nothing
 * without a key — unless a key is pinned (RECON_SIGNING_PUBLIC_KEY_FILE) and its time has come:
 * then a step that could not be signed, or only by another key, is refused before it is written
 * rather than left as a broken seal.
 */
export async function signStep(ctx: AppContext, trx: Kysely<Database> | Transaction<Database>, signoffId: number, step: SignedStep, hash: string | null): Promise<void> {
  const key = signingKeyForStep(ctx);
  if (key === undefined) return;
  if (hash !== null) {
    const signature = sign(null, Buffer.from(hash, 'utf8'), key.privateKey).toString('base64');
    await insertSignoffSignature(trx, { signoffId, step, signedHash: hash, publicKey: key.publicKey, signature });
  }
  await signStepRow(key, trx, signoffId, STEP_KIND[step]);
}

/** Signs a sign-off's invalidation step when a key is configured (an invalidation unlocks nothing: it is not refused without one). */
export async function signInvalidation(ctx: AppContext, trx: Kysely<Database> | Transaction<Database>, signoffId: number): Promise<void> {
  const key = loadSigningKey(ctx.config);
  if (key !== undefined) await signStepRow(key, trx, signoffId, 'invalidated');
}

async function signStepRow(key: SigningKey, trx: Kysely<Database> | Transaction<Database>, signoffId: number, kind: StepKind): Promise<void> {
  const step = await findStepHash(trx, signoffId, kind);
  if (step === undefined) return;
  await addStepSignature(trx, step.id, key.publicKey, sign(null, Buffer.from(step.hash, 'utf8'), key.privateKey).toString('base64'));
}

function signingKeyForStep(ctx: AppContext): SigningKey | undefined {
  const key = loadSigningKey(ctx.config);
  const pinned = ctx.config.pinnedSigningKey;
  if (pinned === undefined || ctx.clock.now().getTime() < pinned.since.getTime()) return key;
  if (key === undefined) {
    throw new ConfigError(
      `RECON_SIGNING_PUBLIC_KEY_FILE pins the signing key since ${pinned.since.toISOString()}, and RECON_SIGNING_KEY_FILE is not set: a sign-off step made now could not be signed. Nothing was written. Set RECON_SIGNING_KEY_FILE to the private key of ${pinned.publicKeyFile}.`,
    );
  }
  if (key.publicKey !== loadPublicKey(pinned.publicKeyFile)) {
    throw new ConfigError(`RECON_SIGNING_KEY_FILE ${ctx.config.signingKeyFile} is not the private key of the pinned public key ${pinned.publicKeyFile}: its signatures would not verify. Nothing was written.`);
  }
  return key;
}

/** The key `signoff verify` checks signatures against: pinned (a public key file and a time), the private key file's own, or none. */
export type VerificationKey = { publicKey: string; pinned: true; since: Date; file: string } | { publicKey: string; pinned: false; file: string };

export function loadVerificationKey(config: { signingKeyFile: string | undefined; pinnedSigningKey: { publicKeyFile: string; since: Date } | undefined }): VerificationKey | undefined {
  const pinned = config.pinnedSigningKey;
  if (pinned !== undefined) return { publicKey: loadPublicKey(pinned.publicKeyFile), pinned: true, since: pinned.since, file: pinned.publicKeyFile };
  const key = loadSigningKey(config);
  return key === undefined ? undefined : { publicKey: key.publicKey, pinned: false, file: config.signingKeyFile! };
}

/** RECON_SIGNING_PUBLIC_KEY_FILE's Ed25519 public key as SPKI DER in base64 (the form stored beside each signature). */
function loadPublicKey(file: string): string {
  let key: KeyObject;
  try {
    key = createPublicKey(readFileSync(file));
  } catch (error) {
    throw new ConfigError(`RECON_SIGNING_PUBLIC_KEY_FILE ${file} is not a readable public key in PEM: ${(error as NodeJS.ErrnoException).code ?? 'unreadable key'}. Write it from the private key with: openssl pkey -in signing-key.pem -pubout -out signing-key.pub.pem`, [], {
      cause: error,
    });
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new ConfigError(`RECON_SIGNING_PUBLIC_KEY_FILE ${file} holds a ${key.asymmetricKeyType} key, not Ed25519.`);
  return key.export({ type: 'spki', format: 'der' }).toString('base64');
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
