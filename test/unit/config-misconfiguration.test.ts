import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';

// Settings that are wrong without being refused used to be ignored without a word: a broken
// .env line, a misspelt name, a single account's key beside an accounts file, a relative data
// directory, a page size the gateway refuses.

const folder = () => mkdtempSync(path.join(tmpdir(), 'wr-misconfig-'));
const load = (env: Record<string, string>, cwd = tmpdir()) => loadConfig({ env, cwd, ignoreDotEnv: true });

function problemOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('a malformed .env line', () => {
  it('is an error naming the file and the line, instead of swallowing the next setting', () => {
    const dir = folder();
    writeFileSync(path.join(dir, '.env'), '# settings\nLOG_LEVEL=warn\nthis is not valid\nRECON_TIMEZONE=Europe/Berlin\n');
    const error = problemOf(() => loadConfig({ env: {}, cwd: dir }));
    expect(error.message).toBe(
      `${path.join(dir, '.env')}, line 3, is not a setting: write one setting per line as NAME=value (such as RECON_TIMEZONE=Europe/Berlin), and start a comment with #.`,
    );
    // The line is never quoted back: it may be a secret written without its name.
    expect(error.message).not.toContain('this is not valid');
  });

  it('names the line of a quote that is never closed, and still reads quoted values over several lines', () => {
    const dir = folder();
    writeFileSync(path.join(dir, '.env'), 'RECON_ACTOR="Finance\nteam"\nexport RECON_TIMEZONE=Europe/Berlin\n\n# end\n');
    expect(loadConfig({ env: {}, cwd: dir })).toMatchObject({ actor: 'Finance\nteam', timezone: 'Europe/Berlin' });
    writeFileSync(path.join(dir, '.env'), 'RECON_TIMEZONE=Europe/Berlin\nRECON_ACTOR="Finance\n');
    expect(problemOf(() => loadConfig({ env: {}, cwd: dir })).message).toMatch(/, line 2, opens a " quote that no later line closes: /);
  });
});

describe('unknown variables', () => {
  it('are warned about, from the environment and from .env, with the closest known name', () => {
    const dir = folder();
    writeFileSync(path.join(dir, '.env'), 'RECON_TIMEZOME=Europe/Berlin\n');
    const config = loadConfig({ env: { GATEWAY_APIKEY: 'k', DATABASE_ULR: 'postgres://x@db/recon', RECON_SOMETHING_ELSE_ENTIRELY: '1', HOME: '/root' }, cwd: dir });
    expect(config.timezone).toBe('UTC');
    expect(config.warnings).toEqual([
      'GATEWAY_APIKEY (set in the environment) is not a variable wallet-recon reads, so it is ignored; did you mean GATEWAY_API_KEY?',
      'DATABASE_ULR (set in the environment) is not a variable wallet-recon reads, so it is ignored; did you mean DATABASE_URL?',
      'RECON_SOMETHING_ELSE_ENTIRELY (set in the environment) is not a variable wallet-recon reads, so it is ignored.',
      `RECON_TIMEZOME (set in ${path.join(dir, '.env')}) is not a variable wallet-recon reads, so it is ignored; did you mean RECON_TIMEZONE?`,
    ]);
  });

  it('leave alone every name wallet-recon reads: the schema, secret files, per-currency tolerances, accounts-file variables', () => {
    const dir = folder();
    writeFileSync(path.join(dir, 'secret'), 's3cret\n');
    writeFileSync(path.join(dir, 'accounts.json'), JSON.stringify([{ name: 'eu', environment: 'sandbox', apiKeyEnv: 'GATEWAY_EU_KEY', apiSecretEnv: 'GATEWAY_EU_SECRET' }]));
    const config = load(
      { RECON_ACCOUNTS_FILE: 'accounts.json', GATEWAY_EU_KEY: 'k', GATEWAY_EU_SECRET_FILE: 'secret', RECON_TOLERANCE_JPY: '5', RECON_TIMEZONE: 'Europe/Berlin', DATABASE_URL: 'postgres://recon@db/recon', GATEWAY_PER_PAGE: '50' },
      dir,
    );
    expect(config.warnings).toEqual([]);
  });

  it('are not looked for among the values a command sets itself', () => {
    expect(loadConfig({ env: {}, ignoreDotEnv: true, overrides: { RECON_NOT_A_SETTING: 'x' } }).warnings).toEqual([]);
  });
});

describe('single-account variables beside RECON_ACCOUNTS_FILE', () => {
  const accountsFile = (dir: string, apiKeyEnv = 'EU_KEY') =>
    writeFileSync(path.join(dir, 'accounts.json'), JSON.stringify([{ name: 'eu', environment: 'sandbox', apiKeyEnv, apiSecretEnv: 'EU_SECRET' }]));

  it('are said to be ignored', () => {
    const dir = folder();
    accountsFile(dir);
    const config = load({ RECON_ACCOUNTS_FILE: 'accounts.json', EU_KEY: 'k', EU_SECRET: 's', GATEWAY_API_KEY: 'old', GATEWAY_API_SECRET: 'old', GATEWAY_ENV: 'live' }, dir);
    expect(config.warnings).toEqual([
      'GATEWAY_API_KEY is set but ignored, because RECON_ACCOUNTS_FILE is set and each account there takes its API key from the variable its apiKeyEnv names.',
      'GATEWAY_API_SECRET is set but ignored, because RECON_ACCOUNTS_FILE is set and each account there takes its API secret from the variable its apiSecretEnv names.',
      'GATEWAY_ENV is set but ignored, because RECON_ACCOUNTS_FILE is set and each account there names its own environment.',
    ]);
    // Not a word of the values.
    expect(config.warnings.join('\n')).not.toContain('old');
  });

  it('are not ignored when an account of the file names them', () => {
    const dir = folder();
    accountsFile(dir, 'GATEWAY_API_KEY');
    expect(load({ RECON_ACCOUNTS_FILE: 'accounts.json', GATEWAY_API_KEY: 'k', EU_SECRET: 's' }, dir).warnings).toEqual([]);
  });
});

describe('RECON_DATA_DIR', () => {
  it('must be absolute: a relative path would change with the folder the job starts in', () => {
    const error = problemOf(() => load({ RECON_DATA_DIR: 'data' }));
    expect(error.problems).toEqual([
      'RECON_DATA_DIR must be an absolute path such as /var/lib/wallet-recon, or memory:// for an in-memory database that keeps nothing (a relative path depends on the folder the job is started in), got "data"',
    ]);
    expect(problemOf(() => load({ RECON_DATA_DIR: '~/recon' })).problems[0]).toMatch(/^RECON_DATA_DIR must be an absolute path/);
    expect(load({ RECON_DATA_DIR: '/var/lib/wallet-recon' })).toMatchObject({ dataDir: '/var/lib/wallet-recon', dataDirSource: 'RECON_DATA_DIR', warnings: [] });
  });

  it('memory:// is an in-memory embedded database, which says it keeps nothing', () => {
    const config = load({ RECON_DATA_DIR: 'memory://' });
    expect(config).toMatchObject({ dataDir: 'memory://', dataDirSource: 'RECON_DATA_DIR' });
    expect(config.warnings).toEqual(['RECON_DATA_DIR is memory://: the embedded database lives in memory and keeps nothing once the command ends.']);
    // With a server database the data directory is not used: nothing to say.
    expect(load({ RECON_DATA_DIR: 'memory://', DATABASE_URL: 'postgres://recon@db/recon' }).warnings).toEqual([]);
  });
});

describe('GATEWAY_PER_PAGE', () => {
  it('is at most 100, the largest page the gateway serves', () => {
    expect(load({ GATEWAY_PER_PAGE: '100' }).gateway.perPage).toBe(100);
    expect(problemOf(() => load({ GATEWAY_PER_PAGE: '101' })).problems).toEqual(['GATEWAY_PER_PAGE must be a whole number of wallets per page from 1 to 100, got "101"']);
  });
});
