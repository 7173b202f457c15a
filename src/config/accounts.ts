import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as z from 'zod';
import { ConfigError } from '../errors.js';
import { checkBaseUrl } from '../gateway/base-url.js';
import { Secret } from '../secret.js';
import { accountBooksSchema } from './books-settings.js';
import { configProblems } from './config-problems.js';
import type { AccountConfig, BankAccountConfig, BankMatchingSettings, Config, Environment } from './config-types.js';
import { currencyDecimals } from '../money/format-amount.js';
import { resolveSecretFiles } from './secret-files.js';
import { checkGatewayDecimals } from './business-settings.js';
import { parseAmountOrShare, type AmountOrShare } from './quiet-settings.js';
import { bankCalendarOf, bankCalendarSchema } from './bank-calendar-settings.js';

/** An account's `materiality` and `certify` as its config keeps them (absent when not given). */
function quietOf(a: { materiality?: Record<string, string> | undefined; certify?: 'auto' | 'manual' | undefined }): { materiality?: Record<string, AmountOrShare>; certify?: 'auto' | 'manual' } {
  return {
    ...(a.materiality === undefined ? {} : { materiality: Object.fromEntries(Object.entries(a.materiality).map(([k, v]) => [k, parseAmountOrShare(v)!])) }),
    ...(a.certify === undefined ? {} : { certify: a.certify }),
  };
}

// Issue 45: per account, what is worth a person's time ({ default: "1.00", EUR: "0.50" }), and
// whether a clean date of it may be approved by rule (`certify: auto`, a control choice an admin makes).
const materialitySchema = z
  .record(z.string().regex(/^(default|[A-Z]{3})$/, 'must be default or a three-letter currency code such as EUR'), z.string().refine((v) => parseAmountOrShare(v) !== undefined, 'must be an amount in major units (1.00), a share of the balance (0.1%), or both (1.00,0.1%)'))
  .optional();
const certifySchema = z.enum(['auto', 'manual'], { error: 'must be one of: auto, manual' }).optional();

const accountName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'must be letters, digits, ".", "_" or "-"');

// How a bank account's books entries are matched with its statement entries (#38): each key optional.
const matchingSchema = z
  .object({
    dateWindowDays: z.number().int().min(0).max(366).optional(),
    amountTolerance: z.union([z.string(), z.number()]).transform(String).refine((v) => /^\d{1,15}(\.\d{1,18})?$/.test(v), 'must be an amount in major units such as 0.05').optional(),
    references: z.array(z.enum(['end_to_end', 'bank_reference', 'remittance'])).min(1, 'must name at least one of end_to_end, bank_reference, remittance').optional(),
    groupSize: z.number().int().min(1).max(10).optional(),
    expectedClearDays: z.number().int().min(0).max(366).optional(),
  })
  .strict();

/** An amount in major units ("0.05") as minor units of a currency, or a problem. */
function toleranceInMinorUnits(text: string, decimals: number): bigint | string {
  const [whole, fraction = ''] = text.split('.');
  if (fraction.length > decimals) return `has ${fraction.length} decimals, the currency ${decimals}`;
  return BigInt(`${whole}${fraction.padEnd(decimals, '0')}`);
}

// A bank account: reconciled from its bank statements (camt.053, MT940) instead of the gateway.
const bankAccountSchema = z
  .object({
    name: accountName,
    iban: z
      .string()
      .transform((v) => v.replace(/\s+/g, '').toUpperCase())
      .refine((v) => /^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(v), 'must be an IBAN such as DE89370400440532013000')
      .optional(),
    accountId: z.string().trim().min(1, 'must not be empty').max(70).optional(),
    currency: z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter currency code such as EUR'),
    books: accountBooksSchema.optional(),
    matching: matchingSchema.optional(),
    materiality: materialitySchema,
    certify: certifySchema,
    // The days the bank books (#40): a day it is closed awaits no statement.
    calendar: bankCalendarSchema.optional(),
    // How its statement numbers run: `yearly`, back to 1 on the first statement of each year;
    // `never`, one sequence for ever (a 1 in January is a backward jump).
    sequenceRestarts: z.enum(['yearly', 'never'], { error: 'must be one of: yearly, never' }).optional(),
  })
  .strict()
  .refine((b) => b.iban !== undefined || b.accountId !== undefined, { message: 'needs an iban or an accountId (how its statements name it)' });

const accountsFileSchema = z
  .object({
  accounts: z
    .array(
      z
        .object({
          name: accountName,
          environment: z.enum(['live', 'sandbox'], { error: 'must be one of: live, sandbox' }),
          apiKeyEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must name an environment variable'),
          apiSecretEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must name an environment variable'),
          baseUrl: z.string().optional(),
          books: accountBooksSchema.optional(),
          amountUnit: z.enum(['minor', 'major'], { error: 'must be one of: minor, major' }).optional(),
          amountDecimals: z.record(z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter currency code such as IDR'), z.number().int().min(0).max(18)).optional(),
          materiality: materialitySchema,
          certify: certifySchema,
        })
        .strict(),
    )
    .min(1, 'must list at least one account')
    .optional(),
  bankAccounts: z.array(bankAccountSchema).min(1, 'must list at least one bank account').optional(),
})
  .refine((f) => f.accounts !== undefined || f.bankAccounts !== undefined, { message: 'must list accounts, bankAccounts or both' });

/**
 * The YAML parser, loaded only when an accounts file is YAML: every command reads the
 * configuration at start, and loading the parser cost each of them ~10 ms it rarely needs.
 */
function parseYaml(text: string): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
}

/** `{ apiSecretFile }` when the secret variable `name` is given as `<name>_FILE` (and not also directly). */
function secretFileOf(env: Record<string, string | undefined>, name: string, cwd: string): { apiSecretFile?: string } {
  const file = env[`${name}_FILE`];
  return file === undefined || file === '' ? {} : { apiSecretFile: path.resolve(cwd, file) };
}

/** The accounts: those of RECON_ACCOUNTS_FILE, else one "default" account from GATEWAY_API_KEY/GATEWAY_API_SECRET. */
export function resolveAccounts(
  env: Record<string, string | undefined>,
  cwd: string,
  defaultEnvironment: Environment,
): { accounts: AccountConfig[]; bankAccounts: BankAccountConfig[]; problems: string[] } {
  const file = env.RECON_ACCOUNTS_FILE;
  if (file === undefined) {
    return {
      accounts: [
        {
          name: 'default',
          environment: defaultEnvironment,
          baseUrl: undefined,
          apiKey: env.GATEWAY_API_KEY,
          apiSecret: env.GATEWAY_API_SECRET === undefined ? undefined : new Secret(env.GATEWAY_API_SECRET),
          apiKeyEnv: 'GATEWAY_API_KEY',
          apiSecretEnv: 'GATEWAY_API_SECRET',
          ...secretFileOf(env, 'GATEWAY_API_SECRET', cwd),
        },
      ],
      bankAccounts: [],
      problems: [],
    };
  }
  const fullPath = path.resolve(cwd, file);
  let raw: unknown;
  try {
    const text = readFileSync(fullPath, 'utf8');
    raw = /\.ya?ml$/i.test(fullPath) ? parseYaml(text) : JSON.parse(text);
  } catch (error) {
    return { accounts: [], bankAccounts: [], problems: [`RECON_ACCOUNTS_FILE (${file}) could not be read: ${(error as Error).message}`] };
  }
  const parsed = accountsFileSchema.safeParse(Array.isArray(raw) ? { accounts: raw } : raw, { jitless: true });
  if (!parsed.success) {
    return {
      accounts: [],
      bankAccounts: [],
      problems: parsed.error.issues.map((i) => `RECON_ACCOUNTS_FILE (${file}) at ${i.path.join('.') || 'top level'}: ${i.message}`),
    };
  }
  const problems: string[] = resolveSecretFiles(
    env,
    (parsed.data.accounts ?? []).map((a) => a.apiSecretEnv),
    cwd,
  );
  const seen = new Set<string>();
  const accounts = (parsed.data.accounts ?? []).map((a, index) => {
    for (const [currency, decimals] of Object.entries(a.amountDecimals ?? {})) {
      const problem = checkGatewayDecimals(currency, String(decimals));
      if (problem) problems.push(`RECON_ACCOUNTS_FILE (${file}) at accounts.${index}.amountDecimals.${currency}: ${decimals} ${problem}`);
    }
    if (seen.has(a.name)) problems.push(`RECON_ACCOUNTS_FILE (${file}) at accounts.${index}.name: "${a.name}" appears twice`);
    seen.add(a.name);
    if (a.baseUrl !== undefined) {
      const problem = checkBaseUrl(a.baseUrl);
      if (problem) problems.push(`RECON_ACCOUNTS_FILE (${file}) at accounts.${index}.baseUrl ${problem}`);
    }
    const secret = env[a.apiSecretEnv];
    return {
      name: a.name,
      environment: a.environment,
      baseUrl: a.baseUrl,
      apiKey: env[a.apiKeyEnv],
      apiSecret: secret === undefined ? undefined : new Secret(secret),
      apiKeyEnv: a.apiKeyEnv,
      apiSecretEnv: a.apiSecretEnv,
      ...secretFileOf(env, a.apiSecretEnv, cwd),
      // A query file is found beside the accounts file that names it, wherever the command starts.
      ...(a.amountUnit === undefined && a.amountDecimals === undefined
        ? {}
        : { amounts: { ...(a.amountUnit === undefined ? {} : { unit: a.amountUnit }), ...(a.amountDecimals === undefined ? {} : { decimalsByCurrency: a.amountDecimals }) } }),
      ...(a.books === undefined ? {} : { books: booksPathsResolved(a.books, fullPath) }),
      ...quietOf(a),
    } satisfies AccountConfig;
  });
  const bankAccounts = (parsed.data.bankAccounts ?? []).map((b, index) => {
    if (seen.has(b.name)) problems.push(`RECON_ACCOUNTS_FILE (${file}) at bankAccounts.${index}.name: "${b.name}" appears twice`);
    seen.add(b.name);
    if (currencyDecimals(b.currency) === null) problems.push(`RECON_ACCOUNTS_FILE (${file}) at bankAccounts.${index}.currency: ${b.currency} is not an ISO 4217 currency with minor units`);
    return {
      name: b.name,
      iban: b.iban,
      accountId: b.accountId,
      currency: b.currency,
      ...(b.books === undefined ? {} : { books: booksPathsResolved(b.books, fullPath) }),
      ...(b.matching === undefined ? {} : { matching: matchingOf(b.matching, b.currency, (problem) => problems.push(`RECON_ACCOUNTS_FILE (${file}) at bankAccounts.${index}.matching.amountTolerance: ${problem}`)) }),
      ...(b.calendar === undefined ? {} : { calendar: bankCalendarOf(b.calendar, fullPath, (problem) => problems.push(`RECON_ACCOUNTS_FILE (${file}) at bankAccounts.${index}.calendar.holidaysFile: ${problem}`)) }),
      ...(b.sequenceRestarts === undefined ? {} : { sequenceRestarts: b.sequenceRestarts }),
      ...quietOf(b),
    } satisfies BankAccountConfig;
  });
  const byIdentifier = new Map<string, string>();
  for (const b of bankAccounts) {
    for (const id of [b.iban, b.accountId]) {
      if (id === undefined) continue;
      const other = byIdentifier.get(id);
      if (other !== undefined && other !== b.name) problems.push(`RECON_ACCOUNTS_FILE (${file}): bank accounts "${other}" and "${b.name}" both name ${id}`);
      byIdentifier.set(id, b.name);
    }
  }
  return { accounts, bankAccounts, problems };
}

/** Every account name a reconciliation covers: the gateway's accounts, then the bank accounts. */
export function allAccountNames(config: Pick<Config, 'accounts' | 'bankAccounts'>): string[] {
  return [...config.accounts.map((a) => a.name), ...config.bankAccounts.map((b) => b.name)];
}

function matchingOf(m: z.infer<typeof matchingSchema>, currency: string, problem: (text: string) => void): BankMatchingSettings {
  let amountTolerance: bigint | undefined;
  if (m.amountTolerance !== undefined) {
    const minor = toleranceInMinorUnits(m.amountTolerance, currencyDecimals(currency) ?? 0);
    if (typeof minor === 'string') problem(`${m.amountTolerance} ${minor}`);
    else amountTolerance = minor;
  }
  return {
    ...(m.dateWindowDays === undefined ? {} : { dateWindowDays: m.dateWindowDays }),
    ...(amountTolerance === undefined ? {} : { amountTolerance }),
    ...(m.references === undefined ? {} : { references: [...new Set(m.references)] }),
    ...(m.groupSize === undefined ? {} : { groupSize: m.groupSize }),
    ...(m.expectedClearDays === undefined ? {} : { expectedClearDays: m.expectedClearDays }),
  };
}

/** The bank account of that name, if it is one. */
export function bankAccountNamed(config: Pick<Config, 'bankAccounts'>, name: string): BankAccountConfig | undefined {
  return config.bankAccounts.find((b) => b.name === name);
}

/** The gateway base URL an account talks to. Throws ConfigError when live has no URL. */
export function baseUrlFor(config: Config, account: AccountConfig): string {
  if (account.baseUrl) return account.baseUrl;
  if (account.environment === 'sandbox') return config.sandboxUrl;
  if (!config.liveUrl) {
    throw new ConfigError(`Account "${account.name}" uses the live gateway but GATEWAY_LIVE_URL is not set.`, [
      'GATEWAY_LIVE_URL is required for live accounts',
    ]);
  }
  return config.liveUrl;
}

/**
 * The accounts a gateway command will use (all, or the one named), checked for credentials.
 * Throws one ConfigError listing every missing variable.
 */
export function selectAccounts(config: Config, name?: string): AccountConfig[] {
  const chosen = name === undefined ? [...config.accounts] : config.accounts.filter((a) => a.name === name);
  if (name !== undefined && bankAccountNamed(config, name) !== undefined) {
    throw new ConfigError(`"${name}" is a bank account: its balances come from its bank statements (wallet-recon statements import), not from the gateway.`, [`bank account ${name}`]);
  }
  // A file of bank accounts alone has no gateway account to capture.
  if (name === undefined && config.bankAccounts.length > 0 && chosen.length === 0) return [];
  if (chosen.length === 0) {
    throw new ConfigError(
      `There is no account named "${name}". Configured accounts: ${config.accounts.map((a) => a.name).join(', ')}.`,
      [`unknown account ${name}`],
    );
  }
  const problems: string[] = [];
  for (const account of chosen) {
    if (!account.apiKey) problems.push(`${account.apiKeyEnv} is not set (API key of account "${account.name}")`);
    if (!account.apiSecret) problems.push(`${account.apiSecretEnv} is not set, nor ${account.apiSecretEnv}_FILE (API secret of account "${account.name}")`);
    try {
      baseUrlFor(config, account);
    } catch (error) {
      problems.push((error as ConfigError).message);
    }
  }
  if (problems.length > 0) throw configProblems(problems);
  return chosen;
}

/** An account's books section with its query files found beside the accounts file that names them. */
function booksPathsResolved<T extends { sqlFile?: string; entriesSqlFile?: string }>(books: T, accountsFile: string): T {
  const beside = (file: string) => path.resolve(path.dirname(accountsFile), file);
  return {
    ...books,
    ...(books.sqlFile === undefined ? {} : { sqlFile: beside(books.sqlFile) }),
    ...(books.entriesSqlFile === undefined ? {} : { entriesSqlFile: beside(books.entriesSqlFile) }),
  };
}
