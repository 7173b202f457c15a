import type { BankAccountConfig } from '../config/index.js';
import type { ParsedStatement } from './statement.js';

/**
 * The configured bank account a statement belongs to: its IBAN, or its other identifier (camt
 * `Othr/Id`, MT940 `:25:`, which some banks write as the IBAN followed by the currency).
 */
export function bankAccountOf(statement: Pick<ParsedStatement, 'iban' | 'accountId' | 'currency'>, accounts: readonly BankAccountConfig[]): BankAccountConfig | undefined {
  const normalized = (v: string) => v.replace(/\s+/g, '').toUpperCase();
  const names = [statement.iban, statement.accountId].filter((v): v is string => v !== null).map(normalized);
  const withoutCurrency = names.map((n) => (n.endsWith(statement.currency) ? n.slice(0, -3) : n));
  const candidates = new Set([...names, ...withoutCurrency]);
  return accounts.find((a) => (a.iban !== undefined && candidates.has(a.iban)) || (a.accountId !== undefined && candidates.has(normalized(a.accountId))));
}

/** How a statement names its account, for messages: `IBAN DE89…` or `account 12345678`. */
export function describeStatementAccount(statement: Pick<ParsedStatement, 'iban' | 'accountId'>): string {
  return statement.iban !== null ? `IBAN ${statement.iban}` : `account ${statement.accountId}`;
}
