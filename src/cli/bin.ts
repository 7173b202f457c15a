import { runCli } from './main.js';

// The process entry point: the only place that handles signals and sets the exit code.
const controller = new AbortController();
const shutdown = { forceExitAfterMs: 9_500 };
let signals = 0;
const onSignal = (signal: NodeJS.Signals) => {
  signals++;
  if (signals > 1) {
    process.stderr.write(`Second ${signal}: exiting now.\n`);
    process.exit(signal === 'SIGTERM' ? 143 : 130);
  }
  process.stderr.write(`${signal} received: stopping.\n`);
  controller.abort(new Error(signal));
  // The run must be recorded and the process gone in bounded time, whatever hangs.
  setTimeout(() => {
    process.stderr.write(`Shutdown took longer than ${shutdown.forceExitAfterMs} ms: exiting.\n`);
    process.exit(1);
  }, shutdown.forceExitAfterMs).unref();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
// `wallet-recon report | head`: when the reader goes away, stop quietly instead of crashing on EPIPE.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

const code = await runCli(process.argv, { signal: controller.signal, shutdown });
process.exitCode = code;
