import { describe, expect, it } from 'vitest';
import { parseJsonLosslessly } from '../../src/gateway/lossless-json.js';
import { readTokenResponse } from '../../src/gateway/token-response.js';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const read = (json: string) => readTokenResponse(parseJsonLosslessly(json), NOW);

describe('readTokenResponse', () => {
  it.each([
    ['access_token at the top level', '{"access_token":"t1"}'],
    ['token at the top level', '{"token":"t1"}'],
    ['access_token inside data', '{"code":200,"status":"success","message":"ok","data":{"access_token":"t1"}}'],
    ['token inside data', '{"data":{"token":"t1"}}'],
  ])('accepts %s', (_name, json) => {
    expect(read(json)).toEqual({ ok: true, token: { value: 't1', expiresAt: undefined } });
  });

  it('reads expires_in as seconds from now', () => {
    expect(read('{"access_token":"t","expires_in":3600}')).toEqual({ ok: true, token: { value: 't', expiresAt: NOW + 3_600_000 } });
    expect(read('{"data":{"token":"t","expires_in":"60"}}')).toMatchObject({ token: { expiresAt: NOW + 60_000 } });
  });

  it('reads expires_at as ISO-8601 or epoch seconds', () => {
    expect(read('{"token":"t","expires_at":"2026-11-21T13:00:00Z"}')).toMatchObject({ token: { expiresAt: NOW + 3_600_000 } });
    expect(read(`{"token":"t","expires_at":${(NOW + 120_000) / 1000}}`)).toMatchObject({ token: { expiresAt: NOW + 120_000 } });
  });

  it('takes the expiry from the envelope when the token sits inside data', () => {
    expect(read('{"expires_in":10,"data":{"access_token":"t"}}')).toMatchObject({ token: { expiresAt: NOW + 10_000 } });
  });

  it('names the fields of an unknown shape but never their values', () => {
    const reading = read('{"jwt":"SECRET-VALUE-1","data":{"bearer":"SECRET-VALUE-2"},"ttl":5}');
    expect(reading.ok).toBe(false);
    const problem = (reading as { problem: string }).problem;
    expect(problem).toContain('jwt');
    expect(problem).toContain('data.bearer');
    expect(problem).toContain('ttl');
    expect(problem).not.toContain('SECRET-VALUE');
  });

  it('hides field names that could themselves be credentials', () => {
    const reading = read('{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijkl":true}');
    expect((reading as { problem: string }).problem).toContain('1 more with unusual names (not shown)');
    expect((reading as { problem: string }).problem).not.toContain('eyJ');
  });

  it('refuses a token that is not a non-empty string, and a bad expiry, by kind only', () => {
    expect(read('{"access_token":12345}')).toEqual({ ok: false, problem: 'access_token must be a non-empty string (got an integer)' });
    expect(read('{"access_token":""}')).toEqual({ ok: false, problem: 'access_token must be a non-empty string (got an empty string)' });
    expect(read('{"access_token":"t","expires_in":"soon"}')).toEqual({ ok: false, problem: 'expires_in must be a number of seconds (got a string)' });
    expect(read('{"access_token":"t","expires_at":"tomorrow"}')).toMatchObject({ ok: false });
  });

  it('describes a body that is not an object', () => {
    expect(read('["t"]')).toEqual({ ok: false, problem: 'expected access_token or token, at the top level or inside data; the body is an array, not an object' });
  });
});
