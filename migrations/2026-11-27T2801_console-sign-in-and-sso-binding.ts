import { sql, type Kysely } from 'kysely';

// One login is one user: a single sign-on user is bound to the issuer and `sub` of the login that
// created it (unique together), so another login claiming the same name or e-mail is refused
// instead of mapped. Sign-in attempts are counted per address too and purged by age: indexes
// for both.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table console_users add column oidc_issuer text, add column oidc_subject text`.execute(db);
  await sql`alter table console_users add constraint console_users_oidc_binding_whole check ((oidc_issuer is null) = (oidc_subject is null))`.execute(db);
  await sql`alter table console_users add constraint console_users_oidc_binding_source check (oidc_issuer is null or source = 'oidc')`.execute(db);
  await sql`create unique index console_users_oidc_identity on console_users (oidc_issuer, oidc_subject) where oidc_issuer is not null`.execute(db);
  await sql`create index console_sign_in_attempts_address on console_sign_in_attempts (address, at)`.execute(db);
  await sql`create index console_sign_in_attempts_at on console_sign_in_attempts (at)`.execute(db);
  await sql`create index console_sessions_expiry on console_sessions (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists console_sessions_expiry`.execute(db);
  await sql`drop index if exists console_sign_in_attempts_at`.execute(db);
  await sql`drop index if exists console_sign_in_attempts_address`.execute(db);
  await sql`drop index if exists console_users_oidc_identity`.execute(db);
  await sql`alter table console_users drop constraint if exists console_users_oidc_binding_source, drop constraint if exists console_users_oidc_binding_whole`.execute(db);
  await sql`alter table console_users drop column if exists oidc_subject, drop column if exists oidc_issuer`.execute(db);
}
