// Bundles the CLI into dist/: one start-up module plus a chunk per lazily loaded command, so a
// run reads a handful of files instead of the ~600 modules of its dependencies (Kysely alone is
// 279) — Node 20 has no compile cache, and resolving and reading them was most of a snapshot's
// fixed cost. Type checking stays with `npm run typecheck`.
import { build } from 'esbuild';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
const outdir = path.join(root, 'dist');
const BUNDLE_META = path.join(root, 'node_modules', '.cache', 'wallet-recon', 'bundle-meta.json');

// Loaded from node_modules at run time: PGlite finds its WebAssembly and data files beside its
// own modules; pino-pretty is required only on a terminal; pg-native is an optional addon pg
// only tries.
// pg-boss is loaded only by a worker or `queue` on a server, from node_modules: bundled, its cron-parser and
// luxon would sit in a chunk every command reads.
// pdfkit reads its standard fonts' metrics from files beside its own module.
const external = ['@electric-sql/pglite', '@electric-sql/pglite/*', '@electric-sql/pglite-socket', 'pino-pretty', 'pg-native', 'pg-boss', 'pdfkit'];

// The bundle is made anew; the embedded cluster below is kept while PGlite's version stays.
rmSync(path.join(outdir, 'chunks'), { recursive: true, force: true });
rmSync(path.join(outdir, 'wallet-recon.mjs'), { force: true });
/**
 * Two dependencies do costly work when loaded, for features this CLI never uses; the bundle
 * defers it (measured on Node 20, a one-wallet snapshot's start):
 * - got imports http2-wrapper, which creates a TLS socket at load to find an internal class:
 *   Node then loads its root certificates (~50 ms) even for a plain-HTTP gateway. got needs the
 *   module only with its `http2` option, which wallet-recon never sets: it is loaded at first use.
 * - pg asks whether it runs on Cloudflare Workers by constructing a `Response`, which on Node 20
 *   (no `navigator`) loads the whole fetch implementation (~30 ms). On Node the answer is always
 *   no: the check is skipped.
 */
const deferCostlyLoads = {
  name: 'defer-costly-loads',
  setup(b) {
    b.onResolve({ filter: /^http2-wrapper$/ }, (args) =>
      args.namespace === 'lazy-http2' ? { path: 'http2-wrapper', external: true } : { path: 'http2-wrapper', namespace: 'lazy-http2' },
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-http2' }, () => ({
      contents:
        "const load = () => require('http2-wrapper');\n" +
        'export default { get auto() { return load().auto; }, get globalAgent() { return load().globalAgent; } };\n',
      loader: 'js',
      resolveDir: root,
    }));
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: path.join(args.resolveDir, '..', 'locales', 'index.js'), namespace: 'zod-english' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-english' }, (args) => ({
      contents: "export { default as en } from './en.js';\n",
      loader: 'js',
      resolveDir: path.dirname(args.path),
    }));
    b.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const check = "if (typeof Response === 'function') {";
      if (!source.includes(check)) throw new Error(`pg's Cloudflare check changed in ${args.path}: review the defer-costly-loads plugin in scripts/build.mjs`);
      return { contents: source.replace(check, 'if (false) {'), loader: 'js' };
    });
  },
};

const result = await build({
  plugins: [deferCostlyLoads],
  absWorkingDir: root,
  entryPoints: { 'wallet-recon': 'src/cli/bin.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  outExtension: { '.js': '.mjs' },
  chunkNames: 'chunks/[name]-[hash]',
  external,
  // CommonJS dependencies inside an ES module bundle still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  legalComments: 'none',
  // Less to read and parse at every start (~40 ms of CPU measured); names stay, so stacks read.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  metafile: true,
});
// Which sources each chunk holds, for the test that checks what a command loads
// (test/process/command-module-loads.test.ts); kept out of dist/, which is shipped.
mkdirSync(path.dirname(BUNDLE_META), { recursive: true });
writeFileSync(BUNDLE_META, JSON.stringify(result.metafile));
if (process.argv.includes('--metafile')) {
  writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
}

await buildEmbeddedCluster();

/**
 * An initialised PostgreSQL cluster for new embedded databases to start from
 * (src/db/embedded-cluster.ts): PGlite's initdb costs 3-4 s of CPU, paid here once per PGlite
 * version instead of at the first run of every new database. The stamp names the version; the
 * files stay readable by all (the image runs as another user), copies are made owner-only.
 */
async function buildEmbeddedCluster() {
  const cluster = path.join(outdir, 'embedded-cluster');
  const stampFile = path.join(outdir, 'embedded-cluster.json');
  // The version and the stamp check are those of pgliteVersion() and builtCluster() in
  // src/db/embedded-cluster.ts, which this plain script cannot import: change them together.
  let dir = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  const version = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  try {
    if (JSON.parse(readFileSync(stampFile, 'utf8')).pglite === version && existsSync(path.join(cluster, 'PG_VERSION'))) return;
  } catch {
    // No stamp yet: build.
  }
  rmSync(stampFile, { force: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const building = mkdtempSync(path.join(outdir, '.embedded-cluster-'));
  try {
    const pglite = await PGlite.create(building);
    await pglite.close();
    readableByAll(building);
    rmSync(cluster, { recursive: true, force: true });
    renameSync(building, cluster);
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  writeFileSync(stampFile, `${JSON.stringify({ pglite: version })}\n`);
}

/** Folders 0755, files 0644: PGlite writes 0666 files, mkdtemp makes a 0700 folder. */
function readableByAll(folder) {
  chmodSync(folder, 0o755);
  for (const entry of readdirSync(folder, { recursive: true, withFileTypes: true })) {
    chmodSync(path.join(entry.parentPath, entry.name), entry.isDirectory() ? 0o755 : 0o644);
  }
}
