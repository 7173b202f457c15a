import type { AppContext } from '../app-context.js';
import { deleteSessionsOfUser, deleteSignInFailures, findUserByName, insertAudit, insertUser, listUsers, updateUser, type ConsoleUser } from '../db/console.repository.js';
import { UsageError } from '../errors.js';
import { hashPassword } from './passwords.js';
import { CONSOLE_ROLES, USER_NAME_PATTERN, USER_NAME_RULE, type ConsoleRole } from './roles.js';

export const MIN_PASSWORD_LENGTH = 12;

export function parseRole(value: string): ConsoleRole {
  if (!(CONSOLE_ROLES as readonly string[]).includes(value)) throw new UsageError(`--role ${JSON.stringify(value)} is not a role: use one of ${CONSOLE_ROLES.join(', ')}.`);
  return value as ConsoleRole;
}

export function checkUserName(name: string): string {
  if (!USER_NAME_PATTERN.test(name)) throw new UsageError(`User name ${JSON.stringify(name)} is not allowed: use ${USER_NAME_RULE}.`);
  return name;
}

/** The password rule, said once: at least MIN_PASSWORD_LENGTH characters. */
export function checkPassword(password: string, howToAvoid = ' (or leave --password-stdin out to get a generated one)'): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new UsageError(`The password is too short: use at least ${MIN_PASSWORD_LENGTH} characters${howToAvoid}.`);
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

/**
 * Changes a local user's role; their sessions end so the new role applies from the next sign-in.
 * A single sign-on user's role is the identity provider's to decide (read from its groups claim on
 * every sign-in): changing it here would last only until their next sign-in, so it is refused.
 */
export async function setUserRole(ctx: AppContext, name: string, role: ConsoleRole, by: string): Promise<{ before: ConsoleRole; user: ConsoleUser }> {
  const user = await requireUser(ctx, name);
  if (user.source === 'oidc') {
    throw new UsageError(
      `"${name}" signs in through single sign-on: the identity provider's groups decide their role (RECON_OIDC_ROLE_CLAIM, RECON_OIDC_ROLE_MAP), read again at every sign-in. Change their group at the provider; "wallet-recon users disable ${name}" shuts them out at once.`,
    );
  }
  const at = ctx.clock.now();
  await ctx.database.db.transaction().execute(async (trx) => {
    await updateUser(trx, user.id, { role }, at);
    await deleteSessionsOfUser(trx, user.id);
    await insertAudit(trx, { at, userName: by, address: 'cli', action: 'user.set-role', target: name, outcome: 'ok', detail: { from: user.role, to: role } });
  });
  return { before: user.role, user: { ...user, role } };
}

export { listUsers };


/** Forgets a user name's failed sign-ins, so every address may try again at once. */
export async function unlockUser(ctx: AppContext, name: string, by: string): Promise<{ user: ConsoleUser; forgottenFailures: number }> {
  const user = await requireUser(ctx, name);
  const at = ctx.clock.now();
  return ctx.database.db.transaction().execute(async (trx) => {
    const forgottenFailures = await deleteSignInFailures(trx, name);
    await insertAudit(trx, { at, userName: by, address: 'cli', action: 'user.unlock', target: name, outcome: 'ok', detail: { forgottenFailures } });
    return { user, forgottenFailures };
  });
}

/** Enables a disabled user again (sign-in as before; their failed sign-ins are forgotten too). */
export async function enableUser(ctx: AppContext, name: string, by: string): Promise<{ user: ConsoleUser; wasDisabled: boolean }> {
  const user = await requireUser(ctx, name);
  const at = ctx.clock.now();
  await ctx.database.db.transaction().execute(async (trx) => {
    if (user.disabledAt !== null) await updateUser(trx, user.id, { disabledAt: null }, at);
    await deleteSignInFailures(trx, name);
    await insertAudit(trx, { at, userName: by, address: 'cli', action: 'user.enable', target: name, outcome: 'ok', detail: { wasDisabled: user.disabledAt !== null } });
  });
  return { user: { ...user, disabledAt: null }, wasDisabled: user.disabledAt !== null };
}

/**
 * Gives a local user a new password (an administrator's `users reset-password`): their sessions
 * end and their failed sign-ins are forgotten. The password itself is never logged or audited.
 */
export async function resetPassword(ctx: AppContext, name: string, password: string, by: string): Promise<{ user: ConsoleUser; endedSessions: number }> {
  const user = await requireUser(ctx, name);
  if (user.source !== 'local') throw new UsageError(`"${name}" signs in through single sign-on and has no console password: the identity provider manages it.`);
  checkPassword(password);
  const hash = await hashPassword(password);
  const at = ctx.clock.now();
  return ctx.database.db.transaction().execute(async (trx) => {
    await updateUser(trx, user.id, { passwordHash: hash }, at);
    const endedSessions = await deleteSessionsOfUser(trx, user.id);
    await deleteSignInFailures(trx, name);
    await insertAudit(trx, { at, userName: by, address: 'cli', action: 'user.reset-password', target: name, outcome: 'ok', detail: { endedSessions } });
    return { user, endedSessions };
  });
}

/** Why a change of one's own password was refused: shown on the page as it is. */
export class PasswordChangeRefusedError extends UsageError {}

/**
 * A signed-in local user changes their own password (the console's "Change password" page): the
 * current password is checked first, every other session of theirs ends. Returns nothing; throws
 * PasswordChangeRefusedError with a message for the page.
 */
export async function changeOwnPassword(
  ctx: AppContext,
  user: ConsoleUser,
  change: { current: string; next: string; repeated: string; keepSessionSha256: string; address: string },
  checkCurrent: (hash: string) => Promise<boolean>,
): Promise<void> {
  const db = ctx.database.db;
  const at = ctx.clock.now();
  const refuse = async (reason: string): Promise<never> => {
    await insertAudit(db, { at, userName: user.name, address: change.address, action: 'user.change-password', target: user.name, outcome: 'refused', detail: { reason } });
    throw new PasswordChangeRefusedError(reason);
  };
  const stored = await findUserByName(db, user.name);
  if (stored === undefined || stored.source !== 'local' || stored.passwordHash === null) return refuse('Only a local user has a console password; single sign-on passwords are changed at the identity provider.');
  if (!(await checkCurrent(stored.passwordHash))) return refuse('The current password is wrong: nothing was changed.');
  if (change.next !== change.repeated) return refuse('The new password and its repetition differ: nothing was changed.');
  if (change.next.length < MIN_PASSWORD_LENGTH) return refuse(`The new password is too short: use at least ${MIN_PASSWORD_LENGTH} characters.`);
  if (change.next === change.current) return refuse('The new password is the current one: choose another.');
  const hash = await hashPassword(change.next);
  await db.transaction().execute(async (trx) => {
    await updateUser(trx, stored.id, { passwordHash: hash }, at);
    const endedSessions = await deleteSessionsOfUser(trx, stored.id, change.keepSessionSha256);
    await insertAudit(trx, { at, userName: user.name, address: change.address, action: 'user.change-password', target: user.name, outcome: 'ok', detail: { endedSessions } });
  });
}
