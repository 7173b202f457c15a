/** ` (account "eu-main")`, or nothing when the client was not given an account name. */
export function accountSuffix(account: string | undefined): string {
  return account === undefined ? '' : ` (account "${account}")`;
}

/** `for account "eu-main"`-style phrase for sentences about credentials. */
export function forAccount(account: string | undefined): string {
  return account === undefined ? '' : ` for account "${account}"`;
}

/** `GET /v1/data/wallets/balances`: method and path, never the query. */
export function requestLabel(method: string, url: URL): string {
  return `${method} ${url.pathname}`;
}

/** "1 attempt" / "5 attempts". */
export function attempts(count: number): string {
  return `${count} attempt${count === 1 ? '' : 's'}`;
}

/**
 * A short, printable excerpt of a body that is not secret (never the token response), with
 * anything long and token-like masked, for "not JSON" messages.
 */
export function bodyExcerpt(body: string): string {
  const flat = body
    .slice(0, 200)
    .replace(/\p{Cc}+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[A-Za-z0-9+/_=.~-]{24,}/g, '[…]');
  return flat.length > 60 ? `${flat.slice(0, 60)}…` : flat;
}
