import { closestMatch } from 'leven';

// The prefixes of wallet-recon's own variables: a name with one of them that is not known is a typo.
const OWN_PREFIX = /^(RECON|GATEWAY|DATABASE)_/;
// Farther than this, a suggestion is more likely to mislead than to help.
const MAX_SUGGESTION_DISTANCE = 3;

/** Where a variable was set, for the warning: the process environment or a .env file. */
export interface VariableSource {
  readonly name: string;
  readonly from: string;
}

/**
 * Warnings for variables with wallet-recon's prefixes that it does not read (a misspelt name is
 * otherwise ignored without a word), each with the closest known name when one is near.
 */
export function unknownVariableWarnings(sources: readonly VariableSource[], isKnown: (name: string) => boolean, knownNames: readonly string[]): string[] {
  const warnings: string[] = [];
  for (const { name, from } of sources) {
    if (!OWN_PREFIX.test(name) || isKnown(name)) continue;
    const suggestion = closestMatch(name, knownNames, { maxDistance: MAX_SUGGESTION_DISTANCE });
    warnings.push(`${name} (${from}) is not a variable wallet-recon reads, so it is ignored${suggestion === undefined ? '.' : `; did you mean ${suggestion}?`}`);
  }
  return warnings;
}

/** The single account's variables, which an accounts file replaces by the names each of its accounts gives. */
const SINGLE_ACCOUNT_VARIABLES: Readonly<Record<string, string>> = {
  GATEWAY_API_KEY: 'each account there takes its API key from the variable its apiKeyEnv names',
  GATEWAY_API_SECRET: 'each account there takes its API secret from the variable its apiSecretEnv names',
  GATEWAY_API_SECRET_FILE: 'each account there takes its API secret from the variable its apiSecretEnv names',
  GATEWAY_ENV: 'each account there names its own environment',
};

/** Warnings for single-account variables set beside RECON_ACCOUNTS_FILE, unless an account uses them by name. */
export function ignoredAccountVariableWarnings(setNames: ReadonlySet<string>, usedByAccounts: ReadonlySet<string>): string[] {
  return Object.entries(SINGLE_ACCOUNT_VARIABLES)
    .filter(([name]) => setNames.has(name) && !usedByAccounts.has(name))
    .map(([name, why]) => `${name} is set but ignored, because RECON_ACCOUNTS_FILE is set and ${why}.`);
}
