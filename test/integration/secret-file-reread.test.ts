import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSnapshotJob } from '../../jobs/snapshot-job.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createTestContext, sandboxEnv } from '../helpers/test-context.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Issue 33: date.at_risk says "fix the credentials before …": a corrected secret file must count without a restart.
let t: TestDatabase;
let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  t = await createTestDatabase();
  sandbox = await startSandbox({ port: 0, wallets: 2 });
  dir = mkdtempSync(path.join(tmpdir(), 'wr-secret-file-'));
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe(`a gateway secret given as a file (${backend})`, () => {
  it('is read again at each attempt: the same loaded configuration captures once the file is corrected', async () => {
    const file = path.join(dir, 'gateway-secret');
    writeFileSync(file, 'not-the-secret\n', { mode: 0o600 });
    const { GATEWAY_API_SECRET: _direct, ...env } = sandboxEnv(sandbox);
    // One context, loaded once, as a worker holds it for days.
    const ctx = createTestContext(t, { ...env, GATEWAY_API_SECRET_FILE: file });

    const refused = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(refused.accounts[0]).toMatchObject({ status: 'failed' });
    expect(refused.accounts[0]!.error).toMatch(/refused the API key\/secret/);

    writeFileSync(file, `${sandbox.apiSecret}\n`);
    const captured = await runSnapshotJob(ctx, { trigger: 'manual' });
    expect(captured.accounts[0], captured.accounts[0]!.error).toMatchObject({ status: 'succeeded', walletsFetched: 2 });
  });

  it('says which file when it can no longer be read, never its content', async () => {
    const file = path.join(dir, 'gone-secret');
    writeFileSync(file, `${sandbox.apiSecret}\n`, { mode: 0o600 });
    const { GATEWAY_API_SECRET: _direct, ...env } = sandboxEnv(sandbox);
    const ctx = createTestContext(t, { ...env, GATEWAY_API_SECRET_FILE: file });
    rmSync(file);
    const failed = await runSnapshotJob(ctx, { trigger: 'manual' }).catch((error: Error) => error);
    const text = failed instanceof Error ? failed.message : JSON.stringify(failed.accounts);
    expect(text).toContain(`GATEWAY_API_SECRET_FILE (${file}) could not be read: there is no such file`);
    expect(text).not.toContain(sandbox.apiSecret);
  });
});
