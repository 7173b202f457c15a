import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseDuration } from '../business-date/duration.js';
import { loadSandboxSecret, SANDBOX_SECRET_VARIABLE } from '../config/index.js';
import { ReconError, UsageError } from '../errors.js';
import { MAX_PER_PAGE, SANDBOX_DEFAULTS, startSandbox, type Sandbox, type SandboxOptions } from '../sandbox/index.js';
import { checkSandboxNumber, type NumericSandboxOption } from '../sandbox/sandbox-options.js';
import { summaryOf } from './command-summaries.js';

/** Where the command prints and what stops it; tests pass their own, the CLI uses stdout and signals. */
export interface SandboxCommandIo {
  write?: (text: string) => void;
  /** Stops the sandbox like SIGINT would. */
  stop?: AbortSignal;
  /** Called once the sandbox listens, with the running instance. */
  onListening?: (sandbox: Sandbox) => void;
  /** Where SANDBOX_API_SECRET(_FILE) is read; the process environment by default. */
  env?: NodeJS.ProcessEnv;
}

/** The raw option values commander hands the action (strings, validated by parseSandboxFlags). */
export interface SandboxFlags {
  port: string;
  host: string;
  apiKey: string;
  /** Refused: kept only to say where the secret goes instead. */
  apiSecret?: string;
  wallets: string;
  seed: string;
  postsPerPage: string;
  tokenTtl: string;
  latencyMs: string;
  failRate: string;
  rateLimit: string;
  dropRate: string;
  outage: string;
  /** --wallet CODE=BALANCE, repeatable: a wallet given its exact balance (set, or added). */
  wallet?: string[];
}

/** `--wallet IDR=150000000`: a currency code and an exact integer balance, as the gateway sends it. */
export function parseWalletFlag(value: string, previous: string[] = []): string[] {
  if (!/^[A-Z]{3}=-?\d{1,38}$/.test(value)) {
    throw new InvalidArgumentError(`must be CODE=BALANCE with a three-letter currency code and a whole number, such as IDR=150000000 (got "${value}")`);
  }
  return [...previous, value];
}

const NUMERIC_FLAGS: ReadonlyArray<{ flag: string; key: keyof SandboxFlags; option: NumericSandboxOption }> = [
  { flag: '--port', key: 'port', option: 'port' },
  { flag: '--wallets', key: 'wallets', option: 'wallets' },
  { flag: '--seed', key: 'seed', option: 'seed' },
  { flag: '--posts-per-page', key: 'postsPerPage', option: 'postsPerPage' },
  { flag: '--token-ttl', key: 'tokenTtl', option: 'tokenTtlSeconds' },
  { flag: '--latency-ms', key: 'latencyMs', option: 'latencyMs' },
  { flag: '--fail-rate', key: 'failRate', option: 'failRate' },
  { flag: '--rate-limit', key: 'rateLimit', option: 'rateLimit' },
  { flag: '--drop-rate', key: 'dropRate', option: 'dropRate' },
];

function readNumber(flag: string, option: NumericSandboxOption, text: string): number {
  const value = /^\s*-?(\d+\.?\d*|\.\d+)\s*$/.test(text) ? Number(text) : Number.NaN;
  const problem = checkSandboxNumber(option, value);
  if (problem) throw new UsageError(`${flag} ${problem} (got "${text}")`);
  return value;
}

/**
 * Turns the flags into sandbox options, refusing the first invalid one by its flag name. The
 * secret comes from SANDBOX_API_SECRET or SANDBOX_API_SECRET_FILE (`secret`), never from argv.
 */
export function parseSandboxFlags(flags: SandboxFlags, secret?: string): SandboxOptions {
  if (flags.apiSecret !== undefined) {
    throw new UsageError(
      `--api-secret is not accepted: a secret on the command line is visible to every user of the machine (ps). Set ${SANDBOX_SECRET_VARIABLE}, or ${SANDBOX_SECRET_VARIABLE}_FILE to the path of a file holding it.`,
    );
  }
  const numbers = Object.fromEntries(NUMERIC_FLAGS.map(({ flag, key, option }) => [option, readNumber(flag, option, String(flags[key]))]));
  for (const [flag, value] of [['--host', flags.host], ['--api-key', flags.apiKey]] as const) {
    if (value.trim() === '') throw new UsageError(`${flag} must not be empty`);
  }
  const outageMs = parseDuration(String(flags.outage));
  if (outageMs === undefined) throw new UsageError(`--outage must be a duration such as 0s, 40s, 5m or 1h (got "${flags.outage}")`);
  const outageProblem = checkSandboxNumber('outageMs', outageMs);
  if (outageProblem) throw new UsageError(`--outage ${outageProblem} (got "${flags.outage}")`);
  return { ...numbers, outageMs, host: flags.host, apiKey: flags.apiKey, apiSecret: secret ?? SANDBOX_DEFAULTS.apiSecret };
}

function shellQuote(value: string): string {
  return /^[A-Za-z0-9_.:/@%+=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

function describeFaults(options: SandboxOptions): string {
  const parts = [
    options.latencyMs ? `latency ${options.latencyMs} ms` : '',
    options.failRate ? `fail rate ${options.failRate}` : '',
    options.rateLimit ? `rate limit ${options.rateLimit}/s` : '',
    options.dropRate ? `drop rate ${options.dropRate}` : '',
    options.outageMs ? `outage (every request 503) for ${options.outageMs / 1000} s after start` : '',
  ].filter(Boolean);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

function describeStartError(error: unknown, options: SandboxOptions): ReconError {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${options.host}:${options.port}`;
  if (code === 'EADDRINUSE') return new ReconError(`${where} is already in use; pass another --port, or --port 0 for any free port.`, { cause: error });
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new ReconError(`Cannot listen on ${where}: no such local address; pass --host 127.0.0.1 or another local address.`, { cause: error });
  }
  return new ReconError(`Cannot start the sandbox on ${where}: ${(error as Error).message}`, { cause: error });
}

function waitForStop(stop: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      process.off('SIGINT', finish);
      process.off('SIGTERM', finish);
      stop?.removeEventListener('abort', finish);
      resolve();
    };
    process.once('SIGINT', finish);
    process.once('SIGTERM', finish);
    if (stop?.aborted) finish();
    else stop?.addEventListener('abort', finish, { once: true });
  });
}

/** `wallet-recon sandbox`: serves the gateway interface locally until interrupted. */
export function registerSandboxCommand(program: Command, io: SandboxCommandIo = {}): void {
  const write = io.write ?? ((text: string) => void process.stdout.write(text));
  const d = SANDBOX_DEFAULTS;
  program
    .command('sandbox')
    .description(summaryOf('sandbox'))
    .option('--port <port>', 'port to listen on, 0 for any free port', String(d.port))
    .option('--host <host>', 'interface to listen on', d.host)
    .option('--api-key <key>', 'API key clients must send', d.apiKey)
    .addOption(new Option('--api-secret <secret>').hideHelp())
    .option('--wallets <count>', 'number of wallets: ISO 4217 codes first, then synthetic AAA, AAB…', String(d.wallets))
    .option('--wallet <CODE=BALANCE>', 'a wallet with this exact integer balance, set or added (repeatable), e.g. IDR=150000000', parseWalletFlag)
    .option('--seed <seed>', 'seed of the balances and of the fault decisions', String(d.seed))
    .option('--posts-per-page <n>', `page size when per_page is omitted (per_page is at most ${MAX_PER_PAGE})`, String(d.postsPerPage))
    .option('--token-ttl <seconds>', 'access token lifetime in seconds', String(d.tokenTtlSeconds))
    .option('--latency-ms <ms>', 'delay added before every answer', '0')
    .option('--fail-rate <p>', 'probability (0..1) of answering 500, 502 or 503', '0')
    .option('--rate-limit <rps>', 'requests per second allowed before answering 429 (0 = unlimited)', '0')
    .option('--drop-rate <p>', 'probability (0..1) of resetting the connection without answering', '0')
    .option('--outage <duration>', 'answer every request with 503 for this long after start (e.g. 40s, 5m)', '0s')
    .addHelpText(
      'after',
      '\nExample:\n  wallet-recon sandbox --port 4010 --wallets 40 --fail-rate 0.1\n' +
        '  SANDBOX_API_SECRET_FILE=./sandbox-secret wallet-recon sandbox --port 0 --rate-limit 5 --latency-ms 200\n' +
        '  wallet-recon sandbox --outage 40s        a gateway that is down for the first 40 seconds\n' +
        '  wallet-recon sandbox --wallets 0 --wallet IDR=150000000   one rupiah wallet with this balance\n\n' +
        `The API secret clients must send in Secret-Key comes from ${SANDBOX_SECRET_VARIABLE} or ${SANDBOX_SECRET_VARIABLE}_FILE\n` +
        `(a file holding it), never from the command line; default: "${d.apiSecret}" (public).`,
    )
    .action(async (flags: SandboxFlags) => {
      const secret = loadSandboxSecret({ env: io.env });
      const options = parseSandboxFlags(flags, secret);
      const secretIsDefault = secret === undefined;
      let sandbox: Sandbox;
      try {
        sandbox = await startSandbox(options);
      } catch (error) {
        throw describeStartError(error, options);
      }
      for (const wallet of flags.wallet ?? []) {
        const [currency, balance] = wallet.split('=') as [string, string];
        if (sandbox.wallets.some((w) => w.currency === currency)) sandbox.setBalance(currency, BigInt(balance));
        else sandbox.addWallet(currency, BigInt(balance));
      }
      const secretEnv = secretIsDefault ? shellQuote(sandbox.apiSecret) : `<the value of ${SANDBOX_SECRET_VARIABLE}>`;
      write(
        [
          `Sandbox gateway listening on ${sandbox.url}`,
          `  API key:     ${sandbox.apiKey}`,
          `  API secret:  ${secretIsDefault ? `${sandbox.apiSecret} (the public default)` : `set by ${SANDBOX_SECRET_VARIABLE} or ${SANDBOX_SECRET_VARIABLE}_FILE (not printed)`}`,
          `  Wallets:     ${sandbox.wallets.length} (seed ${options.seed}${flags.wallet === undefined ? '' : `; given: ${flags.wallet.join(', ')}`})`,
          `  Page size:   ${options.postsPerPage} by default, per_page up to ${MAX_PER_PAGE}`,
          `  Tokens:      valid for ${options.tokenTtlSeconds} s`,
          `  Faults:      ${describeFaults(options)}`,
          '',
          'Point wallet-recon at it with:',
          `  GATEWAY_ENV=sandbox GATEWAY_SANDBOX_URL=${sandbox.url} GATEWAY_API_KEY=${shellQuote(sandbox.apiKey)} GATEWAY_API_SECRET=${secretEnv}`,
          '',
          'Press Ctrl+C to stop.',
          '',
        ].join('\n'),
      );
      io.onListening?.(sandbox);
      await waitForStop(io.stop);
      await sandbox.close();
      write('Sandbox stopped.\n');
    });
}
