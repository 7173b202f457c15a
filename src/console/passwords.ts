import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// scrypt at one of the equivalent minimum costs OWASP lists (N=2^14, r=8, p=5: 16 MiB; the
// 128 MiB variant took four times as long here for the same work). The parameters are stored
// with each hash, so they can be raised later without invalidating existing passwords.
const COST = { N: 2 ** 14, r: 8, p: 5 };
const KEY_LENGTH = 32;

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCallback(password.normalize('NFC'), salt, KEY_LENGTH, { ...options, maxmem: 160 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

/** A salted scrypt hash of a password: `scrypt$N$r$p$salt$hash` (base64). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Whether `password` matches a stored hash, compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scrypt(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A random password for `users add` without --password-stdin: 20 characters of base64url (120 bits). */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}

/** A hash to compare with when the user does not exist, so a wrong name takes as long as a wrong password. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('base64'));
  return decoy;
}
