import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_CLUSTER_DIR, BUILT_CLUSTER_STAMP, builtCluster, pgliteVersion, seedFromBuiltCluster } from '../../src/db/embedded-cluster.js';

const root = path.join(import.meta.dirname, '..', '..');
const fresh = () => mkdtempSync(path.join(tmpdir(), 'wr-cluster-'));
const modeOf = (p: string) => statSync(p).mode & 0o777;

/** Every path under `dir` with its kind, sorted. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(prefix, e.name);
    return e.isDirectory() ? [`${rel}/`, ...tree(path.join(dir, e.name), rel)] : [rel];
  }).sort();
}

/** A dist/ folder holding a small stand-in cluster stamped with `version`. */
function fakeDist(version: string | undefined, withVersionFile = true): string {
  const dist = fresh();
  const cluster = path.join(dist, BUILT_CLUSTER_DIR);
  mkdirSync(path.join(cluster, 'base', '1'), { recursive: true, mode: 0o755 });
  writeFileSync(path.join(cluster, 'base', '1', '1259'), 'catalog page', { mode: 0o644 });
  writeFileSync(path.join(cluster, 'postgresql.conf'), '# settings\n', { mode: 0o644 });
  if (withVersionFile) writeFileSync(path.join(cluster, 'PG_VERSION'), '17\n', { mode: 0o644 });
  if (version !== undefined) writeFileSync(path.join(dist, BUILT_CLUSTER_STAMP), JSON.stringify({ pglite: version }));
  return dist;
}

describe('the cluster new embedded databases start from', () => {
  it('is built with the bundle, stamped with the installed PGlite version', () => {
    // The suite's global setup ran the build.
    const dist = path.join(root, 'dist');
    expect(JSON.parse(readFileSync(path.join(dist, BUILT_CLUSTER_STAMP), 'utf8'))).toEqual({ pglite: pgliteVersion() });
    expect(builtCluster()).toBe(path.join(dist, BUILT_CLUSTER_DIR));
    expect(readFileSync(path.join(dist, BUILT_CLUSTER_DIR, 'PG_VERSION'), 'utf8').trim()).toMatch(/^\d+$/);
  });

  it('is not used when another PGlite version made it, when unstamped or when incomplete', () => {
    expect(builtCluster(fakeDist(pgliteVersion()))).toBeDefined();
    expect(builtCluster(fakeDist('0.0.1'))).toBeUndefined();
    expect(builtCluster(fakeDist(undefined))).toBeUndefined();
    expect(builtCluster(fakeDist(pgliteVersion(), false))).toBeUndefined();
  });

  it('is copied into a new folder owner-only, file for file', () => {
    const cluster = builtCluster(fakeDist(pgliteVersion()))!;
    const dataDir = path.join(fresh(), 'data');
    expect(seedFromBuiltCluster(dataDir, cluster)).toBe(true);
    expect(tree(dataDir)).toEqual(tree(cluster));
    for (const entry of tree(dataDir)) {
      expect([entry, modeOf(path.join(dataDir, entry))]).toEqual([entry, entry.endsWith('/') ? 0o700 : 0o600]);
    }
    expect(readFileSync(path.join(dataDir, 'base', '1', '1259'), 'utf8')).toBe('catalog page');
  });

  it('never overwrites a database, and completes a copy cut short (no PG_VERSION yet)', () => {
    const cluster = builtCluster(fakeDist(pgliteVersion()))!;
    const existing = fresh();
    writeFileSync(path.join(existing, 'PG_VERSION'), '17\n');
    writeFileSync(path.join(existing, 'postgresql.conf'), '# mine\n');
    expect(seedFromBuiltCluster(existing, cluster)).toBe(false);
    expect(readFileSync(path.join(existing, 'postgresql.conf'), 'utf8')).toBe('# mine\n');

    const cutShort = fresh();
    mkdirSync(path.join(cutShort, 'base'));
    writeFileSync(path.join(cutShort, 'postgresql.conf'), '# half written');
    expect(seedFromBuiltCluster(cutShort, cluster)).toBe(true);
    expect(tree(cutShort)).toEqual(tree(cluster));
    expect(readFileSync(path.join(cutShort, 'postgresql.conf'), 'utf8')).toBe('# settings\n');
  });
});
