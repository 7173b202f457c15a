import * as client from 'openid-client';
import type { AppContext } from '../app-context.js';
import type { ConsoleSettings } from '../config/index.js';
import { bindOidcIdentity, findUserByName, findUserByOidcIdentity, insertUser, updateUser, type ConsoleUser } from '../db/console.repository.js';
import { ConfigError, describeError } from '../errors.js';
import type { OidcSignIn } from './oidc.js';
import { USER_NAME_PATTERN, type ConsoleRole } from './roles.js';

type OidcSettings = NonNullable<ConsoleSettings['oidc']>;

const OIDC_COOKIE = 'recon_oidc';
// The most a person can do wins when the identity provider gives several roles.
const RANK: readonly ConsoleRole[] = ['viewer', 'preparer', 'approver', 'admin'];

/**
 * The console role a set of claim values maps to (RECON_OIDC_ROLE_MAP, else the role names
 * themselves). Group names come from outside: only the map's own entries count, so a group named
 * `constructor` or `__proto__` maps to nothing rather than to an inherited property.
 */
export function roleFromClaim(value: unknown, roleMap: Readonly<Record<string, ConsoleRole>>): ConsoleRole | undefined {
  const values = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[\s,]+/) : [];
  const mapped = Object.keys(roleMap).length > 0;
  const roles = values
    .filter((v): v is string => typeof v === 'string')
    .map((v) => (mapped ? (Object.hasOwn(roleMap, v) ? roleMap[v] : undefined) : (RANK as readonly string[]).includes(v) ? (v as ConsoleRole) : undefined))
    .filter((r): r is ConsoleRole => r !== undefined && (RANK as readonly string[]).includes(r));
  return roles.sort((a, b) => RANK.indexOf(b) - RANK.indexOf(a))[0];
}

/**
 * Single sign-on with the company's OpenID provider: the authorization code flow with PKCE,
 * state and nonce (kept in a short-lived HttpOnly cookie), the role read from the configured
 * claim on every sign-in. A person signing in this way becomes a console user of source "oidc",
 * bound to the issuer and `sub` of that first login: later the login is found by them, whatever
 * name it claims, and another login claiming a bound name (or e-mail) is refused, never mapped.
 * `email` names a user only when the provider says it is verified. A local user of the same name
 * is never taken over. The provider's groups decide the role, on every sign-in.
 */
export async function createOidcSignIn(ctx: AppContext, settings: OidcSettings, publicUrl: URL | undefined): Promise<OidcSignIn> {
  const issuer = new URL(settings.issuer);
  let config: client.Configuration;
  try {
    config = await client.discovery(
      issuer,
      settings.clientId,
      undefined,
      client.ClientSecretPost(settings.clientSecret.reveal()),
      // A plain-http issuer is only for a provider on this machine or in a test.
      issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined,
    );
  } catch (error) {
    throw new ConfigError(`Could not read the OpenID provider's configuration from ${issuer.origin} (RECON_OIDC_ISSUER): ${describeError(error)}`, [], { cause: error });
  }
  // The issuer as the provider names itself (its metadata), which openid-client checked against the ID token's `iss`.
  const issuerId = config.serverMetadata().issuer;
  return {
    register(app, helpers) {
      const callbackUrl = (request: { protocol: string; host: string }) => new URL('/auth/oidc/callback', publicUrl ?? `${request.protocol}://${request.host}`);

      app.get('/auth/oidc', { config: { public: true } }, async (request, reply) => {
        const verifier = client.randomPKCECodeVerifier();
        const state = client.randomState();
        const nonce = client.randomNonce();
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: callbackUrl(request).href,
          scope: 'openid profile email',
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
          nonce,
        });
        // Lax, not Strict: the provider sends the browser back with a top-level GET from its own site.
        reply.setCookie(OIDC_COOKIE, Buffer.from(JSON.stringify({ verifier, state, nonce })).toString('base64url'), {
          path: '/auth/oidc',
          httpOnly: true,
          sameSite: 'lax',
          secure: helpers.secureCookies(request),
          maxAge: 600,
        });
        return reply.redirect(url.href, 303);
      });

      app.get('/auth/oidc/callback', { config: { public: true } }, async (request, reply) => {
        const refuse = async (status: number, message: string, detail?: unknown) => {
          await helpers.audit(request, 'sign-in.oidc', 'refused', undefined, { reason: message, ...(detail === undefined ? {} : { detail }) });
          reply.clearCookie(OIDC_COOKIE, { path: '/auth/oidc' });
          return reply.code(status).type('text/plain; charset=utf-8').send(`${message}\n\nGo back to /login to try again.`);
        };
        let saved: { verifier: string; state: string; nonce: string };
        try {
          saved = JSON.parse(Buffer.from(request.cookies[OIDC_COOKIE] ?? '', 'base64url').toString('utf8')) as typeof saved;
        } catch {
          return refuse(400, 'Single sign-on failed: the sign-in had expired or was started in another browser.');
        }
        const current = new URL(request.url, callbackUrl(request));
        let claims: Record<string, unknown>;
        try {
          const tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: saved.verifier, expectedState: saved.state, expectedNonce: saved.nonce });
          claims = { ...(tokens.claims() ?? {}) };
          if (claims[settings.roleClaim] === undefined) claims = { ...(await client.fetchUserInfo(config, tokens.access_token, String(claims.sub))), ...claims };
        } catch (error) {
          // The provider's message, never a token: openid-client's errors carry no credentials in their message.
          return refuse(401, `Single sign-on failed: ${error instanceof Error ? error.message : String(error)}`);
        }
        const subject = typeof claims.sub === 'string' ? claims.sub : '';
        if (subject === '') return refuse(403, 'Single sign-on refused: the identity provider gave no subject ("sub") for this login.');
        const identity = { issuer: issuerId, subject };
        // An e-mail address names a person only when the provider vouches for it.
        const email = claims.email_verified === true && typeof claims.email === 'string' ? claims.email : undefined;
        const claimedName = typeof claims.preferred_username === 'string' && claims.preferred_username !== '' ? claims.preferred_username : (email ?? subject);
        const role = roleFromClaim(claims[settings.roleClaim], settings.roleMap);
        const db = ctx.database.db;
        const at = ctx.clock.now();
        let user: ConsoleUser | undefined = await findUserByOidcIdentity(db, identity.issuer, identity.subject);
        const name = user?.name ?? claimedName;
        if (role === undefined) return refuse(403, `Single sign-on refused for "${name}": the identity provider gives no console role in the "${settings.roleClaim}" claim (RECON_OIDC_ROLE_CLAIM, RECON_OIDC_ROLE_MAP).`);
        if (user === undefined) {
          if (!USER_NAME_PATTERN.test(name)) return refuse(403, `Single sign-on refused: the identity provider's user name ${JSON.stringify(name)} cannot be a console user name.`);
          const named = await findUserByName(db, name);
          if (named !== undefined && named.source !== 'oidc') return refuse(403, `Single sign-on refused: "${name}" is a local console user; sign in with the password instead.`);
          if (named?.oidcIdentity != null) {
            return refuse(403, `Single sign-on refused: "${name}" belongs to another single sign-on login; this login (subject ${JSON.stringify(subject)}) cannot take it over. An administrator can tell which is right from the audit.`, {
              claimed: name,
              subject,
              boundSubject: named.oidcIdentity.subject,
            });
          }
          if (named !== undefined) {
            // A user from before logins were bound: its next sign-in binds it.
            if (!(await bindOidcIdentity(db, named.id, identity, at))) return refuse(409, `Single sign-on refused: "${name}" was bound to a login by someone else a moment ago; try again.`);
            user = { ...named, oidcIdentity: identity };
          } else {
            const inserted = await insertUser(db, { name, role, passwordHash: null, source: 'oidc', oidcIdentity: identity, at });
            if (inserted === undefined) return refuse(409, `Single sign-on refused: "${name}" was created by someone else a moment ago; try again.`);
            user = inserted;
          }
        }
        if (user.disabledAt !== null) return refuse(403, `Single sign-on refused: the console user "${name}" is disabled.`);
        if (user.role !== role) {
          await updateUser(db, user.id, { role }, at);
          user = { ...user, role };
        }
        reply.clearCookie(OIDC_COOKIE, { path: '/auth/oidc' });
        await helpers.audit(request, 'sign-in.oidc', 'ok', name, { role, subject, ...(claimedName === name ? {} : { claimedName }) });
        return helpers.signIn(request, reply, user);
      });
    },
  };
}
