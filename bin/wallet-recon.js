#!/usr/bin/env node
// The bundle lands in dist/ during `npm ci` (the prepare script); say so if it is missing.
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22.1+ keeps compiled modules on disk between runs (no secrets: code only); Node 20 has no cache.
module.enableCompileCache?.();

const entry = new URL('../dist/wallet-recon.mjs', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('wallet-recon is not built yet: run "npm run build" (npm ci does it for you).\n');
  process.exit(1);
}
await import(entry.href);
