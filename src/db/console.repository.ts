import { sql, type Kysely, type Transaction } from 'kysely';
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
}

const userColumns = ['id', 'name', 'role', 'source', 'disabled_at', 'created_at'] as const;

function userFromRow(r: { id: number; name: string; role: ConsoleRole; source: 'local' | 'oidc'; disabled_at: Date | null; created_at: Date }): ConsoleUser {
  return { id: r.id, name: r.name, role: r.role, source: r.source, disabledAt: r.disabled_at, createdAt: r.created_at };
}

export async function insertUser(db: Db, user: { name: string; role: ConsoleRole; passwordHash: string | null; source?: 'local' | 'oidc'; at: Date }): Promise<ConsoleUser | undefined> {
  const row = await db
    .insertInto('console_users')
    .values({ name: user.name, role: user.role, password_hash: user.passwordHash, source: user.source ?? 'local', created_at: user.at, updated_at: user.at })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning(userColumns)
    .executeTakeFirst();
  return row === undefined ? undefined : userFromRow(row);
}

export async function findUserByName(db: Db, name: string): Promise<(ConsoleUser & { passwordHash: string | null }) | undefined> {
  const row = await db.selectFrom('console_users').select([...userColumns, 'password_hash']).where('name', '=', name).executeTakeFirst();
  return row === undefined ? undefined : { ...userFromRow(row), passwordHash: row.password_hash };
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
    .select(['s.id_sha256', 's.created_at as s_created_at', 's.last_seen_at', 's.expires_at', 'u.id', 'u.name', 'u.role', 'u.source', 'u.disabled_at', 'u.created_at'])
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

/** Ends every session of a user (disabled, or their role changed). Returns how many ended. */
export async function deleteSessionsOfUser(db: Db, userId: number): Promise<number> {
  const result = await db.deleteFrom('console_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function insertSignInAttempt(db: Db, a: { userName: string; at: Date; address: string | null; succeeded: boolean }): Promise<void> {
  await db.insertInto('console_sign_in_attempts').values({ user_name: a.userName, at: a.at, address: a.address, succeeded: a.succeeded }).execute();
}

/** Failed sign-ins of a user name since `since` and after its latest successful one, oldest first. */
export async function listRecentFailures(db: Db, userName: string, since: Date): Promise<Date[]> {
  const rows = await db
    .selectFrom('console_sign_in_attempts')
    .select('at')
    .where('user_name', '=', userName)
    .where('succeeded', '=', false)
    .where('at', '>', since)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('console_sign_in_attempts as ok')
            .select(sql`1`.as('one'))
            .where('ok.user_name', '=', userName)
            .where('ok.succeeded', '=', true)
            .whereRef('ok.at', '>=', 'console_sign_in_attempts.at'),
        ),
      ),
    )
    .orderBy('at')
    .execute();
  return rows.map((r) => r.at);
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
