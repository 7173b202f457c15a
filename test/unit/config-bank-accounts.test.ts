import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { allAccountNames, loadConfig, selectAccounts } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { resolveAccountNames } from '../../src/reconciliation/reconciliation-service.js';

function withAccountsFile(content: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wr-bank-acc-'));
  writeFileSync(path.join(dir, 'accounts.yaml'), content);
  return () => loadConfig({ env: { RECON_ACCOUNTS_FILE: 'accounts.yaml', ...env }, cwd: dir, ignoreDotEnv: true });
}

function problemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('bankAccounts in the accounts file', () => {
  it('stands alone: no gateway account to capture, bank accounts to reconcile', () => {
    const config = withAccountsFile('bankAccounts:\n  - { name: eu-bank, iban: "de89 3704 0044 0532 0130 00", currency: EUR }\n  - { name: ch-bank, accountId: "0235-123456.01", currency: CHF }\n')();
    expect(config.accounts).toEqual([]);
    expect(config.bankAccounts).toEqual([
      { name: 'eu-bank', iban: 'DE89370400440532013000', accountId: undefined, currency: 'EUR' },
      { name: 'ch-bank', iban: undefined, accountId: '0235-123456.01', currency: 'CHF' },
    ]);
    expect(selectAccounts(config)).toEqual([]);
    expect(resolveAccountNames(config)).toEqual(['eu-bank', 'ch-bank']);
    expect(config.statementDeadlineMs).toBe(36 * 3_600_000);
  });

  it('stands beside accounts: one list of names, gateway accounts first; a bank account is not captured', () => {
    const config = withAccountsFile(
      'accounts:\n  - { name: eu-main, environment: sandbox, apiKeyEnv: EU_KEY, apiSecretEnv: EU_SECRET }\nbankAccounts:\n  - { name: eu-bank, iban: DE89370400440532013000, currency: EUR }\n',
      { EU_KEY: 'k', EU_SECRET: 's', RECON_STATEMENT_DEADLINE: '3d' },
    )();
    expect(allAccountNames(config)).toEqual(['eu-main', 'eu-bank']);
    expect(resolveAccountNames(config, 'eu-bank')).toEqual(['eu-bank']);
    expect(selectAccounts(config).map((a) => a.name)).toEqual(['eu-main']);
    expect(() => selectAccounts(config, 'eu-bank')).toThrow('"eu-bank" is a bank account: its balances come from its bank statements (wallet-recon statements import), not from the gateway.');
    expect(config.statementDeadlineMs).toBe(3 * 86_400_000);
  });

  it('names every mistake with its place', () => {
    expect(problemsOf(withAccountsFile('bankAccounts:\n  - { name: eu-bank, currency: EUR }\n'))).toEqual(['RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0: needs an iban or an accountId (how its statements name it)']);
    expect(problemsOf(withAccountsFile('bankAccounts:\n  - { name: eu-bank, iban: 12345, currency: EUR }\n'))[0]).toMatch(/at bankAccounts\.0\.iban: /);
    expect(problemsOf(withAccountsFile('bankAccounts:\n  - { name: eu-bank, iban: DE89370400440532013000, currency: euro }\n'))).toEqual([
      'RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0.currency: must be a three-letter currency code such as EUR',
    ]);
    expect(problemsOf(withAccountsFile('bankAccounts:\n  - { name: eu-bank, iban: DE89370400440532013000, currency: XAU }\n'))).toEqual([
      'RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0.currency: XAU is not an ISO 4217 currency with minor units',
    ]);
    expect(
      problemsOf(
        withAccountsFile(
          'accounts:\n  - { name: eu, environment: sandbox, apiKeyEnv: K, apiSecretEnv: S }\nbankAccounts:\n  - { name: eu, iban: DE89370400440532013000, currency: EUR }\n  - { name: other, iban: DE89370400440532013000, currency: EUR }\n',
        ),
      ),
    ).toEqual(['RECON_ACCOUNTS_FILE (accounts.yaml) at bankAccounts.0.name: "eu" appears twice', 'RECON_ACCOUNTS_FILE (accounts.yaml): bank accounts "eu" and "other" both name DE89370400440532013000']);
    expect(problemsOf(withAccountsFile('{}\n'))).toEqual(['RECON_ACCOUNTS_FILE (accounts.yaml) at top level: must list accounts, bankAccounts or both']);
    expect(problemsOf(withAccountsFile('bankAccounts:\n  - { name: eu-bank, iban: DE89370400440532013000, currency: EUR }\n', { RECON_STATEMENT_DEADLINE: 'soon' }))[0]).toMatch(/RECON_STATEMENT_DEADLINE/);
  });
});
