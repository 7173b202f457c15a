import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { summaryOf } from './command-summaries.js';
import type { CliRuntime } from './runtime.js';

function parsePort(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port ${JSON.stringify(value)} is not a port: use a number from 0 to 65535, such as 8080.`);
  return Number(value);
}

/** `wallet-recon console`: the review console, served until SIGINT or SIGTERM. */
export function registerConsoleCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('console')
    .description(summaryOf('console'))
    .option('--port <port>', 'port to listen on', '8080')
    .option('--host <host>', 'address to listen on (loopback by default: put a TLS reverse proxy in front for others)', '127.0.0.1')
    .addHelpText(
      'after',
      `
Examples:
  wallet-recon users add anna --role preparer
  wallet-recon console                                  http://127.0.0.1:8080/
  RECON_CONSOLE_URL=https://recon.example.com RECON_CONSOLE_TRUST_PROXY=127.0.0.1 wallet-recon console

It uses the same database as the worker (the embedded one through the worker's socket while it runs).
See docs/console.md for roles, sign-off, single sign-on (RECON_OIDC_*) and running behind a reverse proxy.

Exit codes: 0 stopped by SIGINT/SIGTERM, 1 error, 2 usage or configuration error.`,
    )
    .action(async (opts: { port: string; host: string }) => {
      const port = parsePort(opts.port);
      runtime.exitOnSignal = false;
      runtime.logFd = 1;
      runtime.defaultLogLevel = 'info';
      await runtime.withContext('wallet-recon console', {}, async (ctx) => {
        // Fastify and the pages are loaded only by this command: other commands start as fast as before.
        const { startConsole } = await import('../console/start-console.js');
        const server = await startConsole(ctx, { host: opts.host, port });
        runtime.output.out(`The review console listens on ${server.url} (stop with Ctrl-C).`);
        await new Promise<void>((resolve) => {
          if (runtime.signal.aborted) resolve();
          runtime.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        await server.close();
        return 0;
      });
    });
}
