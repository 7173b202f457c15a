import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCliRuntime } from '../../src/cli/runtime.js';
import { loadConfig, SECRET_VARIABLES } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { writeAccountsFile } from '../helpers/test-context.js';
import { copyEmbeddedTemplate } from '../helpers/test-database.js';

/**
 * Given secrets mounted as files (Docker, Kubernetes), the configuration reads them through the
 * `_FILE` form of each secret variable, refuses contradictions, never quotes a value, and takes
 * the secrets out of the environment once read.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'wr-secret-files-'));
let counter = 0;
function secretFile(content: string): string {
  const file = path.join(dir, `secret-${++counter}`);
  writeFileSync(file, content, { mode: 0o600 });
  return file;
}

const load = (env: Record<string, string>) => loadConfig({ env, cwd: dir, ignoreDotEnv: true });

function problemsOf(env: Record<string, string>): string[] {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('secret variables given as files', () => {
  it('reads GATEWAY_API_SECRET_FILE, without the line break an editor or echo leaves', () => {
    const config = load({ GATEWAY_API_KEY: 'key', GATEWAY_API_SECRET_FILE: secretFile('sk_from_file_123\n') });
    expect(config.accounts[0]!.apiSecret!.reveal()).toBe('sk_from_file_123');
  });

  it('reads DATABASE_URL_FILE', () => {
    const config = load({ DATABASE_URL_FILE: secretFile('postgres://recon:pw_from_file@db:5432/recon\r\n') });
    expect(config.databaseUrl!.reveal()).toBe('postgres://recon:pw_from_file@db:5432/recon');
  });

  it("reads the _FILE form of an account's apiSecretEnv, relative to the working folder", () => {
    const file = path.basename(secretFile('eu_secret_from_file'));
    const config = load({
      RECON_ACCOUNTS_FILE: writeAccountsFile([{ name: 'eu-main', apiKeyEnv: 'EU_KEY', apiSecretEnv: 'EU_SECRET' }]),
      EU_KEY: 'key',
      EU_SECRET_FILE: file,
    });
    expect(config.accounts[0]!.apiSecret!.reveal()).toBe('eu_secret_from_file');
    expect(config.secretVariables).toEqual(expect.arrayContaining(['GATEWAY_API_SECRET', 'DATABASE_URL', 'EU_SECRET']));
  });

  it('puts DATABASE_PASSWORD(_FILE) into a DATABASE_URL written without one, encoded', () => {
    const config = load({ DATABASE_URL: 'postgres://recon@db:5432/recon?sslmode=require', DATABASE_PASSWORD_FILE: secretFile('p@ss:w/rd\n') });
    expect(config.databaseUrl!.reveal()).toBe('postgres://recon:p%40ss%3Aw%2Frd@db:5432/recon?sslmode=require');
  });

  it('refuses a password in two places', () => {
    expect(problemsOf({ DATABASE_URL: 'postgres://recon:one@db/recon', DATABASE_PASSWORD: 'two-two' })).toEqual([
      'DATABASE_URL already contains a password and DATABASE_PASSWORD is set too; keep the password in one place only',
    ]);
    expect(problemsOf({ DATABASE_PASSWORD: 'two-two' })[0]).toMatch(/^DATABASE_PASSWORD is set but DATABASE_URL is not/);
  });

  it.each(SECRET_VARIABLES)('refuses %s set both directly and as a file', (name) => {
    const problems = problemsOf({ [name]: 'postgres://u@h/d', [`${name}_FILE`]: secretFile('postgres://u@h/d') });
    expect(problems).toContain(`${name} and ${name}_FILE are both set; set only one of them (the file is the safer place for a secret)`);
  });

  it('names the variable and the path of a file that is missing, empty or not a file, never a value', () => {
    const missing = path.join(dir, 'no-such-file');
    const empty = secretFile('\n');
    const problems = problemsOf({ GATEWAY_API_SECRET_FILE: missing, DATABASE_URL_FILE: empty, DATABASE_PASSWORD_FILE: dir });
    expect(problems).toEqual([
      `GATEWAY_API_SECRET_FILE (${missing}) could not be read: there is no such file`,
      `DATABASE_URL_FILE (${empty}) is empty; it should hold the value of DATABASE_URL`,
      `DATABASE_PASSWORD_FILE (${dir}) could not be read: it is a folder, not a file`,
    ]);
  });

  // Root reads every file whatever its mode.
  it.skipIf(process.getuid?.() === 0)('says when the file exists but cannot be read', () => {
    const file = secretFile('unreadable');
    chmodSync(file, 0o000);
    expect(problemsOf({ GATEWAY_API_SECRET_FILE: file })[0]).toBe(
      `GATEWAY_API_SECRET_FILE (${file}) could not be read: permission denied (the file must be readable by the user wallet-recon runs as)`,
    );
  });

  it('does not quote a bad value read from a file', () => {
    const problems = problemsOf({ DATABASE_URL_FILE: secretFile('mysql://u:hunter2_in_file@db/x') });
    expect(problems).toEqual(['DATABASE_URL must be a postgres:// or postgresql:// URL (value hidden)']);
  });
});

describe('secrets leave the environment after start-up', () => {
  const saved: Record<string, string | undefined> = {};
  const setProcessEnv = (values: Record<string, string>) => {
    for (const [key, value] of Object.entries(values)) {
      saved[key] = process.env[key];
      process.env[key] = value;
    }
  };
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  const output = { out: () => undefined, err: () => undefined, isTTY: false };

  it('removes every secret variable from the environment it was given', () => {
    const env: NodeJS.ProcessEnv = {
      RECON_ACCOUNTS_FILE: writeAccountsFile([{ name: 'eu-main', apiKeyEnv: 'EU_KEY', apiSecretEnv: 'EU_SECRET' }]),
      EU_KEY: 'eu-key',
      EU_SECRET: 'eu_secret_value_1',
      GATEWAY_API_SECRET: 'gateway_secret_value_2',
      DATABASE_URL: 'postgres://recon:db_password_3@db/recon',
    };
    const runtime = createCliRuntime(output, env);
    expect(runtime.config().accounts[0]!.apiSecret!.reveal()).toBe('eu_secret_value_1');
    expect(env).toEqual({ RECON_ACCOUNTS_FILE: env.RECON_ACCOUNTS_FILE, EU_KEY: 'eu-key' });
  });

  it('takes the secrets out of the environment yet lets a later load with overrides (the demo) read them', async () => {
    const env: NodeJS.ProcessEnv = { GATEWAY_API_KEY: 'key', GATEWAY_API_SECRET: 'gateway_secret_value_6', EU_SECRET_FILE: '/run/secrets/x' };
    const runtime = createCliRuntime(output, env);
    runtime.config();
    expect(env).toEqual({ GATEWAY_API_KEY: 'key', EU_SECRET_FILE: '/run/secrets/x' });
    let seen: string | undefined;
    const folder = mkdtempSync(path.join(tmpdir(), 'wr-reload-'));
    const dataDir = path.join(folder, 'data');
    // An existing database (a copy of the suite's template): opening it is what is needed, not creating one.
    copyEmbeddedTemplate(dataDir);
    try {
      await runtime.withContext('test', { migrate: 'never', configOverrides: { RECON_DATA_DIR: dataDir } }, async (ctx) => {
        seen = ctx.config.accounts[0]!.apiSecret!.reveal();
        return 0;
      });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
    expect(seen).toBe('gateway_secret_value_6');
  });

  it('leaves no secret in process.env nor in a diagnostic report of the process', () => {
    const secrets = { GATEWAY_API_SECRET: 'report_gateway_secret_4', DATABASE_URL: 'postgres://recon:report_db_password_5@127.0.0.1:1/recon' };
    setProcessEnv(secrets);
    createCliRuntime(output, undefined).config();
    expect(process.env.GATEWAY_API_SECRET).toBeUndefined();
    expect(process.env.DATABASE_URL).toBeUndefined();
    const report = JSON.stringify(process.report.getReport());
    expect(report).not.toContain('report_gateway_secret_4');
    expect(report).not.toContain('report_db_password_5');
  });
});
