/**
 * The parts of a configured receiver URL that carry a secret: its user info, its query string and
 * each query value, and for a URL whose path is the credential (Slack's incoming webhooks,
 * /services/T…/B…/token) each path segment. Raw and decoded spellings both, longest first.
 */
export function secretPartsOfUrl(url: string, options: { secretPath: boolean }): string[] {
  const u = new URL(url);
  const parts = new Set<string>();
  const add = (value: string) => {
    if (value.length < 3) return;
    parts.add(value);
    try {
      parts.add(decodeURIComponent(value));
    } catch {
      // Not percent-encoded text: the raw spelling is enough.
    }
  };
  add(u.username);
  add(u.password);
  if (u.search.length > 1) {
    add(u.search.slice(1));
    for (const pair of u.search.slice(1).split('&')) add(pair.slice(pair.indexOf('=') + 1));
  }
  if (options.secretPath) {
    add(u.pathname.replace(/^\/services\//, '/').slice(1));
    for (const segment of u.pathname.split('/')) if (segment !== 'services') add(segment);
  }
  return [...parts].filter((p) => p.length >= 3).sort((a, b) => b.length - a.length);
}

/** `text` (a receiver's answer, an error message) with every secret part of the URL replaced by `[redacted]`. */
export function maskUrlSecrets(text: string, secrets: readonly string[]): string {
  let masked = text;
  for (const secret of secrets) masked = masked.split(secret).join('[redacted]');
  return masked;
}
