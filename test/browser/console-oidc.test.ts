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
import { addUser } from '../../src/console/console-users.js';
import { createOidcSignIn, roleFromClaim } from '../../src/console/oidc-client.js';
import { Secret } from '../../src/secret.js';
import { MORNING, NIGHT, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const CHROMIUM = '/usr/bin/chromium';
// What the company's identity provider says about each person.
const PEOPLE: Record<string, string[]> = { olga: ['finance-approvers'], pete: ['sales'], anna: ['finance'] };

let t: TestDatabase;
let ctx: AppContext;
let dir: string;
let app: FastifyInstance;
let provider: Server;
let base: string;
let browser: Browser;

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
  // A real OpenID provider (panva's oidc-provider) with its development sign-in pages: any login works.
  const { default: Provider } = await import('oidc-provider');
  const op = new Provider(issuer, {
    clients: [{ client_id: 'recon-console', client_secret: 'a-long-client-secret-for-the-test', redirect_uris: [`${base}/auth/oidc/callback`], token_endpoint_auth_method: 'client_secret_post' }],
    claims: { openid: ['sub'], profile: ['preferred_username', 'groups'] },
    conformIdTokenClaims: false,
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, preferred_username: id, groups: PEOPLE[id] ?? [] }) }),
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

  it('refuses a person without a console role, and never takes over a local user', async () => {
    const pete = await signInWithProvider('pete');
    await expect(pete.content()).resolves.toContain('gives no console role in the "groups" claim');
    const anna = await signInWithProvider('anna');
    await expect(anna.content()).resolves.toContain('"anna" is a local console user');
    const audit = await t.handle.db.selectFrom('console_audit').select(['action', 'outcome']).where('action', '=', 'sign-in.oidc').execute();
    expect(audit.filter((a) => a.outcome === 'refused')).toHaveLength(2);
  });
});
