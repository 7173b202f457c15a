import { execFileSync } from 'node:child_process';
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
