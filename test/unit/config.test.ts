import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { assertScheduleFitsWindows, loadConfig, selectAccounts, toleranceAtDecimals, toleranceFor, userDataRoot } from '../../src/config/index.js';
import { checkBaseUrl } from '../../src/gateway/base-url.js';
import { ConfigError } from '../../src/errors.js';

const load = (env: Record<string, string>, cwd = tmpdir()) => loadConfig({ env, cwd, ignoreDotEnv: true });

function problemsOf(env: Record<string, string>, cwd?: string): string[] {
  try {
    load(env, cwd);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    return [...(error as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = load({});
    expect(config).toMatchObject({
      environment: 'sandbox',
      timezone: 'UTC',
      schedule: '55 23 * * *',
      logLevel: 'info',
      gateway: { timeoutMs: 30000, concurrency: 8, perPage: 100, authScheme: 'Bearer' },
    });
    expect(config.databaseUrl).toBeUndefined();
    // The user's data directory, not the working folder (env-paths: XDG_DATA_HOME, else ~/.local/share).
    expect(config).toMatchObject({ dataDir: path.join(userDataRoot(), 'database'), dataDirSource: 'user-data-dir' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(config.accounts.map((a) => a.name)).toEqual(['default']);
  });

  it('reads the business day: cut-off, capture window and retry delays, with their defaults', () => {
    expect(load({})).toMatchObject({ cutoff: '00:00', captureWindowMs: 3 * 3_600_000, retryDelaysMs: [300_000, 600_000, 1_200_000, 1_800_000] });
    expect(load({ RECON_CUTOFF: '17:30', RECON_CAPTURE_WINDOW: '90s', RECON_RETRY_DELAYS: '10s, 1m' })).toMatchObject({
      cutoff: '17:30',
      captureWindowMs: 90_000,
      retryDelaysMs: [10_000, 60_000],
    });
  });

  it('says what a cut-off, a window or a delay must look like', () => {
    const problems = problemsOf({ RECON_CUTOFF: '24:00', RECON_CAPTURE_WINDOW: '12h', RECON_RETRY_DELAYS: '5m,soon' }).join('\n');
    expect(problems).toMatch(/RECON_CUTOFF must be a local time HH:MM from 00:00 to 23:59, such as 00:00 or 17:30, got "24:00"/);
    expect(problems).toMatch(/RECON_CAPTURE_WINDOW must be a duration from 1s to 11h, such as 90s, 45m or 3h.*, got "12h"/);
    expect(problems).toMatch(/RECON_RETRY_DELAYS must be a comma-separated list of durations from 1s to 24h, such as 5m,10m,20m,30m, got "5m,soon"/);
  });

  it('accepts six-field schedules and refuses one whose slots fall outside every capture window', () => {
    expect(() => assertScheduleFitsWindows(load({ RECON_SCHEDULE: '30 55 23 * * *' }))).not.toThrow();
    const error = (() => {
      try {
        assertScheduleFitsWindows(load({ RECON_SCHEDULE: '0 12 * * *', RECON_TIMEZONE: 'Europe/Berlin' }));
      } catch (caught) {
        return caught as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/RECON_SCHEDULE "0 12 \* \* \*" fires at 12:00:00 \(Europe\/Berlin\) on 2026-01-01, 12 h from the nearest cut-off, outside the capture window of ±3 h/);
  });

  it('lists every problem at once', () => {
    const problems = problemsOf({ DATABASE_URL: 'not-a-url', GATEWAY_ENV: 'moon', GATEWAY_PER_PAGE: '0', RECON_TIMEZONE: 'Mars/Base', RECON_SCHEDULE: 'every night' });
    expect(problems).toHaveLength(5);
    expect(problems.join('\n')).toMatch(/DATABASE_URL/);
    expect(problems.join('\n')).toMatch(/GATEWAY_ENV must be one of: live, sandbox, got "moon"/);
    expect(problems.join('\n')).toMatch(/RECON_TIMEZONE/);
  });

  it('never echoes a secret value', () => {
    const secretUrl = 'mysql://user:hunter2@db/x';
    try {
      load({ DATABASE_URL: secretUrl });
      throw new Error('expected failure');
    } catch (error) {
      expect((error as Error).message).not.toContain('hunter2');
      expect((error as Error).message).toContain('value hidden');
    }
  });

  it('never echoes a password written into a gateway URL', () => {
    const problems = problemsOf({ GATEWAY_LIVE_URL: 'https://merchant:SuperS3cret@gw.example.com' });
    expect(problems[0]).toMatch(/must not contain a user name or password/);
    expect(problems.join('\n')).not.toContain('SuperS3cret');
  });

  it('keeps secrets out of JSON and inspection', () => {
    const config = load({ GATEWAY_API_KEY: 'k', GATEWAY_API_SECRET: 's3cr3t-value', DATABASE_URL: 'postgres://u:pw-123@h/db' });
    const text = JSON.stringify(config, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) + inspect(config, { depth: 10 });
    expect(text).not.toContain('s3cr3t-value');
    expect(text).not.toContain('pw-123');
    expect(config.accounts[0]!.apiSecret!.reveal()).toBe('s3cr3t-value');
  });

  it('reads a .env file, with the real environment taking precedence', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-env-'));
    writeFileSync(path.join(dir, '.env'), 'GATEWAY_PER_PAGE=7\nRECON_TIMEZONE=Europe/Berlin\n');
    const config = loadConfig({ env: { RECON_TIMEZONE: 'Asia/Tokyo' }, cwd: dir });
    expect(config.gateway.perPage).toBe(7);
    expect(config.timezone).toBe('Asia/Tokyo');
  });

  it('refuses a plain-http gateway URL to a non-loopback host', () => {
    expect(problemsOf({ GATEWAY_LIVE_URL: 'http://gateway.example.com' })[0]).toMatch(/GATEWAY_LIVE_URL uses http:\/\/ for a host that is not loopback/);
    expect(checkBaseUrl('http://127.0.0.5:4010')).toBeUndefined();
    expect(checkBaseUrl('http://localhost:4010')).toBeUndefined();
    expect(checkBaseUrl('http://[::1]:4010')).toBeUndefined();
    expect(checkBaseUrl('https://gateway.example.com')).toBeUndefined();
    expect(checkBaseUrl('ftp://gateway.example.com')).toMatch(/https/);
  });

  it('reads tolerances in major units, per currency, and a relative part rounded down', () => {
    const config = load({ RECON_TOLERANCE: '0.01', RECON_TOLERANCE_JPY: '100', RECON_TOLERANCE_BPS: '5' });
    expect(toleranceFor(config, 'JPY', 0)).toBe(100n);
    expect(toleranceFor(config, 'EUR', 2)).toBe(1n);
    expect(toleranceFor(config, 'KWD', 3)).toBe(10n);
    // 5 bps of EUR 1,000.00 is EUR 0.50; of 19.99 minor units 0.009995, rounded down to 0: the absolute 1 wins.
    expect(toleranceFor(config, 'EUR', 2, 100_000n)).toBe(50n);
    expect(toleranceFor(config, 'EUR', 2, -100_000n)).toBe(50n);
    expect(toleranceFor(config, 'EUR', 2, 1_999n)).toBe(1n);
    expect(toleranceFor(config, 'EUR', 2, 3_999n)).toBe(1n);
    // A tolerance finer than a currency's minor unit is rounded down to it, never refused nor widened.
    expect(toleranceFor(load({ RECON_TOLERANCE: '0.01' }), 'JPY', 0)).toBe(0n);
    expect(toleranceFor(load({ RECON_TOLERANCE: '1.5' }), 'JPY', 0)).toBe(1n);
    expect(toleranceFor(load({ RECON_TOLERANCE: '0.015' }), 'EUR', 2)).toBe(1n);
    expect(toleranceFor(load({ RECON_TOLERANCE: '2.999' }), 'EUR', 2)).toBe(299n);
    expect(toleranceFor(load({ RECON_TOLERANCE: '0.0100' }), 'EUR', 2)).toBe(1n);
    expect(toleranceFor(load({ RECON_TOLERANCE: '0.01', RECON_TOLERANCE_BPS: '100' }), 'JPY', 0, 1_000n)).toBe(10n);
    expect(problemsOf({ RECON_TOLERANCE_JPY: '1.5' })[0]).toMatch(/^RECON_TOLERANCE_JPY has more decimals than JPY has \(0\)/);
    expect(problemsOf({ RECON_TOLERANCE_EUR: '0.005' })[0]).toMatch(/^RECON_TOLERANCE_EUR has more decimals than EUR has \(2\)/);
    expect(toleranceAtDecimals('0.01', 0)).toBe('0');
    expect(toleranceAtDecimals('1.5', 0)).toBe('1');
    expect(toleranceAtDecimals('0.50', 1)).toBe('0.50');
    expect(toleranceAtDecimals('0.125', 2)).toBe('0.12');
    expect(problemsOf({ RECON_TOLERANCE: '1e-2' })[0]).toMatch(/^RECON_TOLERANCE must be an amount in major units/);
    expect(problemsOf({ RECON_TOLERANCE_BPS: '-1' })[0]).toMatch(/^RECON_TOLERANCE_BPS must be a whole number of basis points/);
  });

  it('reads the gateway\'s amount unit and per-currency decimals, refusing more decimals than ISO 4217 gives', () => {
    expect(load({}).amounts).toEqual({ unit: 'minor', decimalsByCurrency: {} });
    expect(load({ GATEWAY_AMOUNT_UNIT: 'major', GATEWAY_AMOUNT_DECIMALS_IDR: '0' }).amounts).toEqual({ unit: 'major', decimalsByCurrency: { IDR: 0 } });
    expect(problemsOf({ GATEWAY_AMOUNT_UNIT: 'cents' })[0]).toMatch(/^GATEWAY_AMOUNT_UNIT must be one of: minor/);
    expect(problemsOf({ GATEWAY_AMOUNT_DECIMALS_JPY: '2' })[0]).toMatch(/^GATEWAY_AMOUNT_DECIMALS_JPY is more decimals than JPY has in ISO 4217 \(0\)/);
    expect(problemsOf({ GATEWAY_AMOUNT_DECIMALS_IDR: 'two' })[0]).toMatch(/^GATEWAY_AMOUNT_DECIMALS_IDR must be a whole number of decimals/);
    // A code ISO 4217 lacks may be configured: that is how an unknown wallet is read at all.
    expect(load({ GATEWAY_AMOUNT_DECIMALS_AAB: '4' }).amounts.decimalsByCurrency).toEqual({ AAB: 4 });
  });

  it('reads accounts from a YAML file and checks their credentials only when used', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-acc-'));
    writeFileSync(
      path.join(dir, 'accounts.yaml'),
      'accounts:\n  - name: eu-main\n    environment: sandbox\n    apiKeyEnv: EU_KEY\n    apiSecretEnv: EU_SECRET\n  - name: us-main\n    environment: live\n    apiKeyEnv: US_KEY\n    apiSecretEnv: US_SECRET\n    baseUrl: https://gw.example.com\n',
    );
    const config = load({ RECON_ACCOUNTS_FILE: 'accounts.yaml', EU_KEY: 'k', EU_SECRET: 's' }, dir);
    expect(config.accounts.map((a) => a.name)).toEqual(['eu-main', 'us-main']);
    expect(selectAccounts(config, 'eu-main')).toHaveLength(1);
    expect(() => selectAccounts(config)).toThrow(/US_KEY is not set[\s\S]*US_SECRET is not set/);
    expect(() => selectAccounts(config, 'nope')).toThrow(/no account named "nope"/);
  });

  it('names the place in a broken accounts file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wr-acc-'));
    writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ accounts: [{ name: 'x', environment: 'moon', apiKeyEnv: 'K', apiSecretEnv: 'S' }] }));
    expect(problemsOf({ RECON_ACCOUNTS_FILE: 'a.json' }, dir)[0]).toMatch(/accounts\.0\.environment: must be one of: live, sandbox/);
  });
});
