import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser, disableUser, enableUser, resetPassword, unlockUser } from '../../src/console/console-users.js';
import { ConsoleClient, MORNING, produceNightWithBreak } from '../helpers/console-night.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Sessions, passwords and users a person can recover: the console on an injected clock, the
// `users` commands on the same database.

let t: TestDatabase;
let ctx: AppContext;
let clock: FixedClock;
let dir: string;
let app: FastifyInstance;
let caseId: number;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

beforeAll(async () => {
  t = await createTestDatabase();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-console-accounts-'));
  clock = new FixedClock(MORNING);
  ctx = createTestContext(t, {}, { clock });
  await produceNightWithBreak(ctx, dir);
  await addUser(ctx, 'anna', 'preparer', 'anna-password-1234', 'test');
  await addUser(ctx, 'ben', 'approver', 'ben-password-12345', 'test');
  await addUser(ctx, 'gone', 'viewer', 'gone-password-1234', 'test');
  await disableUser(ctx, 'gone', 'test');
  caseId = (await t.handle.db.selectFrom('reconciliation_cases').select('id').executeTakeFirstOrThrow()).id;
  app = await buildConsoleApp({ ctx });
}, 120_000);

afterAll(async () => {
  await app?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const sessionKeys = async () => (await t.handle.db.selectFrom('console_sessions').select('id_sha256').execute()).map((r) => r.id_sha256);

describe(`console sessions and accounts (${backend})`, { timeout: 120_000 }, () => {
  it("ends the browser's earlier session when it signs in again: the old cookie opens nothing", async () => {
    const browser = new ConsoleClient(app);
    // A second tab holds the sign-in form from before the first sign-in.
    await browser.get('/login');
    const heldForm = { cookie: browser.cookies.get('recon_login_csrf')!, token: browser.csrf };
    expect((await browser.post('/login', { user: 'anna', password: 'anna-password-1234' })).statusCode).toBe(303);
    const first = browser.cookies.get('recon_session')!;
    browser.cookies.set('recon_login_csrf', heldForm.cookie);
    expect((await browser.post('/login', { user: 'ben', password: 'ben-password-12345' }, { csrf: heldForm.token })).statusCode).toBe(303);
    const second = browser.cookies.get('recon_session')!;
    expect(second).not.toBe(first);
    const keys = await sessionKeys();
    expect(keys).not.toContain(sha256(first));
    expect(keys).toContain(sha256(second));
    const replay = await app.inject({ method: 'GET', url: '/cases', headers: { cookie: `recon_session=${first}` } });
    expect(replay.statusCode).toBe(303);
    expect(replay.headers.location).toBe('/login');
  });

  it('purges expired sessions and sign-in attempts past their window while it runs, on its clock', async () => {
    const idle = new ConsoleClient(app);
    await idle.signIn('anna', 'anna-password-1234');
    const stale = sha256(idle.cookies.get('recon_session')!);
    await new ConsoleClient(app).signIn('anna', 'not-her-password');
    expect(await sessionKeys()).toContain(stale);
    const attemptsBefore = await t.handle.db.selectFrom('console_sign_in_attempts').select('id').execute();
    expect(attemptsBefore.length).toBeGreaterThan(0);
    clock.advance(31 * 60_000);
    // Any request, of anyone: the sign-in page.
    expect((await new ConsoleClient(app).get('/login')).statusCode).toBe(200);
    expect(await sessionKeys()).not.toContain(stale);
    expect(await t.handle.db.selectFrom('console_sign_in_attempts').select('id').execute()).toEqual([]);
  });

  it('offers and accepts only existing, active users in "Assign"', async () => {
    const anna = new ConsoleClient(app);
    await anna.signIn('anna', 'anna-password-1234');
    const page = await anna.get(`/cases/${caseId}`);
    expect(page.body).toContain('<select name="to" required><option value="">choose…</option><option>anna</option><option>ben</option></select>');
    expect(page.body).not.toContain('<option>gone</option>');
    for (const to of ['nobody', 'gone']) {
      const refused = await anna.post(`/cases/${caseId}/assign`, { to });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain(`Refused: &quot;${to}&quot; is not an active console user`);
    }
    expect((await t.handle.db.selectFrom('reconciliation_cases').select('assignee').where('id', '=', caseId).executeTakeFirstOrThrow()).assignee).toBeNull();
    expect((await anna.post(`/cases/${caseId}/assign`, { to: 'ben' })).statusCode).toBe(303);
    expect((await t.handle.db.selectFrom('reconciliation_cases').select('assignee').where('id', '=', caseId).executeTakeFirstOrThrow()).assignee).toBe('ben');
  });

  it('lets a local user change their own password: the current one first, other sessions end, audited', async () => {
    const elsewhere = new ConsoleClient(app);
    await elsewhere.signIn('ben', 'ben-password-12345');
    const ben = new ConsoleClient(app);
    await ben.signIn('ben', 'ben-password-12345');
    const page = await ben.get('/account/password');
    expect(page.body).toContain('<label for="current">Current password</label>');
    expect((await ben.get('/day')).body).toContain('<a href="/account/password">Change password</a>');
    const wrong = await ben.post('/account/password', { current: 'not-the-password', next: 'ben-new-password-1', repeated: 'ben-new-password-1' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('The current password is wrong: nothing was changed.');
    const differ = await ben.post('/account/password', { current: 'ben-password-12345', next: 'ben-new-password-1', repeated: 'ben-new-password-2' });
    expect(differ.body).toContain('The new password and its repetition differ');
    const done = await ben.post('/account/password', { current: 'ben-password-12345', next: 'ben-new-password-1', repeated: 'ben-new-password-1' });
    expect(done.statusCode).toBe(303);
    expect((await ben.get('/account/password?done=1')).body).toContain('Your password was changed; your other sessions ended.');
    expect((await elsewhere.get('/cases')).statusCode).toBe(303);
    expect((await new ConsoleClient(app).signIn('ben', 'ben-password-12345')).statusCode).toBe(401);
    expect((await new ConsoleClient(app).signIn('ben', 'ben-new-password-1')).statusCode).toBe(303);
    const audit = await t.handle.db.selectFrom('console_audit').select(['outcome', 'detail']).where('action', '=', 'user.change-password').orderBy('id').execute();
    expect(audit.map((a) => a.outcome)).toEqual(['refused', 'refused', 'ok']);
    expect(JSON.stringify(audit)).not.toContain('ben-new-password-1');
  });

  it('lets an administrator recover users: unlock, reset-password, enable, each audited and honoured at once', async () => {
    clock.advance(16 * 60_000);
    const guesser = new ConsoleClient(app);
    for (let i = 0; i < 5; i++) expect((await guesser.signIn('anna', `wrong-${i}`)).statusCode).toBe(401);
    expect((await guesser.signIn('anna', 'anna-password-1234')).statusCode).toBe(429);
    expect((await unlockUser(ctx, 'anna', 'admin')).forgottenFailures).toBe(5);
    expect((await guesser.signIn('anna', 'anna-password-1234')).statusCode).toBe(303);

    const generated = 'anna-new-password-77';
    expect((await resetPassword(ctx, 'anna', generated, 'admin')).endedSessions).toBeGreaterThanOrEqual(1);
    expect((await guesser.get('/cases')).statusCode).toBe(303);
    expect((await new ConsoleClient(app).signIn('anna', 'anna-password-1234')).statusCode).toBe(401);
    expect((await new ConsoleClient(app).signIn('anna', generated)).statusCode).toBe(303);

    expect((await new ConsoleClient(app).signIn('gone', 'gone-password-1234')).statusCode).toBe(401);
    expect((await enableUser(ctx, 'gone', 'admin')).wasDisabled).toBe(true);
    expect((await new ConsoleClient(app).signIn('gone', 'gone-password-1234')).statusCode).toBe(303);
    await expect(enableUser(ctx, 'nobody', 'admin')).rejects.toThrow('There is no user named "nobody"');

    const audit = await t.handle.db.selectFrom('console_audit').select(['action', 'target', 'detail']).where('action', 'in', ['user.unlock', 'user.reset-password', 'user.enable']).orderBy('id').execute();
    expect(audit.map((a) => [a.action, a.target])).toEqual([
      ['user.unlock', 'anna'],
      ['user.reset-password', 'anna'],
      ['user.enable', 'gone'],
    ]);
    expect(JSON.stringify(audit)).not.toContain(generated);
  });

  it('answers the favicon with an empty 204 rather than a 404, and 421 for a foreign Host', async () => {
    expect((await app.inject({ method: 'GET', url: '/favicon.ico' })).statusCode).toBe(204);
    const rebound = await app.inject({ method: 'GET', url: '/login', headers: { host: 'rebind.example:8088' } });
    expect(rebound.statusCode).toBe(421);
  });
});
