import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../app-context.js';
import { deleteSession, findSession, insertSession, touchSession, type ConsoleUser } from '../db/console.repository.js';

/** A session ends after this long without a request… */
export const SESSION_IDLE_MS = 30 * 60_000;
/** …and this long after sign-in, whatever happens. */
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60_000;
/** last_seen_at is written at most this often: a page's few requests need not each write. */
const TOUCH_EVERY_MS = 60_000;

const sha256 = (value: string) => createHash('sha256').update(value, 'utf8').digest('hex');

/** The stored key of a session id (its SHA-256): a copy of the database opens no session. */
export const sessionKeyOf = sha256;

export interface ConsoleSession {
  /** The id from the cookie; only its SHA-256 is stored. */
  id: string;
  user: ConsoleUser;
  /** The synchronizer token of this session's forms. */
  csrfToken: string;
}

/** The CSRF token of a session: derived from its id, so it needs no storage and dies with it. */
export function csrfTokenOf(sessionId: string): string {
  return createHash('sha256').update(`csrf:${sessionId}`, 'utf8').digest('base64url');
}

/** Constant-time comparison of two tokens. */
export function tokensEqual(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Opens a session for a signed-in user; returns the cookie's value. */
export async function startSession(ctx: AppContext, user: ConsoleUser, address: string | null): Promise<ConsoleSession> {
  const id = randomBytes(32).toString('base64url');
  const at = ctx.clock.now();
  await insertSession(ctx.database.db, { idSha256: sha256(id), userId: user.id, at, expiresAt: new Date(at.getTime() + SESSION_ABSOLUTE_MS), address });
  return { id, user, csrfToken: csrfTokenOf(id) };
}

/**
 * The session a cookie names, if it is still valid: not idle for longer than SESSION_IDLE_MS,
 * not past its absolute end, its user not disabled. An expired one is deleted.
 */
export async function resumeSession(ctx: AppContext, id: string | undefined): Promise<ConsoleSession | undefined> {
  if (id === undefined || !/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
  const db = ctx.database.db;
  const key = sha256(id);
  const row = await findSession(db, key);
  if (row === undefined) return undefined;
  const now = ctx.clock.now().getTime();
  if (row.user.disabledAt !== null || now >= row.expiresAt.getTime() || now - row.lastSeenAt.getTime() >= SESSION_IDLE_MS) {
    await deleteSession(db, key);
    return undefined;
  }
  if (now - row.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await touchSession(db, key, new Date(now));
  return { id, user: row.user, csrfToken: csrfTokenOf(id) };
}

/** Ends the session a cookie names, if any (sign-out, or a new sign-in from the same browser). */
export async function endSession(ctx: AppContext, id: string): Promise<void> {
  await deleteSession(ctx.database.db, sha256(id));
}
