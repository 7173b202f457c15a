import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { runCliInProcess } from '../helpers/run-cli.js';
import { sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 45: a settled date where everything matched prepares itself; with certify: auto on every account it is approved by rule.
const sandboxes: Sandbox[] = [];
const databases: TestDatabase[] = [];
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'wr-auto-prepare-'));
});
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
  for (const t of databases) await t.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function setup(certify: 'auto' | undefined) {
  const t = await createTestDatabase({ onDisk: true });
  databases.push(t);
  if (backend === 'embedded') await t.handle.close();
  const sandbox = await startSandbox({ port: 0, wallets: 0 });
  sandboxes.push(sandbox);
  sandbox.addWallet('EUR', 100_000n);
  const accountsFile = path.join(dir, `accounts-${databases.length}.json`);
  writeFileSync(accountsFile, JSON.stringify({ accounts: [{ name: 'shop', environment: 'sandbox', apiKeyEnv: 'SHOP_KEY', apiSecretEnv: 'SHOP_SECRET', ...(certify === undefined ? {} : { certify }) }] }));
  const gateway = sandboxEnv(sandbox);
  const env: Record<string, string> = {
    DATABASE_URL: '',
    ...t.childEnv,
    GATEWAY_SANDBOX_URL: gateway.GATEWAY_SANDBOX_URL!,
    SHOP_KEY: gateway.GATEWAY_API_KEY!,
    SHOP_SECRET: gateway.GATEWAY_API_SECRET!,
    RECON_ACCOUNTS_FILE: accountsFile,
    LOG_LEVEL: 'silent',
    RECON_TIMEZONE: 'UTC',
  };
  const clock = new FixedClock('2026-11-02T00:30:00Z');
  const cli = (...args: string[]) => runCliInProcess(args, env, { clock });
  /** Captures `date` just after its cut-off, imports its books and reconciles it once its capture window has closed. */
  const night = async (date: string, books: string) => {
    const next = new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    clock.set(`${next}T00:30:00Z`);
    expect((await cli('snapshot')).code).toBe(0);
    const file = path.join(dir, `books-${databases.length}-${date}.csv`);
    writeFileSync(file, `business_date,currency,balance\n${date},EUR,${books}\n`);
    expect((await cli('ledger', 'import', file)).code).toBe(0);
    clock.set(`${next}T04:00:00Z`);
    return (await cli('reconcile', '--date', date)).code;
  };
  const show = async (date: string) => JSON.parse((await cli('signoff', 'show', '--date', date, '--json')).stdout) as { state: string; signoffs: Array<{ prepared_by: string; approved_by: string | null; report_matches_seal: boolean }> };
  /** Imports corrected books for `date` (the date is reconciled again by the import). */
  const correct = async (date: string, books: string) => {
    const file = path.join(dir, `books-${databases.length}-${date}-corrected.csv`);
    writeFileSync(file, `business_date,currency,balance\n${date},EUR,${books}\n`);
    const imported = await cli('ledger', 'import', file);
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
  };
  return { night, show, correct };
}

describe(`days that prepare themselves (${backend})`, () => {
  it('a settled, all-matched date is prepared by wallet-recon and shows "prepared"; a date with a break is not', async () => {
    const s = await setup(undefined);
    expect(await s.night('2026-11-01', '1000.00')).toBe(0);
    const shown = await s.show('2026-11-01');
    expect(shown.state).toBe('prepared');
    expect(shown.signoffs[0]).toMatchObject({ prepared_by: 'wallet-recon', approved_by: null, report_matches_seal: true });
    expect(await s.night('2026-11-02', '900.00')).toBe(3);
    expect((await s.show('2026-11-02')).state).toBe('not signed');
    // Corrected books make the date clean: the import prepares it, no person and no reconcile needed.
    await s.correct('2026-11-02', '1000.00');
    const corrected = await s.show('2026-11-02');
    expect(corrected.state).toBe('prepared');
    expect(corrected.signoffs[0]).toMatchObject({ prepared_by: 'wallet-recon', approved_by: null });
  }, 180_000);

  it('with certify: auto on every account a clean date is approved by rule (auto-certify); a date with a break never is', async () => {
    const s = await setup('auto');
    expect(await s.night('2026-11-01', '1000.00')).toBe(0);
    const shown = await s.show('2026-11-01');
    expect(shown.state).toBe('approved');
    expect(shown.signoffs[0]).toMatchObject({ prepared_by: 'wallet-recon', approved_by: 'auto-certify' });
    expect(await s.night('2026-11-02', '900.00')).toBe(3);
    expect((await s.show('2026-11-02')).state).toBe('not signed');
  }, 120_000);
});
