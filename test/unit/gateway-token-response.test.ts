import { describe, expect, it } from 'vitest';
import { parseJsonLosslessly } from '../../src/lossless-json.js';
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

  it.each([
    ['a string', '"tok_abc"'],
    ['null', 'null'],
    ['an integer', '42'],
    ['a boolean', 'true'],
  ])('describes a body that is %s without reading into it', (kind, json) => {
    expect(read(json)).toEqual({ ok: false, problem: `expected access_token or token, at the top level or inside data; the body is ${kind}, not an object` });
  });

  it('lists exactly the field names it saw, top level first, then inside data', () => {
    expect(read('{"jwt":"SECRET-VALUE-1","data":{"bearer":"SECRET-VALUE-2"},"ttl":5}')).toEqual({
      ok: false,
      problem: 'expected access_token or token, at the top level or inside data; fields seen: jwt, ttl, data.bearer',
    });
    // A data that is not an object is an ordinary field of the top level.
    expect(read('{"data":[1],"ttl":5}')).toEqual({ ok: false, problem: 'expected access_token or token, at the top level or inside data; fields seen: data, ttl' });
    expect(read('{"data":5}')).toEqual({ ok: false, problem: 'expected access_token or token, at the top level or inside data; fields seen: data' });
  });

  it('counts hidden field names beside shown ones, or alone', () => {
    const longName = `k${'x'.repeat(40)}`;
    expect(read(`{"ttl":1,"${longName}":1,"1abc":2}`)).toEqual({
      ok: false,
      problem: 'expected access_token or token, at the top level or inside data; fields seen: ttl, 2 more with unusual names (not shown)',
    });
    expect(read(`{"${longName}":1}`)).toEqual({
      ok: false,
      problem: 'expected access_token or token, at the top level or inside data; fields seen: 1 more with unusual names (not shown)',
    });
  });

  it('says so when the body has no fields at all', () => {
    const problem = 'expected access_token or token, at the top level or inside data; the body has no fields';
    expect(read('{}')).toEqual({ ok: false, problem });
    expect(read('{"data":{}}')).toEqual({ ok: false, problem });
  });

  it('names the place of a bad token inside data, and treats a blank token as empty', () => {
    expect(read('{"data":{"access_token":""}}')).toEqual({ ok: false, problem: 'data.access_token must be a non-empty string (got an empty string)' });
    expect(read('{"token":"  "}')).toEqual({ ok: false, problem: 'token must be a non-empty string (got an empty string)' });
    expect(read('{"data":{"token":null}}')).toEqual({ ok: false, problem: 'data.token must be a non-empty string (got null)' });
  });

  it('names a bad expiry in the envelope without the data. prefix', () => {
    expect(read('{"expires_in":"soon","data":{"access_token":"t"}}')).toEqual({ ok: false, problem: 'expires_in must be a number of seconds (got a string)' });
  });

  it('treats a null expiry as none', () => {
    expect(read('{"access_token":"t","expires_in":null}')).toEqual({ ok: true, token: { value: 't', expiresAt: undefined } });
    expect(read('{"access_token":"t","expires_at":null}')).toEqual({ ok: true, token: { value: 't', expiresAt: undefined } });
  });

  it('reads expires_in of zero, of a fraction and with spaces', () => {
    expect(read('{"access_token":"t","expires_in":0}')).toMatchObject({ ok: true, token: { expiresAt: NOW } });
    expect(read('{"access_token":"t","expires_in":1.25}')).toMatchObject({ ok: true, token: { expiresAt: NOW + 1250 } });
    expect(read('{"access_token":"t","expires_in":" 60 "}')).toMatchObject({ ok: true, token: { expiresAt: NOW + 60_000 } });
    expect(read('{"access_token":"t","expires_at":" 2026-11-21T13:00:00Z "}')).toMatchObject({ ok: true, token: { expiresAt: NOW + 3_600_000 } });
  });

  it.each([
    ['a boolean', 'true'],
    ['a string', '"x60"'],
    ['a string', '"60x"'],
    ['a string', '"1.5x"'],
    ['a number in exponent notation', '1e3'],
  ])('refuses expires_in that is %s (%s)', (kind, value) => {
    expect(read(`{"access_token":"t","expires_in":${value}}`)).toEqual({ ok: false, problem: `expires_in must be a number of seconds (got ${kind})` });
  });

  it.each([
    ['a boolean', 'true'],
    ['a string', '"tomorrow"'],
    ['a string', '"Sat, 21 Nov 2026 13:00:00 GMT"'],
    ['a string', '"on 2026-11-21"'],
    ['a string', '"2026-11-2"'],
    ['a string', '"2026-99-99"'],
  ])('refuses expires_at that is %s but not ISO-8601 or epoch seconds (%s)', (kind, value) => {
    expect(read(`{"access_token":"t","expires_at":${value}}`)).toEqual({ ok: false, problem: `expires_at must be an ISO-8601 time or epoch seconds (got ${kind})` });
  });

  it('describes a body that is not an object', () => {
    expect(read('["t"]')).toEqual({ ok: false, problem: 'expected access_token or token, at the top level or inside data; the body is an array, not an object' });
  });
});
