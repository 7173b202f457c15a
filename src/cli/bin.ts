import { runCli } from './main.js';

// The process entry point: the only place that exits the process.
const code = await runCli(process.argv);
process.exitCode = code;
