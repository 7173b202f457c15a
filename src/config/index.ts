// The configuration's one public entry: callers import from here, never from the modules behind it.
export { allAccountNames, bankAccountNamed, baseUrlFor, selectAccounts } from './accounts.js';
export { bankBooksOn, type BankCalendar } from './bank-calendar-settings.js';
export { assertScheduleFitsWindows, businessCalendarOf, deadlinesOf, toleranceAtDecimals, toleranceFor } from './business-settings.js';
export {
  DEFAULT_SANDBOX_URL,
  ENVIRONMENTS,
  type AccountBooksSettings,
  type AccountConfig,
  type BankAccountConfig,
  type BankMatchingSettings,
  type AmountUnitSettings,
  type ToleranceSettings,
  type BooksSourceSettings,
  type Config,
  type ConsoleSettings,
  type DatabaseTimeouts,
  type Environment,
  type GatewaySettings,
  type MetricsSettings,
  type NotificationSettings,
} from './config-types.js';
export { BOOKS_DATE_FORMATS } from './books-settings.js';
export { userDataRoot } from './data-dir.js';
export { loadConfig, type LoadConfigOptions } from './load-config.js';
export { checkEndpointUrl } from './notification-settings.js';
export { loadSandboxSecret, SANDBOX_SECRET_VARIABLE } from './sandbox-secret.js';
export { copyEnvironment, readSecretFile, removeSecretsFromEnvironment, SECRET_VARIABLES } from './secret-files.js';
