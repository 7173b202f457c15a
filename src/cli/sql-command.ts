import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { sql } from 'kysely';
import type { AppContext } from '../app-context.js';
import { embeddedSocketConfig } from '../db/open-database.js';
import { ReconError } from '../errors.js';
import type { CliRuntime } from './runtime.js';
import { summaryOf } from './command-summaries.js';

/** libpq environment for a connection: psql reads it, and nothing of it shows in `ps`. */
export function psqlEnvironment(ctx: Pick<AppContext, 'config'>): Record<string, string> {
  const url = ctx.config.databaseUrl?.reveal();
  const options = { PGOPTIONS: businessCalendarOptions(ctx.config) };
  if (url === undefined) {
    const socket = embeddedSocketConfig(ctx.config.dataDir);
    return { PGHOST: socket.host, PGPORT: String(socket.port), PGUSER: socket.user, PGDATABASE: socket.database, ...options };
  }
  const parsed = new URL(url);
  const env: Record<string, string> = {
    PGHOST: parsed.hostname,
    PGPORT: parsed.port || '5432',
    PGDATABASE: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || 'postgres',
  };
  if (parsed.username) env.PGUSER = decodeURIComponent(parsed.username);
  if (parsed.password) env.PGPASSWORD = decodeURIComponent(parsed.password);
  return { ...env, ...options };
}

/**
 * The session settings that give SQL the tool's business calendar (`wallet_recon.timezone`,
 * `wallet_recon.cutoff`): `open_cases.age_days` counts to the current business date with them,
 * as every page and report of the tool does. In libpq's PGOPTIONS syntax (spaces escaped).
 */
export function businessCalendarOptions(config: Pick<AppContext['config'], 'timezone' | 'cutoff'>): string {
  const escape = (value: string) => value.replace(/[\\ ]/g, (c) => `\\${c}`);
  return `-c wallet_recon.timezone=${escape(config.timezone)} -c wallet_recon.cutoff=${escape(config.cutoff)}`;
}

/** A connection string to print: never the password (it stays where it was configured). */
export function describeConnection(env: Record<string, string>): string {
  const host = env.PGHOST!.startsWith('/') ? `?host=${encodeURIComponent(env.PGHOST!)}` : '';
  const authority = env.PGHOST!.startsWith('/') ? '' : `${env.PGHOST}:${env.PGPORT}`;
  const user = env.PGUSER === undefined ? '' : `${encodeURIComponent(env.PGUSER)}@`;
  return `postgresql://${user}${authority}/${encodeURIComponent(env.PGDATABASE!)}${host}${host ? `&port=${env.PGPORT}` : ''}`;
}

function runPsql(env: Record<string, string>, signal: AbortSignal): Promise<number | 'missing'> {
  return new Promise((resolve, reject) => {
    // psql gets the user's own environment (PATH, PAGER, locale; the secret variables were removed
    // from it when the configuration was read) plus the connection, never on its command line.
    // The user's own PGOPTIONS are kept, the business calendar's added after them.
    // eslint-disable-next-line no-restricted-properties
    const inherited: NodeJS.ProcessEnv = process.env;
    const options = [inherited.PGOPTIONS, env.PGOPTIONS].filter((o) => o !== undefined && o.trim() !== '').join(' ');
    const child = spawn('psql', [], { stdio: 'inherit', env: { ...inherited, ...env, ...(options === '' ? {} : { PGOPTIONS: options }) } });
    const stop = () => child.kill('SIGTERM');
    signal.addEventListener('abort', stop, { once: true });
    child.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? resolve('missing') : reject(error)));
    child.on('exit', (code) => {
      signal.removeEventListener('abort', stop);
      resolve(code ?? 1);
    });
  });
}

/** `wallet-recon sql`: psql on the configured database, the embedded one included (served on its socket meanwhile). */
export function registerSqlCommand(program: Command, runtime: CliRuntime): void {
  program
    .command('sql')
    .description(summaryOf('sql'))
    .option('--print', 'print the connection string instead of starting psql (embedded: serve the database until Ctrl+C)')
    .addHelpText(
      'after',
      '\nThe embedded database is served on a Unix socket in its folder, which only its owner can open: by the running\n' +
        '"wallet-recon schedule", or by this command while psql (or, with --print, until Ctrl+C) runs. The password of\n' +
        'DATABASE_URL is handed to psql in its environment, never printed.\n\nExample:\n  wallet-recon sql\n  wallet-recon sql --print',
    )
    .action(async (opts: { print?: boolean }) => {
      runtime.exitOnSignal = false;
      await runtime.withContext('wallet-recon sql', { serve: true }, async (ctx) => {
        const env = psqlEnvironment(ctx);
        // The embedded database is one session that every client of its socket shares, and it
        // ignores PGOPTIONS: the business calendar is set on that session instead.
        if (ctx.database.kind === 'embedded') {
          await sql`select set_config('wallet_recon.timezone', ${ctx.config.timezone}, false), set_config('wallet_recon.cutoff', ${ctx.config.cutoff}, false)`.execute(ctx.database.db);
        }
        const connection = describeConnection(env);
        const servedHere = ctx.database.socketPath !== undefined;
        if (opts.print) {
          runtime.output.out(connection);
          if (!servedHere) return 0;
          runtime.output.err('Serving the embedded database on its socket until Ctrl+C.');
          await new Promise<void>((resolve) => {
            if (runtime.signal.aborted) resolve();
            runtime.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          return 0;
        }
        if (ctx.config.databaseUrl === undefined && !servedHere && !ctx.database.shared) {
          throw new ReconError(`The embedded database in ${ctx.config.dataDir} could not be served on a socket (its folder path is too long for one); set RECON_DATA_DIR to a shorter path.`);
        }
        const outcome = await runPsql(env, runtime.signal);
        if (outcome === 'missing') {
          runtime.output.err(`psql is not installed. Connect with any PostgreSQL client to: ${connection}${env.PGPASSWORD === undefined ? '' : ' (password: the one in DATABASE_URL)'}`);
          return 1;
        }
        return outcome;
      });
    });
}
