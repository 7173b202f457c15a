import * as z from 'zod';
import { parseDuration } from '../business-date/duration.js';
import { parseOutgoingUrl } from '../gateway/base-url.js';
import { Secret } from '../secret.js';
import { describeIssue } from './config-problems.js';
import type { NotificationSettings } from './config-types.js';
import { positiveInt } from './schema-helpers.js';

/** The notification channels' variables, part of the one environment schema. */
export const notificationVariables = {
  RECON_WEBHOOK_URL: z.string().optional(),
  RECON_WEBHOOK_SECRET: z
    .string()
    .optional()
    .refine((v) => v === undefined || isWebhookSecret(v), 'must be whsec_ followed by the base64 of 24 to 64 random bytes (for example: echo "whsec_$(openssl rand -base64 32)")'),
  RECON_SLACK_WEBHOOK_URL: z.string().optional(),
  RECON_SMTP_URL: z.string().optional(),
  RECON_MAIL_FROM: z.string().optional().refine((v) => v === undefined || isMailAddress(v), 'must be an e-mail address such as recon@example.com or "Recon <recon@example.com>"'),
  RECON_MAIL_TO: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined) return undefined;
      const list = v.split(',').map((a) => a.trim()).filter(Boolean);
      if (list.length === 0 || !list.every(isMailAddress)) {
        ctx.addIssue({ code: 'custom', message: 'must be a comma-separated list of e-mail addresses such as finance@example.com,ops@example.com' });
        return z.NEVER;
      }
      return list;
    }),
  RECON_NOTIFY_MAX_ATTEMPTS: positiveInt(100, 'attempts').default(10),
  // Renewed every third of itself while a row is sent, so it only runs out when its sender stopped
  // (died, or frozen longer than the lease); then another replica sends the row again.
  RECON_NOTIFY_LEASE: z
    .string()
    .default('2m')
    .transform((v, ctx) => {
      const ms = parseDuration(v);
      if (ms === undefined || ms < 300 || ms > 3_600_000) {
        ctx.addIssue({ code: 'custom', message: "must be a duration from 300ms to 1h, such as 90s or 2m (how long a claimed notification stays one sender's)" });
        return z.NEVER;
      }
      return ms;
    }),
};

type NotificationValues = z.output<z.ZodObject<typeof notificationVariables>>;

function isWebhookSecret(value: string): boolean {
  const base64 = value.startsWith('whsec_') ? value.slice('whsec_'.length) : value;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return false;
  const bytes = Buffer.from(base64, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}

function isMailAddress(value: string): boolean {
  return /^[^\s@<>]+@[^\s@<>]+$/.test(value) || /^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(value.trim());
}

/** Channels configured by halves, and endpoint URLs that would send credentials in clear. */
export function notificationProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const pairs: Array<[string, string[]]> = [
    ['RECON_WEBHOOK_URL', ['RECON_WEBHOOK_SECRET']],
    ['RECON_SMTP_URL', ['RECON_MAIL_FROM', 'RECON_MAIL_TO']],
  ];
  for (const [main, needed] of pairs) {
    for (const other of needed) {
      if (env[main] !== undefined && env[other] === undefined) problems.push(`${other} is required when ${main} is set`);
      if (env[main] === undefined && env[other] !== undefined) problems.push(`${other} is set but ${main} is not: set both, or neither`);
    }
  }
  for (const variable of ['RECON_WEBHOOK_URL', 'RECON_SLACK_WEBHOOK_URL', 'RECON_PUSHGATEWAY_URL'] as const) {
    const value = env[variable];
    const problem = value === undefined ? undefined : checkEndpointUrl(value);
    if (problem) problems.push(describeIssue(variable, value, problem));
  }
  const smtp = env.RECON_SMTP_URL;
  if (smtp !== undefined && !/^smtps?:\/\/[^/]+/.test(smtp)) problems.push(describeIssue('RECON_SMTP_URL', smtp, 'must be an smtp:// or smtps:// URL such as smtps://user:password@smtp.example.com:465'));
  return problems;
}

/** Checks an outgoing endpoint (webhook, Slack, Pushgateway): the gateway's rule, never naming the host (the URL is a secret). */
export function checkEndpointUrl(value: string): string | undefined {
  const parsed = parseOutgoingUrl(value, { why: 'what is sent cannot be read or changed on the way', nameHost: false });
  return 'problem' in parsed ? parsed.problem : undefined;
}

/** The channels from validated values (notificationProblems has made sure each is whole). */
export function notificationSettingsOf(v: NotificationValues): NotificationSettings {
  return {
    webhook: v.RECON_WEBHOOK_URL === undefined ? undefined : { url: new Secret(v.RECON_WEBHOOK_URL), secret: new Secret(v.RECON_WEBHOOK_SECRET!) },
    slack: v.RECON_SLACK_WEBHOOK_URL === undefined ? undefined : { url: new Secret(v.RECON_SLACK_WEBHOOK_URL) },
    email: v.RECON_SMTP_URL === undefined ? undefined : { smtpUrl: new Secret(v.RECON_SMTP_URL), from: v.RECON_MAIL_FROM!, to: v.RECON_MAIL_TO! },
    maxAttempts: v.RECON_NOTIFY_MAX_ATTEMPTS,
    leaseMs: v.RECON_NOTIFY_LEASE,
  };
}
