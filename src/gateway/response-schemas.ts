import * as z from 'zod';
import { describeJsonValue, isJsonInteger, isLosslessNumber, type LosslessNumber } from '../lossless-json.js';

/** A wallet's currency: three uppercase letters. Anything else never goes into a URL. */
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;

/** One wallet and its balance in minor units, exact. */
export interface ParsedWallet {
  currency: string;
  balance: bigint;
}

/** "must be X (got Y)", or "is missing": says what kind of value came, never the value itself. */
const expected =
  (what: string) =>
  (issue: { input?: unknown }): string =>
    issue.input === undefined ? 'is missing' : `must be ${what} (got ${describeJsonValue(issue.input)})`;

/** A short, quoted rendering of a non-secret string field (currency, status) for messages. */
function quoteShort(value: unknown): string {
  if (typeof value !== 'string') return describeJsonValue(value);
  const shown = value.length > 12 ? `${value.slice(0, 12)}…` : value;
  return JSON.stringify(shown);
}

const jsonInteger = z.custom<LosslessNumber>(isJsonInteger, { error: expected('an integer') });

/** z.object for parsed JSON: a number is a LosslessNumber, an object to zod, and is refused as one. */
function jsonObject<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.custom((value) => !isLosslessNumber(value), { error: expected('an object') }).pipe(z.object(shape, { error: expected('an object') }));
}

const currencySchema = z
  .string({ error: expected('a string') })
  .regex(CURRENCY_PATTERN, { error: (issue) => `must be a three-letter uppercase code such as EUR (got ${quoteShort(issue.input)})` });

/** A balance entry `{currency, balance}`; the balance must be written as a JSON integer. */
export const walletEntrySchema = jsonObject({
  currency: currencySchema,
  balance: jsonInteger.transform((n): bigint => BigInt(n.value)),
});

/** The published success envelope `{code, status: "success", message, data}` around `data`. */
function successEnvelope<T extends z.ZodType>(data: T) {
  return jsonObject({
    code: jsonInteger,
    status: z.literal('success', {
      error: (issue) => (issue.input === undefined ? 'is missing' : `must be "success" (got ${quoteShort(issue.input)})`),
    }),
    message: z.string({ error: expected('a string') }),
    data,
  });
}

/** GET /v1/data/wallets/balances: the envelope with an array of entries. */
export const balanceListSchema = successEnvelope(z.array(walletEntrySchema, { error: expected('an array') }));

/** GET /v1/data/wallets/:currency/balance: the envelope; `data` is checked by parseSingleWallet. */
export const singleWalletEnvelopeSchema = successEnvelope(z.unknown());

/** `data[4].balance` from a zod path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out === '' ? String(key) : `.${String(key)}`;
  return out === '' ? 'the body' : out;
}

/** The first problem in words (`data[4].balance must be an integer (got a decimal number)`), and how many more. */
export function describeIssues(error: z.ZodError, prefix: readonly PropertyKey[] = []): string {
  const [first, ...rest] = error.issues;
  if (!first) return 'the body does not match';
  const text = `${formatPath([...prefix, ...first.path])} ${first.message}`;
  return rest.length === 0 ? text : `${text} (and ${rest.length} more problem${rest.length === 1 ? '' : 's'})`;
}

/** Result of validating a body: the value, or a sentence naming the offending field. */
export type Validated<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Validates a parsed balance-list body. */
export function parseBalanceList(body: unknown): Validated<ParsedWallet[]> {
  const result = balanceListSchema.safeParse(body);
  return result.success ? { ok: true, value: result.data.data } : { ok: false, problem: describeIssues(result.error) };
}

/**
 * Validates a parsed single-wallet body. The gateway does not publish this shape; `data` is
 * accepted as one entry or as an array holding exactly one, and must be the wallet asked for.
 */
export function parseSingleWallet(body: unknown, currency: string): Validated<ParsedWallet> {
  const envelope = singleWalletEnvelopeSchema.safeParse(body);
  if (!envelope.success) return { ok: false, problem: describeIssues(envelope.error) };
  const data = envelope.data.data;
  let entry: unknown = data;
  let path: PropertyKey[] = ['data'];
  if (Array.isArray(data)) {
    if (data.length !== 1) return { ok: false, problem: `data must be one wallet or an array of exactly one (got an array of ${data.length})` };
    entry = data[0];
    path = ['data', 0];
  }
  const parsed = walletEntrySchema.safeParse(entry);
  if (!parsed.success) return { ok: false, problem: describeIssues(parsed.error, path) };
  if (parsed.data.currency !== currency) {
    return { ok: false, problem: `${formatPath([...path, 'currency'])} is "${parsed.data.currency}" but the wallet asked for was "${currency}"` };
  }
  return { ok: true, value: parsed.data };
}
