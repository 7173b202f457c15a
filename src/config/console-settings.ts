import * as z from 'zod';
import { Secret } from '../secret.js';
import type { ConsoleSettings } from './config-types.js';

const ROLES = ['viewer', 'preparer', 'approver', 'admin'] as const;

/** The review console's variables (`wallet-recon console`), part of the one environment schema. */
export const consoleVariables = {
  RECON_CONSOLE_URL: z
    .string()
    .optional()
    .refine((v) => v === undefined || isHttpUrl(v), 'must be the http:// or https:// address people open the console at, such as https://recon.example.com/'),
  RECON_CONSOLE_TRUST_PROXY: z
    .string()
    .optional()
    .refine(
      (v) => v === undefined || /^(true|false|\d{1,2}|[0-9a-fA-F.:/, ]+|loopback|linklocal|uniquelocal)$/.test(v.trim()),
      'must be true, false, a number of proxy hops, or a comma-separated list of proxy addresses or CIDR ranges (e.g. 127.0.0.1,10.0.0.0/8)',
    ),
  RECON_OIDC_ISSUER: z.string().optional().refine((v) => v === undefined || isHttpUrl(v), 'must be the http(s):// address of the OpenID provider (its issuer identifier)'),
  RECON_OIDC_CLIENT_ID: z.string().min(1).optional(),
  RECON_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  RECON_OIDC_ROLE_CLAIM: z.string().min(1).default('roles'),
  RECON_OIDC_ROLE_MAP: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      // Keyed by group names from outside: no prototype, so `__proto__` is an ordinary key.
      const map = Object.create(null) as Record<string, (typeof ROLES)[number]>;
      for (const pair of v.split(',').map((p) => p.trim()).filter(Boolean)) {
        const [claim, role] = pair.split('=').map((s) => s.trim());
        if (!claim || !role || !(ROLES as readonly string[]).includes(role)) {
          ctx.addIssue({ code: 'custom', message: `must be a comma-separated list of CLAIM_VALUE=ROLE with ROLE one of ${ROLES.join(', ')}, such as recon-approvers=approver,finance=viewer` });
          return z.NEVER;
        }
        map[claim] = role as (typeof ROLES)[number];
      }
      return map;
    }),
};

type ConsoleValues = z.output<z.ZodObject<typeof consoleVariables>>;

/** The three OpenID variables come together or not at all. */
export function consoleProblems(env: Record<string, string | undefined>): string[] {
  const set = ['RECON_OIDC_ISSUER', 'RECON_OIDC_CLIENT_ID', 'RECON_OIDC_CLIENT_SECRET'].filter((n) => env[n] !== undefined && env[n] !== '');
  if (set.length === 0 || set.length === 3) return [];
  const missing = ['RECON_OIDC_ISSUER', 'RECON_OIDC_CLIENT_ID', 'RECON_OIDC_CLIENT_SECRET'].filter((n) => !set.includes(n));
  return [`single sign-on needs RECON_OIDC_ISSUER, RECON_OIDC_CLIENT_ID and RECON_OIDC_CLIENT_SECRET (or _FILE) together: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set`];
}

function parseTrustProxy(v: string | undefined): boolean | number | string {
  if (v === undefined || v.trim() === 'false') return false;
  if (v.trim() === 'true') return true;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  return v.trim();
}

export function consoleSettingsOf(v: ConsoleValues): ConsoleSettings {
  return {
    publicUrl: v.RECON_CONSOLE_URL,
    trustProxy: parseTrustProxy(v.RECON_CONSOLE_TRUST_PROXY),
    oidc:
      v.RECON_OIDC_ISSUER === undefined || v.RECON_OIDC_CLIENT_ID === undefined || v.RECON_OIDC_CLIENT_SECRET === undefined
        ? undefined
        : { issuer: v.RECON_OIDC_ISSUER, clientId: v.RECON_OIDC_CLIENT_ID, clientSecret: new Secret(v.RECON_OIDC_CLIENT_SECRET), roleClaim: v.RECON_OIDC_ROLE_CLAIM, roleMap: v.RECON_OIDC_ROLE_MAP ?? (Object.create(null) as Record<string, (typeof ROLES)[number]>) },
  };
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
  } catch {
    return false;
  }
}
