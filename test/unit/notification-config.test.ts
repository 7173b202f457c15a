import { tmpdir } from 'node:os';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { ConfigError } from '../../src/errors.js';
import { configuredChannels } from '../../src/notifications/outbox.js';

const load = (env: Record<string, string>) => loadConfig({ env, cwd: tmpdir(), ignoreDotEnv: true });
const SECRET = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;

function problemsOf(env: Record<string, string>): string[] {
  try {
    load(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('notification and metrics settings', () => {
  it('has no channel and no metrics endpoint by default; metrics bind to loopback and keep the account label', () => {
    const config = load({});
    expect(configuredChannels(config)).toEqual([]);
    expect(config.notifications.maxAttempts).toBe(10);
    expect(config.metrics).toEqual({ port: undefined, host: '127.0.0.1', perAccount: true, pushgatewayUrl: undefined });
  });

  it('reads every channel, keeping URLs and the signing secret as secrets', () => {
    const config = load({
      RECON_WEBHOOK_URL: 'https://hooks.example.com/recon/tok123',
      RECON_WEBHOOK_SECRET: SECRET,
      RECON_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/xyz',
      RECON_SMTP_URL: 'smtps://user:mailpass@smtp.example.com:465',
      RECON_MAIL_FROM: 'Recon <recon@example.com>',
      RECON_MAIL_TO: 'finance@example.com, ops@example.com',
      RECON_METRICS_PORT: '9464',
      RECON_METRICS_PER_ACCOUNT: 'false',
    });
    expect(configuredChannels(config)).toEqual(['webhook', 'slack', 'email']);
    expect(config.notifications.email?.to).toEqual(['finance@example.com', 'ops@example.com']);
    expect(config.metrics).toMatchObject({ port: 9464, perAccount: false });
    const printed = `${inspect(config, { depth: 10 })} ${JSON.stringify(config.notifications)} ${JSON.stringify(config.metrics)}`;
    for (const secret of ['tok123', SECRET, 'xyz', 'mailpass']) expect(printed).not.toContain(secret);
  });

  it('refuses half a channel, plain http to a remote receiver and a weak signing secret, without echoing secrets', () => {
    const problems = problemsOf({
      RECON_WEBHOOK_URL: 'http://hooks.example.com/recon/tok123',
      RECON_WEBHOOK_SECRET: 'whsec_c2hvcnQ=',
      RECON_SMTP_URL: 'smtps://user:mailpass@smtp.example.com',
      RECON_MAIL_TO: 'not-an-address',
      RECON_PUSHGATEWAY_URL: 'ftp://push.example.com',
      RECON_METRICS_PORT: '70000',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^RECON_WEBHOOK_SECRET must be whsec_ followed by the base64 of 24 to 64 random bytes.*\(value hidden\)$/),
        expect.stringMatching(/^RECON_MAIL_TO must be a comma-separated list of e-mail addresses/),
        'RECON_MAIL_FROM is required when RECON_SMTP_URL is set',
        'RECON_WEBHOOK_URL uses http:// for a host that is not loopback; use https:// so what is sent cannot be read or changed on the way (value hidden)',
        'RECON_PUSHGATEWAY_URL must start with https:// (got ftp://) (value hidden)',
        'RECON_METRICS_PORT must be a port number from 1 to 65535, got "70000"',
      ]),
    );
    expect(problems.join('\n')).not.toMatch(/tok123|mailpass/);
    expect(problemsOf({ RECON_WEBHOOK_SECRET: SECRET })).toEqual(['RECON_WEBHOOK_SECRET is set but RECON_WEBHOOK_URL is not: set both, or neither']);
  });

  it('accepts http for loopback receivers (tests, a local relay)', () => {
    expect(configuredChannels(load({ RECON_WEBHOOK_URL: 'http://127.0.0.1:8080/in', RECON_WEBHOOK_SECRET: SECRET, RECON_SLACK_WEBHOOK_URL: 'http://localhost:9/x' }))).toEqual(['webhook', 'slack']);
  });
});
