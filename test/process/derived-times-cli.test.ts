import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse as parseCsv } from 'csv-parse/sync';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { businessCalendarOf } from '../../src/config/index.js';
import { psqlEnvironment } from '../../src/cli/sql-command.js';
import { buildConsoleApp } from '../../src/console/console-app.js';
import { addUser } from '../../src/console/console-users.js';
import { openDatabase } from '../../src/db/open-database.js';
import { createEvent } from '../../src/notifications/events.js';
import { buildNightDigest } from '../../src/notifications/night-digest.js';
import { createChannels } from '../../src/notifications/create-channels.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { ConsoleClient } from '../helpers/console-night.js';
import { parseMail, startSmtpServer, type TestSmtpServer } from '../helpers/receivers.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, withDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: case ages are derived from the settings in force and the injected clock, the same in
// `runs`, reports, the console, the e-mailed digest and SQL. Issue 44: drift is read by the rules a
// run was captured under (its own cut-off), never re-read by a later configuration.

// Auckland is UTC+13 in November: its dates turn 13 hours before UTC's.
const ZONE = 'Pacific/Auckland';
const DATE = '2026-11-20';
// 23:49:22 in Auckland on the 20th: 9 min 38 s before a 23:59 cut-off, 49 min 22 s after a 23:00 one.
const CAPTURED = '2026-11-20T10:49:22Z';
const CAPTURE_CUTOFF = { RECON_CUTOFF: '23:59' };
const MOVED_CUTOFF = { RECON_CUTOFF: '23:00' };
// 23:30 in Auckland on the 22nd: after the 23:00 cut-off, so the business date is already the 23rd,
// while the calendar date is the 22nd there and in UTC (10:30 on the 22nd).
const LATE_EVENING = '2026-11-22T10:30:00Z';
const PASSWORD = 'vera-viewer-pw-1';
const run = promisify(execFile);

let t: TestDatabase;
let sandbox: Sandbox;
let smtp: TestSmtpServer;
let dir: string;
let env: Record<string, string>;
let caseId: number;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The embedded database serves one handle at a time: the CLI opens it per command.
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 2, seed: 9 });
  smtp = await startSmtpServer();
  dir = mkdtempSync(path.join(tmpdir(), 'wr-derived-times-'));
  env = {
    DATABASE_URL: '',
    ...t.childEnv,
    ...sandboxEnv(sandbox),
    LOG_LEVEL: 'silent',
    RECON_TIMEZONE: ZONE,
    RECON_SMTP_URL: smtp.url,
    RECON_MAIL_FROM: 'Recon <recon@example.test>',
    RECON_MAIL_TO: 'finance@example.test',
  };

  const snapshot = await at(CAPTURED, CAPTURE_CUTOFF, 'snapshot');
  expect(snapshot.code, snapshot.stderr).toBe(0);
  expect(snapshot.stdout).toContain(`${DATE}, end of day, 9 min 38 s before cut-off`);
  // Books 500 minor units short on the first wallet (beyond the default tolerance): a break, so a case opens on the 20th.
  const file = path.join(dir, 'books.csv');
  const [first, ...rest] = sandbox.wallets;
  writeFileSync(file, ['business_date,currency,balance', `${DATE},${first!.currency},${first!.balance - 500n}`, ...rest.map((w) => `${DATE},${w.currency},${w.balance}`)].join('\n'));
  const imported = await at('2026-11-21T00:00:00Z', CAPTURE_CUTOFF, 'ledger', 'import', '--amounts', 'minor', file);
  expect(imported.code, imported.stderr).toBe(0);
  expect(imported.stdout).toContain("Re-reconciled 1 date");
  const opened = await withDatabase(t, (db) => db.selectFrom('reconciliation_cases').select(['id', 'opened_on']).where('kind', '=', 'break').executeTakeFirstOrThrow());
  expect(opened.opened_on).toBe(DATE);
  caseId = opened.id;
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  await smtp?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

function at(iso: string, settings: Record<string, string>, ...args: string[]) {
  return runCliInProcess(args, { ...env, ...settings }, { clock: new FixedClock(iso) });
}

/** A context on the test database, with its own handle while the embedded one is closed between CLI commands. */
async function withContext<T>(iso: string, settings: Record<string, string>, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const handle = backend === 'postgres' ? t.handle : await openDatabase({ dataDir: t.childEnv.RECON_DATA_DIR!, command: 'test of derived times' });
  try {
    return await fn({ ...createTestContext(t, { ...env, ...settings }, { clock: new FixedClock(iso) }), database: handle });
  } finally {
    if (backend === 'embedded') await handle.close();
  }
}

/** The console's answer to `url` for a signed-in viewer, on a clock at `iso`. */
function consolePage(iso: string, settings: Record<string, string>, url: string): Promise<string> {
  return withContext(iso, settings, async (ctx) => {
    const known = await ctx.database.db.selectFrom('console_users').select('name').where('name', '=', 'vera').executeTakeFirst();
    if (known === undefined) await addUser(ctx, 'vera', 'viewer', PASSWORD, 'test');
    const app = await buildConsoleApp({ ctx });
    try {
      const client = new ConsoleClient(app);
      expect((await client.signIn('vera', PASSWORD)).statusCode).toBe(303);
      const page = await client.get(url);
      expect(page.statusCode, page.body).toBe(200);
      return page.body;
    } finally {
      await app.close();
    }
  });
}

describe(`derived times follow the current settings and the clock (${backend})`, { timeout: 120_000 }, () => {
  it('shows drift from the cut-off the run was captured against after RECON_CUTOFF moved: runs, reports, console and digest', async () => {
    const now = '2026-11-22T00:00:00Z';
    const runs = await at(now, MOVED_CUTOFF, 'runs');
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(new RegExp(`${DATE}\\s+yes, 9 min 38 s before\\s`));
    expect(runs.stdout).toContain(`read by the cut-off 23:59 ${ZONE} as captured`);

    // JSON: the cut-off, its zone and the drift the run was captured against.
    const json = JSON.parse((await at(now, MOVED_CUTOFF, 'runs', '--json')).stdout) as Array<Record<string, unknown>>;
    expect(json).toEqual([expect.objectContaining({ business_date: DATE, cutoff_at: '2026-11-20T10:59:00.000Z', cutoff_timezone: ZONE, cutoff_drift_seconds: -(9 * 60 + 38) })]);

    for (const range of [['--date', DATE], ['--from', '2026-11-19', '--to', DATE]]) {
      const html = await at(now, MOVED_CUTOFF, 'report', ...range, '--format', 'html');
      expect(html.stdout, html.stderr).toContain('end of day, 9 min 38 s before cut-off (cut-off 23:59 Pacific/Auckland as captured');
      expect(html.stdout).not.toContain('49 min after cut-off');
    }

    const day = await consolePage(now, MOVED_CUTOFF, `/day?date=${DATE}`);
    expect(day).toContain('9 min 38 s before the cut-off (cut-off 23:59 Pacific/Auckland as captured');

    const digest = await withContext(now, MOVED_CUTOFF, (ctx) =>
      buildNightDigest(ctx.database.db, { businessDate: DATE, slot: new Date(CAPTURED), cutoffAt: businessCalendarOf(ctx.config).cutoffOf(DATE), accounts: [{ account: 'default', status: 'captured' }] }),
    );
    expect(digest.accounts[0]).toMatchObject({ account: 'default', cutoffDriftSeconds: -(9 * 60 + 38) });
  });

  it('gives a case one age everywhere: the business date of the clock in RECON_TIMEZONE (after the cut-off) minus the date it opened', async () => {
    // 23:30 in Auckland on the 22nd, after the 23:00 cut-off: the business date is the 23rd, 3 days after the 20th.
    const cases = JSON.parse((await at(LATE_EVENING, MOVED_CUTOFF, 'cases', '--json')).stdout) as Array<{ id: number; age_days: number }>;
    expect(cases.find((c) => c.id === caseId)?.age_days).toBe(3);
    expect((await at(LATE_EVENING, MOVED_CUTOFF, 'cases', 'show', String(caseId))).stdout).toContain(`opened on ${DATE}, last seen on ${DATE}, age 3 days`);

    const report = JSON.parse((await at(LATE_EVENING, MOVED_CUTOFF, 'report', '--date', DATE, '--format', 'json')).stdout) as { results: Array<{ case_id: number | null; case_age_days: number | null }> };
    expect(report.results.filter((r) => r.case_id === caseId).map((r) => r.case_age_days)).toEqual([3]);
    const out = path.join(dir, 'report.csv');
    expect((await at(LATE_EVENING, MOVED_CUTOFF, 'report', '--date', DATE, '--format', 'csv', '--out', out)).code).toBe(0);
    const rows = parseCsv(readFileSync(out, 'utf8'), { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(rows.filter((r) => r.case_id === String(caseId)).map((r) => r.case_age_days)).toEqual(['3']);
    expect((await at(LATE_EVENING, MOVED_CUTOFF, 'report', '--date', DATE, '--format', 'html')).stdout).toContain(`#${caseId} open, 3 d`);

    expect(await consolePage(LATE_EVENING, MOVED_CUTOFF, '/cases')).toMatch(new RegExp(`<a href="/cases/${caseId}">#${caseId}</a>.*?<td class="amount">3</td>`));
    expect(await consolePage(LATE_EVENING, MOVED_CUTOFF, `/cases/${caseId}`)).toContain('<dt>Age</dt><dd>3 days (2-7 days)</dd>');

    // The e-mailed digest of the night, delivered now: its attached report counts to the same date.
    await withContext(LATE_EVENING, MOVED_CUTOFF, async (ctx) => {
      const data = await buildNightDigest(ctx.database.db, { businessDate: DATE, slot: new Date(CAPTURED), cutoffAt: businessCalendarOf(ctx.config).cutoffOf(DATE), accounts: [{ account: 'default', status: 'captured' }] });
      const email = createChannels(ctx.config, ctx.database.db, () => ctx.clock.now()).get('email')!;
      await email.send(createEvent('night.completed', ctx.clock.now(), data), ctx.clock.now());
      email.close?.();
    });
    const mail = parseMail(smtp.mails.at(-1)!.raw);
    const attachment = mail.parts.find((p) => p.headers['content-disposition']?.startsWith('attachment'));
    expect(attachment?.body).toContain(`#${caseId} open, 3 d`);
    expect(mail.parts.find((p) => p.headers['content-type']?.startsWith('text/plain'))?.body).toContain('9 min 38 s before the cut-off');

    // SQL: open_cases counts to the business date of the database's clock in the session's
    // wallet_recon.timezone and wallet_recon.cutoff (as `wallet-recon sql` sets them); at the
    // app's instant that is the app's date, where UTC's current_date would be a day short.
    const sqlAges = await withDatabase(t, (db) =>
      db.transaction().execute(async (trx) => {
        await sql`select set_config('wallet_recon.timezone', ${ZONE}, true), set_config('wallet_recon.cutoff', ${MOVED_CUTOFF.RECON_CUTOFF}, true), set_config('TimeZone', 'UTC', true)`.execute(trx);
        const { rows } = await sql<{ business_date: string; utc_date: string; view_age: number; age_now: number }>`
          select wallet_recon_business_date(${new Date(LATE_EVENING)}::timestamptz)::text as business_date,
            (${new Date(LATE_EVENING)}::timestamptz at time zone 'UTC')::date::text as utc_date,
            o.age_days as view_age, greatest(0, wallet_recon_business_date(now()) - o.opened_on) as age_now
          from open_cases o where o.id = ${caseId}`.execute(trx);
        return rows[0]!;
      }),
    );
    expect(sqlAges).toEqual({ business_date: '2026-11-23', utc_date: '2026-11-22', view_age: sqlAges.age_now, age_now: sqlAges.age_now });
  });

  it('computes the business date in SQL as the app does, for any zone and cut-off (DST days included)', async () => {
    const instants = ['2026-11-22T10:29:59Z', '2026-11-22T10:30:00Z', '2026-11-22T22:59:00Z', '2026-11-22T23:00:00Z', '2026-03-29T00:59:59Z', '2026-03-29T01:00:00Z', '2026-10-25T00:30:00Z', '2026-11-01T05:30:00Z', '2026-11-01T06:30:00Z'];
    const settings = ['UTC', ZONE, 'Europe/Berlin', 'America/New_York'].flatMap((timezone) => ['00:00', '00:30', '17:00', '23:00', '23:59'].map((cutoff) => ({ timezone, cutoff })));
    const expected = settings.flatMap((s) => instants.map((i) => businessCalendarOf({ ...s, captureWindowMs: 3_600_000 }).businessDateOf(new Date(i))));
    const actual = await withDatabase(t, (db) =>
      db.transaction().execute(async (trx) => {
        const dates: string[] = [];
        for (const s of settings) {
          await sql`select set_config('wallet_recon.timezone', ${s.timezone}, true), set_config('wallet_recon.cutoff', ${s.cutoff}, true)`.execute(trx);
          for (const i of instants) dates.push((await sql<{ d: string }>`select wallet_recon_business_date(${new Date(i)}::timestamptz)::text as d`.execute(trx)).rows[0]!.d);
        }
        return dates;
      }),
    );
    expect(actual).toEqual(expected);
    // Without the settings: the session's own TimeZone and a midnight cut-off, as current_date counts.
    const fallback = await withDatabase(t, (db) =>
      db.transaction().execute(async (trx) => {
        await sql`select set_config('TimeZone', ${ZONE}, true)`.execute(trx);
        return (await sql<{ d: string; today: boolean }>`select wallet_recon_business_date(${new Date(LATE_EVENING)}::timestamptz)::text as d, wallet_recon_business_date(now()) = current_date as today`.execute(trx)).rows[0]!;
      }),
    );
    expect(fallback).toEqual({ d: '2026-11-22', today: true });
  });

  it.runIf(backend === 'postgres' && existsSync('/usr/bin/psql'))('gives psql the business calendar, so open_cases counts as the tool does in a `wallet-recon sql` session', async () => {
    const ctx = createTestContext(t, { ...env, ...t.childEnv, ...MOVED_CUTOFF });
    const { stdout } = await run('psql', ['-Atc', "select current_setting('wallet_recon.timezone') || ' ' || current_setting('wallet_recon.cutoff')"], { env: { PATH: process.env.PATH, ...psqlEnvironment(ctx) } });
    expect(stdout.trim()).toBe(`${ZONE} 23:00`);
  });
});
