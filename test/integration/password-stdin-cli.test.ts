import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Passwords reach `users` and `signoff` on standard input only (never the command line). The
// process suite pipes them into the built CLI; here the same commands read the standard input a
// test gives them in-process, so `npm test` covers what they do with it.
let t: TestDatabase;
let env: Record<string, string>;
const cli = (input: string | undefined, ...args: string[]) => runCliInProcess(args, env, { input });

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  env = { DATABASE_URL: '', ...t.childEnv, GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's', LOG_LEVEL: 'silent', RECON_TIMEZONE: 'UTC' };
});

afterAll(async () => {
  await t?.drop();
});

describe(`passwords on standard input (${backend})`, () => {
  it('adds a user with the password piped in, without its line ending, and never prints it', async () => {
    const added = await cli('anna-preparer-pw-1\n', 'users', 'add', 'anna', '--role', 'preparer', '--password-stdin');
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe('Added user "anna" with the preparer role.');
    expect(`${added.stdout}${added.stderr}`).not.toContain('anna-preparer-pw-1');
    // The line ending was not part of the password: signing with it as typed gets past the
    // password check to the date's own state (nothing captured: not signable yet).
    const signed = await cli('anna-preparer-pw-1', 'signoff', 'prepare', '--date', '2026-11-20', '--as', 'anna', '--password-stdin');
    expect([signed.code, signed.stderr]).toEqual([2, expect.stringContaining('2026-11-20 cannot be signed yet: default is not_captured')]);
  });

  it('refuses a piped password shorter than 12 characters (exit 2) and adds no one', async () => {
    const refused = await cli('short', 'users', 'add', 'ben', '--role', 'approver', '--password-stdin');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('12 characters');
    const listed = await cli(undefined, 'users', 'list');
    expect(listed.stdout).not.toContain('ben');
  });

  it('refuses a sign-off whose piped password is wrong, naming neither the password nor the stored hash', async () => {
    const wrong = await cli('not-annas-password', 'signoff', 'prepare', '--date', '2026-11-20', '--as', 'anna', '--password-stdin');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/password/i);
    expect(wrong.stderr).not.toContain('not-annas-password');
  });
});
