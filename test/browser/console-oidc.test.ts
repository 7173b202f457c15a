import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser, setUserRole } from '../../src/console/console-users.js';
import { createOidcSignIn, roleFromClaim } from '../../src/console/oidc-client.js';
import { loadConfig } from '../../src/config/index.js';
import { Secret } from '../../src/secret.js';
import { MORNING, NIGHT, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const CHROMIUM = '/usr/bin/chromium';
// What the company's identity provider says about each login (its `sub`): groups, and the names it claims.
const PEOPLE: Record<string, { groups: string[]; preferred_username?: string; email?: string; email_verified?: boolean }> = {
  olga: { groups: ['finance-approvers'], preferred_username: 'olga' },
  pete: { groups: ['sales'], preferred_username: 'pete' },
  anna: { groups: ['finance'], preferred_username: 'anna' },
  // Another login that claims olga's name (a renamed or re-created account at the provider).
  mallory: { groups: ['finance-approvers'], preferred_username: 'olga' },
  // No user name: an unverified e-mail names nobody, a verified one names the user.
  erin: { groups: ['finance'], email: 'olga@example.test', email_verified: false },
  vera: { groups: ['finance'], email: 'vera@example.test', email_verified: true },
  // Groups named after Object.prototype's properties map to no role.
  proto: { groups: ['constructor', '__proto__', 'toString'], preferred_username: 'proto' },
};

let t: TestDatabase;
let ctx: AppContext;
let dir: string;
let app: FastifyInstance;
let provider: Server;
let base: string;
let browser: Browser;
let issuerUrl: string;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-oidc-'));
  ctx = createTestContext(t, {}, { clock: new FixedClock(MORNING) });
  await produceNightWithBreak(ctx, dir);
  // A local user of a name the provider also knows: single sign-on must not take it over.
  await addUser(ctx, 'anna', 'preparer', 'anna-preparer-pw-1', 'test');
  const consolePort = await freePort();
  const providerPort = await freePort();
  base = `http://127.0.0.1:${consolePort}`;
  const issuer = `http://127.0.0.1:${providerPort}`;
  issuerUrl = issuer;
  // A real OpenID provider (panva's oidc-provider) with its development sign-in pages: any login works.
  const { default: Provider } = await import('oidc-provider');
  const op = new Provider(issuer, {
    clients: [{ client_id: 'recon-console', client_secret: 'a-long-client-secret-for-the-test', redirect_uris: [`${base}/auth/oidc/callback`], token_endpoint_auth_method: 'client_secret_post' }],
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'], email: ['email', 'email_verified'] },
    conformIdTokenClaims: false,
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, ...(PEOPLE[id] ?? { groups: [] }) }) }),
  });
  provider = op.listen(providerPort, '127.0.0.1') as unknown as Server;
  await new Promise((resolve) => provider.once('listening', resolve));
  const oidc = await createOidcSignIn(
    ctx,
    { issuer, clientId: 'recon-console', clientSecret: new Secret('a-long-client-secret-for-the-test'), roleClaim: 'groups', roleMap: { 'finance-approvers': 'approver', finance: 'viewer' } },
    undefined,
  );
  app = await buildConsoleApp({ ctx, oidc });
  await app.listen({ host: '127.0.0.1', port: consolePort });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await new Promise((resolve) => (provider ? provider.close(resolve) : resolve(undefined)));
  await t?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Signs in at the provider's development pages as `login`; returns the page where the browser lands. */
async function signInWithProvider(login: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${base}/login`);
  await page.getByRole('link', { name: 'Sign in with your company account' }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  // The provider asks for consent once per client.
  await page.waitForURL((url) => url.href.startsWith(base) || url.pathname.startsWith('/interaction/'));
  if (!page.url().startsWith(base)) await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.href.startsWith(base));
  await page.waitForLoadState();
  return page;
}

describe('roles from the identity provider', () => {
  it('maps only own entries of the role map: group names of inherited properties map to nothing', () => {
    const env = { RECON_OIDC_ISSUER: 'https://idp.example', RECON_OIDC_CLIENT_ID: 'c', RECON_OIDC_CLIENT_SECRET: 's', RECON_OIDC_ROLE_MAP: 'finance=viewer,__proto__=preparer' };
    const roleMap = loadConfig({ env, ignoreDotEnv: true }).console.oidc!.roleMap;
    expect(roleFromClaim(['constructor', 'toString', 'hasOwnProperty'], roleMap)).toBeUndefined();
    expect(roleFromClaim(['__proto__'], roleMap)).toBe('preparer');
    expect(roleFromClaim(['constructor'], {})).toBeUndefined();
  });

  it('maps claim values to the highest console role given', () => {
    expect(roleFromClaim(['finance', 'finance-approvers'], { finance: 'viewer', 'finance-approvers': 'approver' })).toBe('approver');
    expect(roleFromClaim('preparer viewer', {})).toBe('preparer');
    expect(roleFromClaim(['sales'], { finance: 'viewer' })).toBeUndefined();
    expect(roleFromClaim(undefined, {})).toBeUndefined();
  });
});

describe.skipIf(!existsSync(CHROMIUM))(`single sign-on through a real OpenID provider (${backend})`, { timeout: 120_000 }, () => {
  it('signs a person in with the role their groups claim maps to', async () => {
    const page = await signInWithProvider('olga');
    expect(page.url()).toBe(`${base}/day`);
    await expect(page.locator('h1').textContent()).resolves.toBe(`Business date ${NIGHT}`);
    await expect(page.locator('.who').textContent()).resolves.toBe('Signed in as olga (approver)');
    const user = await t.handle.db.selectFrom('console_users').selectAll().where('name', '=', 'olga').executeTakeFirstOrThrow();
    expect(user).toMatchObject({ role: 'approver', source: 'oidc', password_hash: null });
  });

  it('binds a login to its user: another login claiming a bound name is refused and audited, never mapped', async () => {
    const impostor = await signInWithProvider('mallory');
    await expect(impostor.content()).resolves.toContain('Single sign-on refused: "olga" belongs to another single sign-on login');
    const olga = await t.handle.db.selectFrom('console_users').select(['name', 'oidc_issuer', 'oidc_subject']).where('name', '=', 'olga').executeTakeFirstOrThrow();
    expect(olga).toEqual({ name: 'olga', oidc_issuer: issuerUrl, oidc_subject: 'olga' });
    const audit = await t.handle.db.selectFrom('console_audit').select(['outcome', 'detail']).where('action', '=', 'sign-in.oidc').where('outcome', '=', 'refused').execute();
    expect(audit.map((a) => a.detail)).toContainEqual(expect.objectContaining({ detail: { claimed: 'olga', subject: 'mallory', boundSubject: 'olga' } }));
    // The provider's groups decide an SSO user's role: set-role would last only until the next sign-in.
    await expect(setUserRole(ctx, 'olga', 'viewer', 'admin')).rejects.toThrow('"olga" signs in through single sign-on: the identity provider\'s groups decide their role');
    expect(await t.handle.db.selectFrom('console_sessions').innerJoin('console_users', 'console_users.id', 'console_sessions.user_id').select('name').where('name', '=', 'mallory').execute()).toEqual([]);
  });

  it('names a user by e-mail only when the provider says it is verified', async () => {
    const unverified = await signInWithProvider('erin');
    await expect(unverified.locator('.who').textContent()).resolves.toBe('Signed in as erin (viewer)');
    const verified = await signInWithProvider('vera');
    await expect(verified.locator('.who').textContent()).resolves.toBe('Signed in as vera@example.test (viewer)');
    expect(await t.handle.db.selectFrom('console_users').select('name').where('name', '=', 'olga@example.test').execute()).toEqual([]);
  });

  it('refuses groups named after inherited properties with a message, never a 500', async () => {
    const page = await signInWithProvider('proto');
    await expect(page.content()).resolves.toContain('Single sign-on refused for "proto": the identity provider gives no console role in the "groups" claim');
  });

  it('refuses a person without a console role, and never takes over a local user', async () => {
    const pete = await signInWithProvider('pete');
    await expect(pete.content()).resolves.toContain('gives no console role in the "groups" claim');
    const anna = await signInWithProvider('anna');
    await expect(anna.content()).resolves.toContain('"anna" is a local console user');
    const audit = await t.handle.db.selectFrom('console_audit').select(['action', 'outcome']).where('action', '=', 'sign-in.oidc').execute();
    expect(audit.filter((a) => a.outcome === 'refused')).toHaveLength(4);
  });
});
