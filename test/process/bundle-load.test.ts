import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(import.meta.dirname, '..', '..');

/**
 * What a fresh process has loaded after evaluating every chunk of the bundle (the suite's global
 * setup built dist/; the start module would run the CLI, so it stays out): Node's internal
 * modules, and how many TLS sockets were made meanwhile (counted by a stand-in class).
 */
function loadedByTheBundle(): { internal: string[]; tlsSockets: number } {
  const script = [
    "import { readdirSync } from 'node:fs';",
    "import tls from 'node:tls';",
    'let tlsSockets = 0;',
    'tls.TLSSocket = class extends tls.TLSSocket { constructor(...args) { super(...args); tlsSockets++; } };',
    'const before = new Set(process.moduleLoadList);',
    "for (const f of readdirSync('dist/chunks')) await import(`./dist/chunks/${f}`);",
    'const internal = process.moduleLoadList.filter((m) => !before.has(m));',
    'process.stdout.write(JSON.stringify({ internal, tlsSockets }));',
  ].join('\n');
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })) as { internal: string[]; tlsSockets: number };
}

describe('the bundle (scripts/build.mjs)', () => {
  const loaded = loadedByTheBundle();

  it('leaves got\'s HTTP/2 module unloaded until a request asks for HTTP/2 (its load opens a TLS socket)', () => {
    expect(loaded.internal.length).toBeGreaterThan(20);
    expect(loaded.tlsSockets).toBe(0);
  });

  // Node 21+ has `navigator`, so pg answers its Cloudflare question without a Response there.
  it.runIf(Number(process.versions.node.split('.')[0]) === 20)('does not load the fetch implementation for pg\'s Cloudflare probe on Node 20', () => {
    expect(loaded.internal.filter((m) => m.includes('undici'))).toEqual([]);
  });
});

/** Whether loading the configuration (as every command does) loads cron-parser, in a fresh process. */
function configLoadsCronParser(schedule: string | undefined): boolean {
  const script = [
    "import { createRequire } from 'node:module';",
    "const { loadConfig } = await import('./src/config/index.ts');",
    `loadConfig({ env: ${JSON.stringify(schedule === undefined ? {} : { RECON_SCHEDULE: schedule })}, ignoreDotEnv: true });`,
    "const cache = Object.keys(createRequire(import.meta.url).cache);",
    "process.stdout.write(JSON.stringify(cache.some((m) => /[\\\\/]node_modules[\\\\/](cron-parser|luxon)[\\\\/]/.test(m))));",
  ].join('\n');
  return JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })) as boolean;
}

describe('cron-parser and luxon', { timeout: 60_000 }, () => {
  it('are not in the bundle: they load from node_modules when a schedule is walked', () => {
    for (const f of readdirSync(path.join(root, 'dist', 'chunks'))) {
      expect(readFileSync(path.join(root, 'dist', 'chunks', f), 'utf8'), f).not.toMatch(/luxon|class CronExpressionParser/);
    }
  });

  it('are not loaded by the configuration of a command that never schedules (the default or a plain daily RECON_SCHEDULE)', () => {
    expect(configLoadsCronParser(undefined)).toBe(false);
    expect(configLoadsCronParser('30 2 * * *')).toBe(false);
    // Anything beyond a plain daily time gets cron-parser's full check.
    expect(configLoadsCronParser('*/5 * * * 1-5')).toBe(true);
  });
});
