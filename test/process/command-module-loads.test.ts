import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { releaseFolder } from '../helpers/kept-embedded.js';
import { childEnvironment, collect } from '../helpers/run-cli.js';
import { backend, createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

const root = path.join(import.meta.dirname, '..', '..');
const bin = path.join(root, 'bin', 'wallet-recon.js');
const register = path.join(root, 'test', 'helpers', 'module-loads', 'register.mjs');
// Written by scripts/build.mjs (the suite's global setup builds): which sources each chunk holds.
const bundleMeta = path.join(root, 'node_modules', '.cache', 'wallet-recon', 'bundle-meta.json');

interface BundleMeta {
  outputs: Record<string, { inputs: Record<string, unknown> }>;
}

/** Packages and source folders a snapshot, `runs` and a one-date report never call, and what loading each would cost. */
const NEVER_CALLED = ['nodemailer', 'exceljs', 'fastify', 'openid-client', 'pg-boss', 'prom-client', 'saxes', 'cron-parser', 'luxon', 'csv-parse', 'src/console/', 'src/queue/', 'src/books/', 'src/statements/'];

/** The package (or source folder) of a path in the bundle's sources or in node_modules. */
function ownerOf(file: string): string {
  const inModules = file.split('node_modules/');
  if (inModules.length > 1) {
    const parts = inModules.at(-1)!.split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return `${file.split('/').slice(0, 2).join('/')}/`;
}

let t: TestDatabase;
let sandbox: Sandbox;
let env: Record<string, string>;
let scratch: string;
let meta: BundleMeta;

beforeAll(async () => {
  t = await createTestDatabase({ onDisk: true });
  // The commands below open the embedded folder themselves.
  if (backend === 'embedded') await t.handle.close();
  sandbox = await startSandbox({ port: 0, wallets: 1 });
  env = { ...t.childEnv, GATEWAY_ENV: 'sandbox', GATEWAY_SANDBOX_URL: sandbox.url, GATEWAY_API_KEY: sandbox.apiKey, GATEWAY_API_SECRET: sandbox.apiSecret, LOG_LEVEL: 'silent' };
  scratch = mkdtempSync(path.join(tmpdir(), 'wr-loads-'));
  meta = JSON.parse(readFileSync(bundleMeta, 'utf8')) as BundleMeta;
});
afterAll(async () => {
  await sandbox?.close();
  await t?.drop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Runs the built CLI and returns the packages and source folders of every module it loaded. */
async function packagesLoadedBy(args: string[]): Promise<{ code: number | null; stderr: string; packages: Set<string> }> {
  const log = path.join(scratch, `${args[0]}.log`);
  // The worker may still hold the embedded test database open (kept-embedded.ts): a child may not share it.
  await releaseFolder(env.RECON_DATA_DIR);
  const child = spawn(process.execPath, ['--liftoff-only', '--import', register, bin, ...args], {
    cwd: root,
    env: childEnvironment({ ...env, WR_MODULE_LOAD_LOG: log }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { code, stderr } = await collect(child);
  const packages = new Set<string>();
  for (const url of readFileSync(log, 'utf8').split('\n')) {
    if (!url.startsWith('file:')) continue;
    const file = path.relative(root, fileURLToPath(url)).split(path.sep).join('/');
    const chunk = meta.outputs[file];
    // A chunk of the bundle: the packages of the sources in it; anything else, its own.
    for (const source of chunk ? Object.keys(chunk.inputs) : [file]) packages.add(ownerOf(source));
  }
  return { code, stderr, packages };
}

const heavyIn = (packages: Set<string>) => NEVER_CALLED.filter((p) => packages.has(p));

describe('what a command loads', { timeout: 60_000 }, () => {
  it('a one-wallet snapshot loads the gateway client and the database, nothing it never calls', async () => {
    const { code, stderr, packages } = await packagesLoadedBy(['snapshot', '--quiet']);
    expect(code, stderr).toBe(0);
    expect(packages.has('got')).toBe(true);
    expect(heavyIn(packages)).toEqual([]);
    // The schema is current: its check reads the migrations' names, not their code (~150 kB).
    expect([...packages].filter((p) => p.startsWith('migrations/'))).toEqual([]);
  });

  it('runs and a one-date report load neither the senders of notifications nor the gateway client', async () => {
    const runs = await packagesLoadedBy(['runs']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(heavyIn(runs.packages)).toEqual([]);
    expect(runs.packages.has('got')).toBe(false);
    const today = new Date().toISOString().slice(0, 10);
    const report = await packagesLoadedBy(['report', '--date', today]);
    expect(report.stderr).not.toMatch(/error/i);
    expect(heavyIn(report.packages)).toEqual([]);
    expect(report.packages.has('got')).toBe(false);
  });
});
