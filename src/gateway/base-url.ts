/** A single word (Bearer, Token), or empty for a bare token. */
export const AUTH_SCHEME_PATTERN = /^[A-Za-z][A-Za-z0-9._-]*$|^$/;

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1']);

/** Whether a host name is loopback: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The rule for every address wallet-recon sends something to (the gateway, a webhook, Slack, a
 * Pushgateway): https, or http to a loopback host only. Returns the parsed URL, or the problem
 * phrased to follow the variable's name. `why` completes "use https:// so …"; `nameHost` is off
 * where the URL itself is a secret.
 */
export function parseOutgoingUrl(value: string, options: { why: string; nameHost: boolean }): { url: URL } | { problem: string } {
  // "localhost:4010" parses as a URL of scheme "localhost:": say what is missing instead.
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    return { problem: options.nameHost ? `has no scheme: write it as https://${value}, or as http://${value} if it is a loopback host such as localhost or 127.0.0.1` : 'has no scheme: it must start with https:// (or http:// for a loopback host)' };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: 'is not a URL' };
  }
  if (url.protocol === 'https:') return { url };
  if (url.protocol === 'http:') {
    if (isLoopbackHost(url.hostname)) return { url };
    return { problem: `uses http:// for a host that is not loopback${options.nameHost ? ` (${url.hostname})` : ''}; use https:// so ${options.why}` };
  }
  return { problem: `must start with https:// (got ${url.protocol}//)` };
}

/** Checks a gateway base URL: https, or http on a loopback host only, with no credentials, query or fragment. */
export function checkBaseUrl(value: string): string | undefined {
  const parsed = parseOutgoingUrl(value, { why: 'credentials are not sent in clear', nameHost: true });
  if ('problem' in parsed) return parsed.problem;
  if (parsed.url.username || parsed.url.password) return 'must not contain a user name or password';
  if (parsed.url.search || parsed.url.hash) return 'must not contain a query or fragment';
  return undefined;
}
