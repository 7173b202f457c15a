import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InsertQueryNode, RawNode, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runBackfillJob } from '../../jobs/backfill-job.js';
import { formatBackfillLine } from '../../src/cli/backfill-command.js';
import type { AppContext } from '../../src/app-context.js';
import { FixedClock } from '../../src/clock.js';
import { replaceExpectedBalanceDays } from '../../src/db/expected-balance.repository.js';
import { UsageError } from '../../src/errors.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const TODAY = '2026-11-21';
const PAST = ['2026-11-19', '2026-11-20'];

let t: TestDatabase;
let sandbox: Sandbox;
let ctx: AppContext;
let dir: string;

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 4, seed: 5 });
  // 23:00 on the 21st: the 21st's capture window (cut-off at midnight, ±3 h) is open.
  ctx = createTestContext(t, sandboxEnv(sandbox), { clock: new FixedClock(`${TODAY}T23:00:00Z`) });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-backfill-'));
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Statement or books lines for the sandbox's wallets on the given dates. */
function balanceLines(dates: readonly string[]): string[] {
  return dates.flatMap((date) => sandbox.wallets.map((w) => `${date},${w.currency},${w.balance}`));
}

function writeStatements(name: string, dates: readonly string[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, `business_date,currency,balance\n${balanceLines(dates).join('\n')}\n`);
  return file;
}

describe(`backfill (${backend})`, () => {
  beforeEach(async () => {
    const db = ctx.database.db;
    await db.deleteFrom('reconciliation_results').execute();
    await db.deleteFrom('balance_snapshots').execute();
    await db.deleteFrom('snapshot_runs').execute();
    await db.deleteFrom('reconciliation_owed').execute();
    await db.deleteFrom('scheduled_accounts').execute();
    await db.deleteFrom('expected_balances').execute();
    // The books agree with the gateway on every day of the range.
    await replaceExpectedBalanceDays(
      db,
      [...PAST, TODAY].flatMap((businessDate) => sandbox.wallets.map((w) => ({ account: 'default', businessDate, currency: w.currency, balance: w.balance }))),
      'books.csv',
      new Date(),
    );
  });

  it('captures the date whose window is open, reports the two closed days as gaps and exits 3', async () => {
    const result = await runBackfillJob(ctx, { from: PAST[0]!, to: TODAY });
    expect(result.exitCode).toBe(3);
    expect(result.dates.map((d) => [d.businessDate, d.accounts[0]!.action, d.gaps, d.unmatched])).toEqual([
      ['2026-11-19', 'gap', 1, 0],
      ['2026-11-20', 'gap', 1, 0],
      ['2026-11-21', 'capture', 0, 0],
    ]);
    // Today's cut-off is an hour ahead: captured, but not reconciled before it (owed until then).
    expect(result.dates[2]!.summary).toBeUndefined();
    expect(await ctx.database.db.selectFrom('reconciliation_status').select(['business_date', 'state']).where('business_date', '=', TODAY).execute()).toEqual([{ business_date: TODAY, state: 'owed' }]);
    const runs = await ctx.database.db.selectFrom('snapshot_runs').select(['business_date', 'trigger', 'status', 'end_of_day', 'cutoff_drift_seconds']).execute();
    expect(runs).toEqual([{ business_date: TODAY, trigger: 'backfill', status: 'succeeded', end_of_day: true, cutoff_drift_seconds: -3600 }]);
    const noSnapshot = await ctx.database.db.selectFrom('reconciliation_results').select('business_date').where('status', '=', 'no_snapshot').orderBy('business_date').execute();
    expect(noSnapshot.map((r) => r.business_date)).toEqual(PAST);
  });

  it('fills past days from statements as succeeded backfill runs, so daily_balances covers every day and it exits 0', async () => {
    const statements = writeStatements('statements-nov.csv', PAST);
    const result = await runBackfillJob(ctx, { from: PAST[0]!, to: TODAY, importFile: statements });
    expect(result.exitCode).toBe(0);
    expect(result.dates.map((d) => d.accounts[0]!.action)).toEqual(['import', 'import', 'capture']);

    const covered = await ctx.database.db.selectFrom('daily_balances').select('business_date').distinct().orderBy('business_date').execute();
    expect(covered.map((r) => r.business_date)).toEqual([...PAST, TODAY]);
    const imported = await ctx.database.db
      .selectFrom('snapshot_runs')
      .select(['business_date', 'trigger', 'status', 'source', 'wallets_fetched'])
      .where('business_date', 'in', PAST)
      .orderBy('business_date')
      .execute();
    expect(imported).toEqual(PAST.map((business_date) => ({ business_date, trigger: 'backfill', status: 'succeeded', source: 'statements-nov.csv', wallets_fetched: 4 })));
    const singles = await ctx.database.db.selectFrom('daily_balances').select('single_balance').where('business_date', 'in', PAST).execute();
    expect(singles.every((r) => r.single_balance === null)).toBe(true);
    const balances = await ctx.database.db.selectFrom('daily_balances').select(['currency', 'balance']).where('business_date', '=', PAST[0]!).orderBy('currency').execute();
    expect(balances).toEqual(sandbox.wallets.map((w) => ({ currency: w.currency, balance: w.balance.toString() })));

    // Run again: everything is already there, nothing is captured or imported twice.
    const again = await runBackfillJob(ctx, { from: PAST[0]!, to: TODAY, importFile: statements });
    expect(again.exitCode).toBe(0);
    expect(again.dates.map((d) => d.accounts[0]!.action)).toEqual(['existing', 'existing', 'existing']);
    expect(again.unusedStatementRows).toBe(8);
    expect(await ctx.database.db.selectFrom('snapshot_runs').select('id').execute()).toHaveLength(3);
  });

  it('records a file of many days in a few statements, each run as one written day by day would be', async () => {
    // Twelve past days before the range the other tests use: each an imported run.
    const days = Array.from({ length: 12 }, (_, i) => `2026-11-${String(i + 7).padStart(2, '0')}`);
    const statements = writeStatements('statements-many.csv', days);
    // With books that agree: no case is opened (the later tests look for none before the 19th).
    await replaceExpectedBalanceDays(ctx.database.db, days.flatMap((businessDate) => sandbox.wallets.map((w) => ({ account: 'default', businessDate, currency: w.currency, balance: w.balance }))), 'books.csv', new Date());
    // Counts the statements that write snapshot_runs, whether built or raw SQL.
    let runInserts = 0;
    const counting: KyselyPlugin = {
      transformQuery({ node }) {
        if (InsertQueryNode.is(node) && node.into?.table.identifier.name === 'snapshot_runs') runInserts++;
        if (RawNode.is(node) && /insert into snapshot_runs/.test(node.sqlFragments.join(''))) runInserts++;
        return node;
      },
      async transformResult({ result }) {
        return result;
      },
    };
    const counted: AppContext = { ...ctx, database: { ...ctx.database, db: ctx.database.db.withPlugin(counting) } };
    const result = await runBackfillJob(counted, { from: days[0]!, to: days.at(-1)!, importFile: statements });
    expect(result.dates.map((d) => d.accounts[0]!.action)).toEqual(days.map(() => 'import'));
    expect(result.exitCode).toBe(0);
    // One statement for the twelve runs, not one per day.
    expect(runInserts).toBe(1);
    const runs = await ctx.database.db
      .selectFrom('snapshot_runs')
      .select(['id', 'business_date', 'trigger', 'status', 'source', 'started_at', 'finished_at', 'cutoff_at', 'reads_finished_at', 'cutoff_drift_seconds', 'end_of_day', 'wallets_reported', 'wallets_fetched', 'pages_fetched', 'requests', 'error', 'warning'])
      .orderBy('id')
      .execute();
    const now = ctx.clock.now();
    // Ids in date order, as the day-by-day writes gave them; each run names its own rows.
    expect(runs.map((r) => r.business_date)).toEqual(days);
    expect(result.dates.map((d) => d.accounts[0]!.runId)).toEqual(runs.map((r) => r.id));
    expect(runs.map(({ id: _id, business_date: _date, cutoff_at, reads_finished_at, ...rest }) => ({ ...rest, readsAtCutoff: reads_finished_at?.getTime() === cutoff_at?.getTime() }))).toEqual(
      days.map(() => ({
        trigger: 'backfill',
        status: 'succeeded',
        source: 'statements-many.csv',
        started_at: now,
        finished_at: now,
        cutoff_drift_seconds: 0,
        end_of_day: true,
        wallets_reported: null,
        wallets_fetched: 4,
        pages_fetched: 0,
        requests: 0,
        error: null,
        warning: null,
        readsAtCutoff: true,
      })),
    );
    const rows = await ctx.database.db.selectFrom('balance_snapshots').select(['run_id', 'currency', 'balance', 'captured_at']).orderBy('run_id').orderBy('currency').execute();
    expect(rows).toEqual(
      runs.flatMap((r) =>
        [...sandbox.wallets].sort((a, b) => a.currency.localeCompare(b.currency)).map((w) => ({ run_id: r.id, currency: w.currency, balance: w.balance.toString(), captured_at: r.cutoff_at })),
      ),
    );
  });

  it('exits 3 for a break in a filled day, and leaves a day the statements lack as a gap', async () => {
    const file = path.join(dir, 'statements-partial.jsonl');
    const [first, ...rest] = sandbox.wallets;
    writeFileSync(
      file,
      [{ ...first!, balance: first!.balance + 1n }, ...rest]
        .map((w) => JSON.stringify({ business_date: PAST[1], currency: w.currency, balance: w.balance.toString() }))
        .join('\n'),
    );
    const result = await runBackfillJob(ctx, { from: PAST[0]!, to: PAST[1]!, importFile: file });
    expect(result.exitCode).toBe(3);
    expect(result.dates.map((d) => [d.businessDate, d.accounts[0]!.action, d.gaps, d.unmatched])).toEqual([
      ['2026-11-19', 'gap', 1, 0],
      ['2026-11-20', 'import', 0, 1],
    ]);
  });

  it('labels a day whose results are missing, not broken, as not matched with no breaks', async () => {
    // The statements lack one wallet the books hold: missing_in_gateway, which is no break.
    const file = path.join(dir, 'statements-short.csv');
    writeFileSync(file, `business_date,currency,balance\n${balanceLines([PAST[1]!]).slice(1).join('\n')}\n`);
    const result = await runBackfillJob(ctx, { from: PAST[1]!, to: PAST[1]!, importFile: file });
    expect(result.exitCode).toBe(3);
    const [date] = result.dates;
    expect(date!.summary).toMatchObject({ matched: 3, break: 0, missing_in_gateway: 1 });
    expect(formatBackfillLine(date!, result)).toMatch(new RegExp(`^${PAST[1]}  imported from statements-short\\.csv \\(run \\d+\\)  matched 3  not matched 1 \\(breaks 0\\)  gaps 0$`));
  });

  it('with --dry-run plans the same and writes nothing', async () => {
    const statements = writeStatements('statements-dry.csv', [PAST[1]!]);
    const result = await runBackfillJob(ctx, { from: PAST[0]!, to: TODAY, importFile: statements, dryRun: true });
    expect(result).toMatchObject({ dryRun: true, exitCode: 3, source: 'statements-dry.csv' });
    expect(result.dates.map((d) => d.accounts[0]!.action)).toEqual(['gap', 'import', 'capture']);
    expect(await ctx.database.db.selectFrom('snapshot_runs').selectAll().execute()).toEqual([]);
    expect(await ctx.database.db.selectFrom('reconciliation_results').selectAll().execute()).toEqual([]);
  });

  it('leaves a date whose cut-off is still ahead pending: not captured, not reconciled, not a gap', async () => {
    const noon = createTestContext(t, sandboxEnv(sandbox), { clock: new FixedClock(`${TODAY}T12:00:00Z`) });
    const statements = writeStatements('statements-noon.csv', PAST);
    const result = await runBackfillJob(noon, { from: PAST[0]!, to: TODAY, importFile: statements });
    expect(result.dates.map((d) => [d.businessDate, d.accounts[0]!.action, d.pending, d.gaps])).toEqual([
      ['2026-11-19', 'import', false, 0],
      ['2026-11-20', 'import', false, 0],
      ['2026-11-21', 'pending', true, 0],
    ]);
    expect(result.exitCode).toBe(0);
    expect(formatBackfillLine(result.dates[2]!, result)).toBe('2026-11-21  pending: its cut-off is still ahead  not reconciled yet');
    const reconciled = await noon.database.db.selectFrom('reconciliation_results').select('business_date').distinct().orderBy('business_date').execute();
    expect(reconciled.map((r) => r.business_date)).toEqual(PAST);
  });

  it("reports requested dates before the account's first run or books as gaps, without reconciling them: no result, no case", async () => {
    const before = await runBackfillJob(ctx, { from: '2026-11-17', to: '2026-11-18' });
    expect(before.dates.map((d) => [d.businessDate, d.accounts[0]!.action, d.gaps])).toEqual([
      ['2026-11-17', 'untracked', 1],
      ['2026-11-18', 'untracked', 1],
    ]);
    expect(before.exitCode).toBe(3);
    const result = await runBackfillJob(ctx, { from: '2026-11-17', to: PAST[1]! });
    expect(result.dates.map((d) => [d.businessDate, d.accounts[0]!.action, d.gaps])).toEqual([
      ['2026-11-17', 'untracked', 1],
      ['2026-11-18', 'untracked', 1],
      ['2026-11-19', 'gap', 1],
      ['2026-11-20', 'gap', 1],
    ]);
    expect(formatBackfillLine(result.dates[0]!, result)).toBe(
      "2026-11-17  GAP, not tracked yet (before the account's first capture or books, 2026-11-19; not reconciled, no case)  not reconciled (no account tracked yet)  gaps 1",
    );
    const reconciled = await ctx.database.db.selectFrom('reconciliation_results').select('business_date').distinct().orderBy('business_date').execute();
    expect(reconciled.map((r) => r.business_date)).toEqual(PAST);
    const early = await ctx.database.db.selectFrom('case_occurrences').select('business_date').where('business_date', '<', PAST[0]!).execute();
    expect(early).toEqual([]);
  });

  it('refuses a future date, a reversed range and a bad statements file before writing anything', async () => {
    await expect(runBackfillJob(ctx, { from: TODAY, to: '2026-11-22' })).rejects.toThrow(
      new UsageError('--to 2026-11-22 is in the future (the current business date is 2026-11-21 in UTC): a balance cannot be captured before its day.'),
    );
    await expect(runBackfillJob(ctx, { from: '2026-11-20', to: '2026-11-19' })).rejects.toThrow(/--from 2026-11-20 is after --to 2026-11-19/);
    const bad = path.join(dir, 'statements-bad.csv');
    writeFileSync(bad, 'business_date,currency,balance\n2026-11-19,EUR,1\n2026-11-19,EUR,2\n');
    await expect(runBackfillJob(ctx, { from: PAST[0]!, to: TODAY, importFile: bad })).rejects.toThrow(/line 3: duplicate of line 2/);
    expect(await ctx.database.db.selectFrom('snapshot_runs').selectAll().execute()).toEqual([]);
  });
});
