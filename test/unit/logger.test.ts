import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AuthError } from '../../src/errors.js';
import { createLogger, REDACT_PATHS } from '../../src/logger.js';
import { forgetSecretValue, registerSecretValue, Secret } from '../../src/secret.js';

function captureLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level: 'trace', destination }), text: () => lines.join('') };
}

const SECRET = 'sk_live_DO_NOT_LEAK_123';
const TOKEN = 'tok_DO_NOT_LEAK_456';
const PASSWORD = 'pw_DO_NOT_LEAK_789';

describe('logger redaction', () => {
  it('never writes a secret, token, Authorization, Secret-Key or connection password', () => {
    const { logger, text } = captureLogger();
    logger.info({ headers: { authorization: `Bearer ${TOKEN}`, 'secret-key': SECRET, 'Secret-Key': SECRET, Authorization: `Bearer ${TOKEN}` } }, 'request');
    logger.info({ req: { headers: { authorization: `Bearer ${TOKEN}`, 'secret-key': SECRET } } }, 'nested request');
    logger.info({ api_secret: SECRET, apiSecret: SECRET, token: TOKEN, access_token: TOKEN }, 'credentials');
    logger.info({ body: { data: { access_token: TOKEN, token: TOKEN } } }, 'token response');
    logger.info({ secret: new Secret(SECRET) }, 'wrapped secret');
    logger.info({ connectionString: `postgres://u:${PASSWORD}@db/x` }, 'db');
    const gotLike = Object.assign(new Error(`failed for postgres://u:${PASSWORD}@db/x`), { options: { headers: { authorization: `Bearer ${TOKEN}`, 'secret-key': SECRET } } });
    logger.error({ err: gotLike }, 'got error');
    logger.error({ error: gotLike }, 'got error under error');
    logger.error({ err: new AuthError('refused', { cause: gotLike }) }, 'wrapped');
    const out = text();
    for (const value of [SECRET, TOKEN, PASSWORD]) expect(out).not.toContain(value);
    expect(out.split('\n').filter(Boolean)).toHaveLength(9);
    expect(out).toContain('[redacted]');
  });

  it('pins the shape of a logged error', () => {
    const { logger, text } = captureLogger();
    logger.error({ err: new AuthError('the gateway refused the API secret') }, 'failed');
    const line = JSON.parse(text()) as { err: unknown };
    expect(line.err).toEqual({ type: 'AuthError', message: 'the gateway refused the API secret', code: 'E_AUTH' });
  });
});

describe('logger redaction by path, at any depth', () => {
  const keys = ['secret', 'secret-key', 'Secret-Key', 'token', 'access_token', 'authorization', 'Authorization', 'password'] as const;
  const nest = (depth: number, key: string, value: unknown): Record<string, unknown> => {
    let object: Record<string, unknown> = { [key]: value, visible: 'kept' };
    for (let level = 1; level < depth; level++) object = { [`level${level}`]: object };
    return object;
  };

  it.each(keys.flatMap((key) => [1, 2, 3].map((depth) => [key, depth] as const)))('censors %s at depth %i and keeps its siblings', (key, depth) => {
    const { logger, text } = captureLogger();
    // An unregistered value: only the path can catch it.
    const value = `unregistered_${key}_${depth}_value`;
    logger.info(nest(depth, key, value), 'nested');
    const line = text();
    expect(line).not.toContain(value);
    expect(line).toContain('"visible":"kept"');
    expect(line).toContain(`"${key}":"[redacted]"`);
  });

  it('masks a connection-string password at any depth, without eating the next field', () => {
    const { logger, text } = captureLogger();
    logger.info({ a: { b: { c: { d: { url: `postgres://recon:${PASSWORD}@db:5432/recon` } } } }, port: 'http://host:80', next: 'a@b' }, 'db');
    const line = JSON.parse(text()) as { a: { b: { c: { d: { url: string } } } }; port: string; next: string };
    expect(line.a.b.c.d.url).toBe('postgres://recon:***@db:5432/recon');
    expect(line.port).toBe('http://host:80');
    expect(line.next).toBe('a@b');
  });

  it('is configured as wildcard paths for every key', () => {
    expect(REDACT_PATHS).toEqual(expect.arrayContaining(['token', '*.token', '*.*.token', '["secret-key"]', '*["secret-key"]', '*.*["secret-key"]']));
  });
});

describe('logger masking by value', () => {
  it('masks a configured secret echoed in a message, in an error and under an innocent key', () => {
    const echoed = 'sk_live_ECHOED_by_gateway_42';
    new Secret(echoed);
    const { logger, text } = captureLogger();
    logger.warn(`gateway said: invalid key ${echoed}`);
    logger.error({ err: new Error(`body: {"secret":"${echoed}"}`) }, 'failed');
    logger.info({ deep: { deeper: { deepest: { detail: `x${echoed}y` } } } }, 'innocent key');
    const out = text();
    expect(out).not.toContain(echoed);
    expect(out.match(/\[redacted\]/g)).toHaveLength(3);
  });

  it('masks a registered token, also when JSON escaping changes how it is written, until it is forgotten', () => {
    const token = 'tok_"quoted"_\\slash_value';
    registerSecretValue(token);
    const { logger, text } = captureLogger();
    logger.info({ detail: token }, `token ${token} refused`);
    expect(text()).not.toContain(JSON.stringify(token).slice(1, -1));
    expect(text()).toContain('token [redacted] refused');
    forgetSecretValue(token);
    logger.info({ detail: token }, 'after');
    expect(text()).toContain(JSON.stringify(token).slice(1, -1));
  });
});
