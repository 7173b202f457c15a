import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRunningRun, markRunFailed } from '../../src/db/snapshot-run.repository.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServer, type TestServer } from '../helpers/with-server.js';

// Every error a person meets first, through the CLI: one line in words (no internal class
// name, no repetition) and the exit code of the README's table.
let t: TestDatabase;
let ahead: TestDatabase;
let notFound: TestServer;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await t.handle.close();
  // A database migrated by a newer version: it holds a migration this one does not know.
  ahead = await createTestDatabase({ onDisk: true });
  if (backend === 'embedded') await ahead.handle.close();
  await withDatabase(ahead, (db) => sql`insert into kysely_migration (name, timestamp) values ('2099-01-01T0001_from-the-future', '2099-01-01T00:00:00Z')`.execute(db));
  // A gateway base URL that points at the wrong path: every request, the sign-in included, is 404.
  notFound = await startServer((_request, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-errors-'));
  writeFileSync(path.join(dir, 'future.csv'), 'business_date,currency,balance\n2999-01-01,EUR,100\n');
  writeFileSync(path.join(dir, 'spaced.csv'), 'business_date,currency,balance\n2026-11-01,EUR, 100\n');
  env = { DATABASE_URL: '', ...t.childEnv, LOG_LEVEL: 'silent', GATEWAY_API_KEY: 'key', GATEWAY_API_SECRET: 'secret', GATEWAY_RETRY_ATTEMPTS: '0' };
}, 120_000);

afterAll(async () => {
  await notFound?.close();
  await t?.drop();
  await ahead?.drop();
  rmSync(dir, { recursive: true, force: true });
});

interface ErrorCase {
  name: string;
  args: string[];
  /** Read when the case runs: the databases and the server exist only then. */
  env?: () => Record<string, string>;
  code: number;
  /** The one line, on stderr unless `stdout` says the command reports it in its summary. */
  line: RegExp;
  stdout?: boolean;
}

const cases: ErrorCase[] = [
  {
    name: 'a number setting that is not a number',
    args: ['runs'],
    env: () => ({ GATEWAY_TIMEOUT_MS: 'abc' }),
    code: 2,
    line: /^GATEWAY_TIMEOUT_MS must be a whole number of milliseconds from 1 to 600000, got "abc"\.$/,
  },
  {
    name: 'a base URL without a scheme',
    args: ['runs'],
    env: () => ({ GATEWAY_SANDBOX_URL: 'localhost:4010' }),
    code: 2,
    line: /^GATEWAY_SANDBOX_URL has no scheme: write it as https:\/\/localhost:4010, or as http:\/\/localhost:4010 if it is a loopback host such as localhost or 127\.0\.0\.1, got "localhost:4010"\.$/,
  },
  { name: 'contradictory report flags', args: ['report', '--date', '2026-11-19', '--from', '2026-11-01', '--to', '2026-11-30'], code: 2, line: /^--date and --from contradict each other/ },
  { name: 'a report of a future date', args: ['report', '--date', '2999-01-01'], code: 2, line: /^--date 2999-01-01 is in the future \(the current business date is \d{4}-\d{2}-\d{2} in UTC\)/ },
  { name: 'a reconciliation of a future date', args: ['reconcile', '--date', '2999-01-01'], code: 2, line: /^--date 2999-01-01 is in the future/ },
  { name: 'runs of an account that is not configured', args: ['runs', '--account', 'nope'], code: 2, line: /^There is no account named "nope"\. Configured accounts: default\.$/ },
  { name: 'cases of an account that is not configured', args: ['cases', '--account', 'nope'], code: 2, line: /^There is no account named "nope"\. Configured accounts: default\.$/ },
  { name: 'a report of an account that is not configured', args: ['report', '--date', '2026-11-19', '--account', 'nope'], code: 2, line: /^There is no account named "nope"/ },
  { name: 'a database migrated by a newer version', args: ['runs'], env: () => ahead.childEnv, code: 2, line: /^The database holds migration this version of wallet-recon does not know \(2099-01-01T0001_from-the-future\)/ },
  { name: 'books of a day that has not begun', args: ['ledger', 'import', 'future.csv'], code: 1, line: /^future\.csv line 2: business_date 2999-01-01 is after the current business date \(\d{4}-\d{2}-\d{2} in UTC\); books cannot hold a day that has not begun; nothing was imported\.$/ },
  { name: 'an amount with spaces around it', args: ['ledger', 'import', 'spaced.csv'], code: 1, line: /^spaced\.csv line 2: balance " 100" has spaces around it; write the amount alone, e.g\. 100; nothing was imported\.$/ },
  {
    name: 'a 404 on the sign-in path',
    args: ['snapshot', '--quiet'],
    env: () => ({ GATEWAY_SANDBOX_URL: `${notFound.url}/wrong/path` }),
    code: 1,
    stdout: true,
    line: /^default: the gateway answered 404 \(not found\) to the sign-in request POST \/wrong\/path\/v1\/auth\/token for account "default": check the base URL and its path \(configured: http:\/\/127\.0\.0\.1:\d+\/wrong\/path; it should be the gateway's root address, without \/v1\)\.$/,
  },
];

describe(`one line per error and the documented exit code (${backend})`, () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const args = c.args.map((a) => (a.endsWith('.csv') ? path.join(dir, a) : a));
    const result = await runCliInProcess(args, { ...env, ...c.env?.() });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(c.code);
    const lines = (c.stdout ? result.stdout.split('\n').filter((l) => c.line.test(l)) : result.stderr.trim().split('\n')).filter(Boolean);
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(c.line);
    expect(result.stderr + result.stdout).not.toMatch(/\b[A-Z][a-zA-Z]*Error: /);
  });

  it('reads the runs and cases of an account no longer configured (renamed), saying so', async () => {
    await withDatabase(t, async (db) => {
      // 9 min 38 s before the cut-off of 2026-11-20 (RECON_CUTOFF 00:00 UTC): the widest drift a line shows.
      const at = new Date('2026-11-20T23:50:22Z');
      const runId = await insertRunningRun(db, { account: 'eu-old', environment: 'sandbox', trigger: 'schedule', businessDate: '2026-11-20', startedAt: at, timing: { cutoffAt: new Date('2026-11-21T00:00:00Z'), driftSeconds: -578, endOfDay: true } });
      await markRunFailed(db, runId, new Date('2026-11-20T23:50:24Z'), 'interrupted');
    });
    const runs = await runCliInProcess(['runs', '--account', 'eu-old'], env);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stderr.trim()).toBe('Account "eu-old" is not configured any more; these are its recorded runs.');
    expect(runs.stdout).toMatch(/eu-old\s+2026-11-20\s+yes, 9 min 38 s before\s+schedule\s+failed\s+2026-11-20 23:50 UTC\s+2\.0 s/);
    // The error follows the table on its own line: no table line is wider than a wide terminal (132 columns).
    expect(runs.stdout).toMatch(/\nrun \d+: interrupted$/);
    for (const line of runs.stdout.split('\n').filter((l) => !l.startsWith('run '))) expect(line.length, line).toBeLessThanOrEqual(132);
  });

  it.runIf(backend === 'postgres')('a database that is not migrated is a setup error (2)', async () => {
    const bare = await createTestDatabase({ migrate: false });
    try {
      const result = await runCliInProcess(['runs'], { ...env, ...bare.childEnv });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^The database schema is not up to date \(\d+ migration\(s\) pending\)\. Run "wallet-recon migrate" first\.$/);
    } finally {
      await bare.drop();
    }
  });
});
