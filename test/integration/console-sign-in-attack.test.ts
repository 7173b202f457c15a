import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addUser } from '../../src/console/console-users.js';
import { httpRequest, openLoginForm, postLogin, startConsoleProcess, type StartedConsole } from '../helpers/console-http.js';
import { createTestContext } from '../helpers/test-context.js';
import { backend, createTestDatabase, serveToCommands, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// The sign-in page of a running `wallet-recon console`, attacked over real HTTP from several
// client addresses (127.0.0.x on the loopback): limits that hold in parallel, bounded hashing,
// no lockout from elsewhere, no DNS rebinding, client errors as 400.

const PASSWORDS = { anna: 'anna-password-1234', ben: 'ben-password-12345', carl: 'carl-password-1234', dora: 'dora-password-1234' } as const;

let t: TestDatabase;
let consoleProcess: StartedConsole;
let port: number;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port: p } = server.address() as { port: number };
      server.close(() => resolve(p));
    });
  });
}

const attemptsOf = (name: string) =>
  withDatabase(t, async (db) => Number((await db.selectFrom('console_sign_in_attempts').select((eb) => eb.fn.countAll<string>().as('n')).where('user_name', '=', name).executeTakeFirstOrThrow()).n));

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  const ctx = createTestContext(t, {});
  for (const [name, password] of Object.entries(PASSWORDS)) await addUser(ctx, name, 'preparer', password, 'test');
  await serveToCommands(t);
  port = await freePort();
  consoleProcess = await startConsoleProcess({ DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'info', RECON_TIMEZONE: 'UTC' }, port);
}, 120_000);

afterAll(async () => {
  await consoleProcess?.stop();
  await t?.drop();
});

// Each password check is a deliberately costly scrypt, on a machine shared with other suites.
describe(`sign-in of a running console under attack (${backend})`, { timeout: 180_000 }, () => {
  it('checks at most 5 of 40 parallel wrong passwords for one user; the rest are 429 with the time to retry', async () => {
    const form = await openLoginForm(port, '127.0.0.2');
    const answers = await Promise.all(Array.from({ length: 40 }, () => postLogin(port, form, 'anna', 'wrong-password-guess')));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(35);
    for (const refused of answers.filter((a) => a.status === 429)) {
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toMatch(/Too many failed sign-ins for &quot;anna&quot; from your address \(5 within 15 minutes\): wait until \d\d:\d\d UTC/);
    }
    expect(await attemptsOf('anna')).toBeLessThanOrEqual(5);
  });

  it('does not sign in 60 wrong passwords plus the right one sent in parallel', async () => {
    const form = await openLoginForm(port, '127.0.0.3');
    const wrong = Array.from({ length: 60 }, (_, i) => postLogin(port, form, 'ben', `wrong-guess-${i}`));
    // Sent while the 60 are in flight.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const right = postLogin(port, form, 'ben', PASSWORDS.ben);
    const answers = await Promise.all([...wrong, right]);
    expect(answers.filter((a) => a.status === 303)).toEqual([]);
    expect((await right).status).toBe(429);
    expect(await attemptsOf('ben')).toBeLessThanOrEqual(5);
  });

  // What keeps the real user's sign-in quick is that the flood is refused before it is hashed:
  // the bound on hashing is asserted, not a time (which a loaded machine would make flaky).
  it('signs a real user in from another address while 100 random names arrive from one address, hashing at most 20 of them', async () => {
    const attacker = await openLoginForm(port, '127.0.0.5');
    const real = await openLoginForm(port, '127.0.0.6');
    const flood = Array.from({ length: 100 }, () => postLogin(port, attacker, `guess-${randomBytes(6).toString('hex')}`, 'some-password-guess'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    const signIn = await postLogin(port, real, 'carl', PASSWORDS.carl);
    const flooded = await Promise.all(flood);
    expect(signIn.status).toBe(303);
    const statuses = flooded.map((a) => a.status);
    expect(statuses.filter((s) => ![401, 429, 503].includes(s))).toEqual([]);
    // Bounded: most of the burst is refused at once instead of hashed.
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(20);
    for (const busy of flooded.filter((a) => a.status === 503)) {
      expect(busy.headers['retry-after']).toBe('1');
      expect(busy.body).toContain('The console is busy checking other sign-ins: try again in 1 second.');
    }
  });

  it('refuses the right password only at the address the five failures came from', async () => {
    const guesser = await openLoginForm(port, '127.0.0.7');
    for (let i = 0; i < 5; i++) expect((await postLogin(port, guesser, 'dora', `wrong-${i}`)).status).toBe(401);
    expect((await postLogin(port, guesser, 'dora', PASSWORDS.dora)).status).toBe(429);
    const owner = await openLoginForm(port, '127.0.0.8');
    expect((await postLogin(port, owner, 'dora', PASSWORDS.dora)).status).toBe(303);
  });

  it('answers a request for another host name with 421 before any handler (DNS rebinding)', async () => {
    const form = await openLoginForm(port, '127.0.0.9');
    const rebound = await postLogin(port, form, 'carl', PASSWORDS.carl, { host: 'rebind.example', origin: 'http://rebind.example' });
    expect(rebound.status).toBe(421);
    expect(rebound.headers['set-cookie']).toBeUndefined();
    expect(rebound.body).toContain('this console answers only for loopback addresses');
    expect((await httpRequest(port, { path: '/login', headers: { host: `rebind.example:${port}` } })).status).toBe(421);
    // A loopback Host with a foreign Origin: refused by the origin check, which never trusts the request.
    const foreign = await postLogin(port, form, 'carl', PASSWORDS.carl, { origin: 'http://rebind.example' });
    expect(foreign.status).toBe(403);
  });

  it('answers a NUL byte, impossible and out-of-range dates and over-long fields with 400, logging no error', async () => {
    const form = await openLoginForm(port, '127.0.0.10');
    const nul = await httpRequest(port, {
      method: 'POST',
      path: '/login',
      localAddress: form.localAddress,
      headers: { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: `user=a%00b&password=whatever-password&_csrf=${form.token}`,
    });
    expect(nul.status).toBe(400);
    expect(nul.body).toContain('holds a control character (such as a NUL byte)');
    expect((await postLogin(port, form, 'x'.repeat(300), 'whatever-password')).status).toBe(400);
    const signedIn = await postLogin(port, await openLoginForm(port, '127.0.0.11'), 'carl', PASSWORDS.carl);
    expect(signedIn.status).toBe(303);
    const session = [signedIn.headers['set-cookie']].flat().map((c) => String(c).split(';')[0]!).find((c) => c.startsWith('recon_session='))!;
    const get = (path: string) => httpRequest(port, { path, headers: { host: `127.0.0.1:${port}`, cookie: session }, localAddress: '127.0.0.11' });
    const impossible = await get('/day?date=2026-02-30');
    expect(impossible.status).toBe(400);
    expect(impossible.body).toContain('date &quot;2026-02-30&quot; is not a real date');
    const yearZero = await get('/day?date=0000-01-01');
    expect(yearZero.status).toBe(400);
    expect(yearZero.body).toContain('out of range');
    expect((await get('/day?date=2026-11-2%00')).status).toBe(400);
    expect((await get(`/cases?account=${'a'.repeat(100)}`)).status).toBe(400);
    const lines = consoleProcess.log().split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => (JSON.parse(l) as { level: number }).level >= 50)).toEqual([]);
  });

  it('serves no 404 for the favicon', async () => {
    const icon = await httpRequest(port, { path: '/favicon.ico', headers: { host: `localhost:${port}` } });
    expect(icon.status).toBe(204);
  });
});
