import type { AppContext } from '../app-context.js';
import { systemClock, type Clock } from '../clock.js';
import { copyEnvironment, loadConfig, removeSecretsFromEnvironment, userDataRoot, type Config } from '../config/index.js';
import { createLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Output } from './output.js';

/** What command actions share: lazily loaded config and logger, a way to run with a context, the exit code. */
export interface CliRuntime {
  readonly output: Output;
  config(): Config;
  logger(): Logger;
  /** Opens the context, runs `fn`, always closes; the number returned becomes the exit code. */
  withContext(command: string, options: ContextOptions, fn: (ctx: AppContext) => Promise<number>): Promise<void>;
  exitCode: number;
  /** Where logs go: stderr for commands that print results, stdout for the long-running worker. */
  logFd: 1 | 2;
  /** Log level when LOG_LEVEL is not set: info, or warn for commands whose output is the point. */
  defaultLogLevel: string;
  /** Where commands take "now" from (a fixed clock in tests). */
  readonly clock: Clock;
  /** Aborted when the process receives SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** How long after a stop signal the process may take before it is ended by force. */
  readonly shutdown: ShutdownBudget;
  /**
   * Whether a stop signal makes the exit code 130 (SIGINT) or 143 (SIGTERM): true for commands
   * a signal interrupts; the worker, for which SIGTERM is the normal way to stop, exits 0.
   */
  exitOnSignal: boolean;
}

export interface ContextOptions {
  migrate?: 'auto' | 'never';
  configOverrides?: Record<string, string | undefined>;
  /**
   * The command needs the embedded database to itself: it captures (account locks live in the
   * process that holds the database) or migrates. Every other command, while another process
   * serves the embedded database (the worker), works through that process's socket.
   */
  exclusive?: boolean;
  /** Serve the embedded database to other processes while this command holds it (the worker). */
  serve?: boolean;
  /** The command checks the configuration against the database's calendar itself (the worker refuses to start). */
  ownCalendarCheck?: boolean;
}

export interface ContextOptions {
  migrate?: 'auto' | 'never';
  configOverrides?: Record<string, string | undefined>;
  /**
   * A one-shot batch command: its metrics are pushed under this job name to RECON_PUSHGATEWAY_URL
   * when that is set, after the command ran (failed or not).
   */
  pushJob?: string;
}

export interface ShutdownBudget {
  forceExitAfterMs: number;
}

export function createCliRuntime(
  output: Output,
  env: NodeJS.ProcessEnv | undefined,
  signal: AbortSignal = new AbortController().signal,
  shutdown: ShutdownBudget = { forceExitAfterMs: 9_500 },
  clock?: Clock,
): CliRuntime {
  let config: Config | undefined;
  let logger: Logger | undefined;
  // Every load reads this copy: the secrets are removed from the environment itself after the first.
  const source = copyEnvironment(env);
  const runtime: CliRuntime = {
    output,
    exitCode: 0,
    logFd: 2,
    // By hand on a terminal the progress line, the summary and the one-line error tell the
    // story (a log line would only repeat them); piped or scheduled, every run's info lines are
    // the record.
    defaultLogLevel: process.stderr.isTTY ? 'fatal' : 'info',
    signal,
    shutdown,
    clock: clock ?? systemClock,
    exitOnSignal: true,
    config() {
      if (config === undefined) {
        config = loadConfig({ env: source });
        removeSecretsFromEnvironment(config, env);
        // Said once, on stderr like the data directory's notice: stdout stays clean to pipe, and a
        // terminal's default log level (fatal) would hide a log line.
        for (const warning of config.warnings) output.err(`Warning: ${warning}`);
      }
      return config;
    },
    logger() {
      // Logs go to stderr so a command's stdout (tables, JSON, CSV) stays clean to pipe.
      const config = runtime.config();
      logger ??= createLogger({ level: config.logLevelSet ? config.logLevel : runtime.defaultLogLevel, fd: runtime.logFd });
      return logger;
    },
    async withContext(command, options, fn) {
      const config = options.configOverrides ? loadConfig({ env: source, overrides: options.configOverrides }) : runtime.config();
      const checkoutNotice = config.databaseUrl === undefined && config.dataDirSource === 'checkout';
      if (checkoutNotice) {
        output.err(`Using the embedded database in ${config.dataDir}, found in this folder (new installations keep it in ${userDataRoot()}; set RECON_DATA_DIR to choose).`);
      }
      // Loaded here, not at start: the database driver and Kysely are a good part of a command's
      // start-up, and a snapshot sends its first gateway requests before it needs them.
      const { createAppContext } = await import('../app-context.js');
      const opened = await createAppContext({ config, logger: runtime.logger(), command, migrate: options.migrate, clock, serve: options.serve, shareIfServed: options.exclusive !== true });
      // Run from another folder, a command would otherwise use another database without a word
      // (the checkout's notice above already named it).
      if (!checkoutNotice) (output.database ?? output.err)(`Database: ${opened.database.description}`);
      if (opened.calendarDifferences?.length && options.ownCalendarCheck !== true) {
        const { followedCalendarWarning } = await import('../business-date/stored-calendar.js');
        output.err(`Warning: ${followedCalendarWarning(opened.config, opened.calendarDifferences)}`);
      }
      const pushUrl = options.pushJob === undefined ? undefined : config.metrics.pushgatewayUrl;
      // prom-client is loaded only when there is somewhere to push to.
      const metrics: Metrics | undefined =
        pushUrl === undefined
          ? undefined
          : new (await import('../metrics/metrics.js')).Metrics({ perAccount: config.metrics.perAccount, accounts: config.accounts.map((a) => a.name), bankAccounts: config.bankAccounts.map((b) => b.name), processDefaults: false, db: opened.database.db });
      const ctx: AppContext = metrics === undefined ? opened : { ...opened, metrics };
      try {
        runtime.exitCode = await fn(ctx);
      } finally {
        try {
          if (metrics !== undefined) await (await import('../metrics/push-metrics.js')).pushMetrics({ url: pushUrl!, job: `wallet_recon_${options.pushJob}`, metrics, logger: ctx.logger });
        } finally {
          await ctx.close();
        }
      }
    },
  };
  return runtime;
}
