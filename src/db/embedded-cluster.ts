import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * A new embedded database starts as a copy of the cluster `npm run build` initialised
 * (dist/embedded-cluster) instead of running PGlite's initdb, which takes 3-4 s of CPU at the
 * first run of every new database (the demo, a new data directory). PGlite's own initdb does
 * the same: it initialises a cluster in memory and copies it into the folder. The copy is used
 * only when it was made by the PGlite version loaded now; otherwise PGlite runs initdb as before.
 */
export const BUILT_CLUSTER_DIR = 'embedded-cluster';
/** Beside the cluster, not in it: which PGlite made it. */
export const BUILT_CLUSTER_STAMP = 'embedded-cluster.json';

/**
 * The built cluster folder for the loaded PGlite, or undefined (not built, or built by another
 * version). `dist` is this package's dist/ unless a test names another.
 */
export function builtCluster(dist = findDist(import.meta.dirname)): string | undefined {
  if (dist === undefined) return undefined;
  let stamp: unknown;
  try {
    stamp = JSON.parse(readFileSync(path.join(dist, BUILT_CLUSTER_STAMP), 'utf8'));
  } catch {
    return undefined;
  }
  const cluster = path.join(dist, BUILT_CLUSTER_DIR);
  const made = (stamp as { pglite?: unknown } | null)?.pglite;
  return made === pgliteVersion() && existsSync(path.join(cluster, 'PG_VERSION')) ? cluster : undefined;
}

/**
 * Copies the built cluster into `dataDir` when the folder holds no database yet, every folder
 * 0700 and every file 0600 (the cluster in dist/ stays readable by the user the image runs as).
 * Returns whether it did; the caller holds the folder's lock.
 */
export function seedFromBuiltCluster(dataDir: string, cluster?: string): boolean {
  // An existing database (every open but the first) is told by one stat, before the stamp is read.
  if (existsSync(path.join(dataDir, 'PG_VERSION'))) return false;
  const source = cluster ?? builtCluster();
  if (source === undefined) return false;
  copyOwnerOnly(source, dataDir);
  return true;
}

function copyOwnerOnly(from: string, to: string): void {
  copyTree(from, to, 'PG_VERSION');
  // Last: a copy cut short is not taken for a database at the next start, and is copied again.
  copyFile(path.join(from, 'PG_VERSION'), path.join(to, 'PG_VERSION'));
}

function copyTree(from: string, to: string, skip?: string): void {
  mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.name === skip) continue;
    if (entry.isDirectory()) copyTree(path.join(from, entry.name), path.join(to, entry.name));
    else if (entry.isFile()) copyFile(path.join(from, entry.name), path.join(to, entry.name));
  }
}

function copyFile(source: string, target: string): void {
  copyFileSync(source, target);
  chmodSync(target, 0o600);
}

/** dist/ of this package: beside src/ when running from the sources, the bundle's own folder when built. */
function findDist(start: string): string | undefined {
  let dir = start;
  for (let i = 0; i < 4; i++) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist');
    dir = path.dirname(dir);
  }
  return undefined;
}

let version: string | undefined;

/** The installed PGlite's version (its package.json is not exported: read beside the module it resolves to). */
export function pgliteVersion(): string {
  if (version !== undefined) return version;
  let dir = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  version = String((JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: unknown }).version);
  return version;
}
