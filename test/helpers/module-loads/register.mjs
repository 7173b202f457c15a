// Preloaded with `node --import` by test/process/command-module-loads.test.ts: records the URL
// of every ES module the process loads (the bundle's chunks, and packages imported from
// node_modules) into the file WR_MODULE_LOAD_LOG names.
import { register } from 'node:module';

register(new URL('./hooks.mjs', import.meta.url));
