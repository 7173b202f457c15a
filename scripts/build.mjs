// Bundles the CLI into dist/: one start-up module plus a chunk per lazily loaded command, so a
// run reads a handful of files instead of the ~600 modules of its dependencies (Kysely alone is
// 279) — Node 20 has no compile cache, and resolving and reading them was most of a snapshot's
// fixed cost. Type checking stays with `npm run typecheck`.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import path from 'node:path';

const root = path.join(import.meta.dirname, '..');
const outdir = path.join(root, 'dist');

// Loaded from node_modules at run time: PGlite finds its WebAssembly and data files beside its
// own modules; pino-pretty is required only on a terminal; pg-native is an optional addon pg
// only tries.
const external = ['@electric-sql/pglite', '@electric-sql/pglite/*', '@electric-sql/pglite-socket', 'pino-pretty', 'pg-native'];

rmSync(outdir, { recursive: true, force: true });
const result = await build({
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
  metafile: process.argv.includes('--metafile'),
});
if (result.metafile) {
  const { writeFileSync } = await import('node:fs');
  writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
}
