import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { AuthError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { Secret } from '../../src/secret.js';

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
