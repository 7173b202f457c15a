import type { Kysely, Transaction } from 'kysely';
import type { ConsoleRole, Database } from './database.types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A console user as services see it; the password hash never leaves the repository but for verification. */
export interface ConsoleUser {
  id: number;
  name: string;
  role: ConsoleRole;
  source: 'local' | 'oidc';
  disabledAt: Date | null;
  createdAt: Date;
  /** A single sign-on user's login (issuer and `sub`), bound at first sign-in; null for a local user. */
  oidcIdentity: { issuer: string; subject: string } | null;
}

const userColumns = ['id', 'name', 'role', 'source', 'disabled_at', 'created_at', 'oidc_issuer', 'oidc_subject'] as const;

function userFromRow(r: { id: number; name: string; role: ConsoleRole; source: 'local' | 'oidc'; disabled_at: Date | null; created_at: Date; oidc_issuer: string | null; oidc_subject: string | null }): ConsoleUser {
  return {
    id: r.id,
    name: r.name,
    role: r.role,
    source: r.source,
    disabledAt: r.disabled_at,
    createdAt: r.created_at,
    oidcIdentity: r.oidc_issuer === null || r.oidc_subject === null ? null : { issuer: r.oidc_issuer, subject: r.oidc_subject },
  };
}

export async function insertUser(
  db: Db,
  user: { name: string; role: ConsoleRole; passwordHash: string | null; source?: 'local' | 'oidc'; oidcIdentity?: { issuer: string; subject: string }; at: Date },
): Promise<ConsoleUser | undefined> {
  const row = await db
    .insertInto('console_users')
    .values({
      name: user.name,
      role: user.role,
      password_hash: user.passwordHash,
      source: user.source ?? 'local',
      oidc_issuer: user.oidcIdentity?.issuer ?? null,
      oidc_subject: user.oidcIdentity?.subject ?? null,
      created_at: user.at,
      updated_at: user.at,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning(userColumns)
    .executeTakeFirst();
  return row === undefined ? undefined : userFromRow(row);
}

export async function findUserByName(db: Db, name: string): Promise<(ConsoleUser & { passwordHash: string | null }) | undefined> {
  const row = await db.selectFrom('console_users').select([...userColumns, 'password_hash']).where('name', '=', name).executeTakeFirst();
  return row === undefined ? undefined : { ...userFromRow(row), passwordHash: row.password_hash };
}

/** The single sign-on user bound to this login, whatever name it now claims. */
export async function findUserByOidcIdentity(db: Db, issuer: string, subject: string): Promise<ConsoleUser | undefined> {
  const row = await db.selectFrom('console_users').select(userColumns).where('oidc_issuer', '=', issuer).where('oidc_subject', '=', subject).executeTakeFirst();
  return row === undefined ? undefined : userFromRow(row);
}

/** Binds an unbound single sign-on user (one created before logins were bound) to a login; false when it is bound already. */
export async function bindOidcIdentity(db: Db, id: number, identity: { issuer: string; subject: string }, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('console_users')
    .set({ oidc_issuer: identity.issuer, oidc_subject: identity.subject, updated_at: at })
    .where('id', '=', id)
    .where('source', '=', 'oidc')
    .where('oidc_issuer', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function listUsers(db: Db): Promise<ConsoleUser[]> {
  return (await db.selectFrom('console_users').select(userColumns).orderBy('name').execute()).map(userFromRow);
}

export async function updateUser(db: Db, id: number, patch: { role?: ConsoleRole; disabledAt?: Date | null; passwordHash?: string }, at: Date): Promise<void> {
  await db
    .updateTable('console_users')
    .set({
      updated_at: at,
      ...(patch.role === undefined ? {} : { role: patch.role }),
      ...(patch.disabledAt === undefined ? {} : { disabled_at: patch.disabledAt }),
      ...(patch.passwordHash === undefined ? {} : { password_hash: patch.passwordHash }),
    })
    .where('id', '=', id)
    .execute();
}

export async function insertSession(db: Db, s: { idSha256: string; userId: number; at: Date; expiresAt: Date; address: string | null }): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({ id_sha256: s.idSha256, user_id: s.userId, created_at: s.at, last_seen_at: s.at, expires_at: s.expiresAt, address: s.address })
    .execute();
}

export interface SessionRow {
  idSha256: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  user: ConsoleUser;
}

export async function findSession(db: Db, idSha256: string): Promise<SessionRow | undefined> {
  const row = await db
    .selectFrom('console_sessions as s')
    .innerJoin('console_users as u', 'u.id', 's.user_id')
    .select(['s.id_sha256', 's.created_at as s_created_at', 's.last_seen_at', 's.expires_at', 'u.id', 'u.name', 'u.role', 'u.source', 'u.disabled_at', 'u.created_at', 'u.oidc_issuer', 'u.oidc_subject'])
    .where('s.id_sha256', '=', idSha256)
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return { idSha256: row.id_sha256, createdAt: row.s_created_at, lastSeenAt: row.last_seen_at, expiresAt: row.expires_at, user: userFromRow(row) };
}

export async function touchSession(db: Db, idSha256: string, at: Date): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: at }).where('id_sha256', '=', idSha256).execute();
}

export async function deleteSession(db: Db, idSha256: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id_sha256', '=', idSha256).execute();
}

/** Ends every session of a user (disabled, their role or password changed) but `keep`, if given. Returns how many ended. */
export async function deleteSessionsOfUser(db: Db, userId: number, keep?: string): Promise<number> {
  let query = db.deleteFrom('console_sessions').where('user_id', '=', userId);
  if (keep !== undefined) query = query.where('id_sha256', '<>', keep);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Records a sign-in attempt before its password is checked (as failed until marked succeeded); returns its id. */
export async function insertSignInAttempt(db: Db, a: { userName: string; at: Date; address: string | null; succeeded: boolean }): Promise<string> {
  const row = await db.insertInto('console_sign_in_attempts').values({ user_name: a.userName, at: a.at, address: a.address, succeeded: a.succeeded }).returning('id').executeTakeFirstOrThrow();
  return String(row.id);
}

export async function markSignInAttemptSucceeded(db: Db, id: string): Promise<void> {
  await db.updateTable('console_sign_in_attempts').set({ succeeded: true }).where('id', '=', id).execute();
}

/** The failed sign-ins since `since` that count against this name or this address, oldest first. */
export interface RecentFailures {
  /** Failures of this name from this address, after the pair's latest success. */
  pair: Date[];
  /** Failures of this name from anywhere, after the name's latest success. */
  name: Date[];
  /** Failures from this address, whatever the name. */
  address: Date[];
}

export async function listRecentFailures(db: Db, q: { userName: string; address: string; since: Date }): Promise<RecentFailures> {
  const rows = await db
    .selectFrom('console_sign_in_attempts')
    .select(['user_name', 'address', 'at', 'succeeded'])
    .where('at', '>', q.since)
    .where((eb) => eb.or([eb('user_name', '=', q.userName), eb('address', '=', q.address)]))
    .orderBy('at')
    .orderBy('id')
    .execute();
  const out: RecentFailures = { pair: [], name: [], address: [] };
  for (const r of rows) {
    const ofName = r.user_name === q.userName;
    const ofAddress = r.address === q.address;
    if (r.succeeded) {
      if (ofName) out.name = [];
      if (ofName && ofAddress) out.pair = [];
      continue;
    }
    if (ofName) out.name.push(r.at);
    if (ofAddress) out.address.push(r.at);
    if (ofName && ofAddress) out.pair.push(r.at);
  }
  return out;
}

/** Forgets a name's failed sign-ins (`users unlock`); returns how many there were. */
export async function deleteSignInFailures(db: Db, userName: string): Promise<number> {
  const result = await db.deleteFrom('console_sign_in_attempts').where('user_name', '=', userName).where('succeeded', '=', false).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Sign-in attempts older than `before` count against nobody any more: removed. */
export async function deleteSignInAttemptsBefore(db: Db, before: Date): Promise<number> {
  const result = await db.deleteFrom('console_sign_in_attempts').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Sessions past their absolute end or idle since before `idleBefore`: removed. */
export async function deleteExpiredSessions(db: Db, now: Date, idleBefore: Date): Promise<number> {
  const result = await db
    .deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleBefore)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface AuditEntry {
  at: Date;
  userName: string | null;
  address: string | null;
  action: string;
  target?: string | null;
  outcome: 'ok' | 'refused' | 'failed';
  detail?: unknown;
}

export async function insertAudit(db: Db, e: AuditEntry): Promise<void> {
  await db
    .insertInto('console_audit')
    .values({ at: e.at, user_name: e.userName, address: e.address, action: e.action, target: e.target ?? null, outcome: e.outcome, detail: e.detail === undefined ? null : JSON.stringify(e.detail) })
    .execute();
}
