import { formatLocalTime } from '../business-date/local-time.js';
import type { AppContext } from '../app-context.js';
import { deleteSessionsOfUser, findUserByName, insertAudit, insertSignInAttempt, insertUser, listRecentFailures, listUsers, updateUser, type ConsoleUser } from '../db/console.repository.js';
import { ReconError, UsageError } from '../errors.js';
import { decoyHash, hashPassword, verifyPassword } from './passwords.js';
import { CONSOLE_ROLES, USER_NAME_PATTERN, USER_NAME_RULE, type ConsoleRole } from './roles.js';

/** Five failed sign-ins of one user name within this window slow further tries down. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const SIGN_IN_MAX_FAILURES = 5;
export const MIN_PASSWORD_LENGTH = 12;

/** A sign-in refused because of earlier failures: the person should wait, not retype. */
export class SignInThrottledError extends ReconError {
  override readonly code = 'E_SIGN_IN_THROTTLED';
  constructor(
    message: string,
    readonly retryAt: Date,
  ) {
    super(message);
  }
}

export function parseRole(value: string): ConsoleRole {
  if (!(CONSOLE_ROLES as readonly string[]).includes(value)) throw new UsageError(`--role ${JSON.stringify(value)} is not a role: use one of ${CONSOLE_ROLES.join(', ')}.`);
  return value as ConsoleRole;
}

export function checkUserName(name: string): string {
  if (!USER_NAME_PATTERN.test(name)) throw new UsageError(`User name ${JSON.stringify(name)} is not allowed: use ${USER_NAME_RULE}.`);
  return name;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new UsageError(`The password is too short: use at least ${MIN_PASSWORD_LENGTH} characters (or leave --password-stdin out to get a generated one).`);
}

/** Adds a local user; the name must be new. */
export async function addUser(ctx: AppContext, name: string, role: ConsoleRole, password: string, by: string): Promise<ConsoleUser> {
  checkUserName(name);
  checkPassword(password);
  const at = ctx.clock.now();
  const hash = await hashPassword(password);
  return ctx.database.db.transaction().execute(async (trx) => {
    const user = await insertUser(trx, { name, role, passwordHash: hash, at });
    if (user === undefined) throw new UsageError(`There is already a user named "${name}": see "wallet-recon users list", or change the role with "wallet-recon users set-role ${name} ROLE".`);
    await insertAudit(trx, { at, userName: by, address: 'cli', action: 'user.add', target: name, outcome: 'ok', detail: { role } });
    return user;
  });
}

async function requireUser(ctx: AppContext, name: string) {
  const user = await findUserByName(ctx.database.db, name);
  if (user === undefined) throw new UsageError(`There is no user named "${name}": see "wallet-recon users list".`);
  return user;
}

/** Disables a user and ends every session they have. */
export async function disableUser(ctx: AppContext, name: string, by: string): Promise<{ user: ConsoleUser; endedSessions: number }> {
  const user = await requireUser(ctx, name);
  const at = ctx.clock.now();
  return ctx.database.db.transaction().execute(async (trx) => {
    if (user.disabledAt === null) await updateUser(trx, user.id, { disabledAt: at }, at);
    const endedSessions = await deleteSessionsOfUser(trx, user.id);
    await insertAudit(trx, { at, userName: by, address: 'cli', action: 'user.disable', target: name, outcome: 'ok', detail: { endedSessions } });
    return { user: { ...user, disabledAt: user.disabledAt ?? at }, endedSessions };
  });
}

/** Changes a user's role; their sessions end so the new role applies from the next sign-in. */
export async function setUserRole(ctx: AppContext, name: string, role: ConsoleRole, by: string): Promise<{ before: ConsoleRole; user: ConsoleUser }> {
  const user = await requireUser(ctx, name);
  const at = ctx.clock.now();
  await ctx.database.db.transaction().execute(async (trx) => {
    await updateUser(trx, user.id, { role }, at);
    await deleteSessionsOfUser(trx, user.id);
    await insertAudit(trx, { at, userName: by, address: 'cli', action: 'user.set-role', target: name, outcome: 'ok', detail: { from: user.role, to: role } });
  });
  return { before: user.role, user: { ...user, role } };
}

export { listUsers };

/**
 * Checks a user name and password. Every attempt is recorded; after five failures of one user
 * name within 15 minutes further tries are refused until the oldest of them is 15 minutes old,
 * whatever the password (a guesser learns nothing). Returns the user, or undefined for a wrong
 * name or password (the caller says the same thing for both).
 */
export async function authenticate(ctx: AppContext, name: string, password: string, address: string | null): Promise<ConsoleUser | undefined> {
  const db = ctx.database.db;
  const now = ctx.clock.now();
  const failures = await listRecentFailures(db, name, new Date(now.getTime() - SIGN_IN_WINDOW_MS));
  if (failures.length >= SIGN_IN_MAX_FAILURES) {
    const retryAt = new Date(failures[failures.length - SIGN_IN_MAX_FAILURES]!.getTime() + SIGN_IN_WINDOW_MS);
    await insertAudit(db, { at: now, userName: name, address, action: 'sign-in', outcome: 'refused', detail: { reason: 'too many failed sign-ins' } });
    throw new SignInThrottledError(
      `Too many failed sign-ins for "${name}" (${SIGN_IN_MAX_FAILURES} within 15 minutes): wait until ${formatLocalTime(retryAt, ctx.config.timezone, { timeOnly: true })} and try again, or ask an administrator.`,
      retryAt,
    );
  }
  const user = await findUserByName(db, name);
  const usable = user !== undefined && user.disabledAt === null && user.passwordHash !== null;
  const ok = (await verifyPassword(password, usable ? user.passwordHash! : await decoyHash())) && usable;
  await insertSignInAttempt(db, { userName: name, at: now, address, succeeded: ok });
  await insertAudit(db, { at: now, userName: name, address, action: 'sign-in', outcome: ok ? 'ok' : 'refused', detail: ok ? undefined : { reason: user === undefined ? 'unknown user' : user.disabledAt !== null ? 'disabled' : 'wrong password' } });
  return ok ? user : undefined;
}

/** The password check of the CLI (`signoff --as NAME --password-stdin`): a UsageError when it fails. */
export async function authenticateForCli(ctx: AppContext, name: string, password: string): Promise<ConsoleUser> {
  const user = await authenticate(ctx, name, password, 'cli');
  if (user === undefined) throw new ReconError(`Could not sign in as "${name}": the user name or password is wrong, or the user is disabled.`);
  return user;
}
