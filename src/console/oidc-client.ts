import * as client from 'openid-client';
import type { AppContext } from '../app-context.js';
import type { ConsoleSettings } from '../config/index.js';
import { findUserByName, insertUser, updateUser } from '../db/console.repository.js';
import { ConfigError, describeError } from '../errors.js';
import type { OidcSignIn } from './oidc.js';
import { USER_NAME_PATTERN, type ConsoleRole } from './roles.js';

type OidcSettings = NonNullable<ConsoleSettings['oidc']>;

const OIDC_COOKIE = 'recon_oidc';
// The most a person can do wins when the identity provider gives several roles.
const RANK: readonly ConsoleRole[] = ['viewer', 'preparer', 'approver', 'admin'];

/** The console role a set of claim values maps to (RECON_OIDC_ROLE_MAP, else the role names themselves). */
export function roleFromClaim(value: unknown, roleMap: Readonly<Record<string, ConsoleRole>>): ConsoleRole | undefined {
  const values = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[\s,]+/) : [];
  const roles = values
    .filter((v): v is string => typeof v === 'string')
    .map((v) => (Object.keys(roleMap).length > 0 ? roleMap[v] : (RANK as readonly string[]).includes(v) ? (v as ConsoleRole) : undefined))
    .filter((r): r is ConsoleRole => r !== undefined);
  return roles.sort((a, b) => RANK.indexOf(b) - RANK.indexOf(a))[0];
}

/**
 * Single sign-on with the company's OpenID provider: the authorization code flow with PKCE,
 * state and nonce (kept in a short-lived HttpOnly cookie), the role read from the configured
 * claim on every sign-in. A person signing in this way becomes a console user of source "oidc";
 * a local user of the same name is never taken over.
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
        const name = String(claims.preferred_username ?? claims.email ?? claims.sub ?? '');
        if (!USER_NAME_PATTERN.test(name)) return refuse(403, `Single sign-on refused: the identity provider's user name ${JSON.stringify(name)} cannot be a console user name.`);
        const role = roleFromClaim(claims[settings.roleClaim], settings.roleMap);
        if (role === undefined) return refuse(403, `Single sign-on refused for "${name}": the identity provider gives no console role in the "${settings.roleClaim}" claim (RECON_OIDC_ROLE_CLAIM, RECON_OIDC_ROLE_MAP).`);
        const db = ctx.database.db;
        const at = ctx.clock.now();
        let user = await findUserByName(db, name);
        if (user !== undefined && user.source !== 'oidc') return refuse(403, `Single sign-on refused: "${name}" is a local console user; sign in with the password instead.`);
        if (user !== undefined && user.disabledAt !== null) return refuse(403, `Single sign-on refused: the console user "${name}" is disabled.`);
        if (user === undefined) {
          const inserted = await insertUser(db, { name, role, passwordHash: null, source: 'oidc', at });
          if (inserted === undefined) return refuse(409, `Single sign-on refused: "${name}" was created by someone else a moment ago; try again.`);
          user = { ...inserted, passwordHash: null };
        } else if (user.role !== role) {
          await updateUser(db, user.id, { role }, at);
          user = { ...user, role };
        }
        reply.clearCookie(OIDC_COOKIE, { path: '/auth/oidc' });
        await helpers.audit(request, 'sign-in.oidc', 'ok', name, { role });
        return helpers.signIn(request, reply, user);
      });
    },
  };
}
