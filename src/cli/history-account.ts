import type { Config } from '../config/index.js';
import { resolveAccountNames } from '../reconciliation/reconciliation-service.js';

/**
 * Checks the `--account` of a command that reads history (runs, cases). A configured account is
 * taken; so is one no longer configured that left history (a renamed account's runs stay
 * readable), with a note saying it is not configured any more. A name with neither is refused
 * as elsewhere (UsageError, exit 2): a typo must not read as an account with nothing recorded.
 */
export async function checkHistoryAccount(config: Config, name: string, what: 'runs' | 'cases', hasHistory: () => Promise<boolean>): Promise<{ note?: string }> {
  if (config.accounts.some((a) => a.name === name)) return {};
  if (!(await hasHistory())) resolveAccountNames(config, name);
  return { note: `Account "${name}" is not configured any more; these are its recorded ${what}.` };
}
