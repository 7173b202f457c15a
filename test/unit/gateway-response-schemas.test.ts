import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parseJsonLosslessly } from '../../src/lossless-json.js';
import { describeIssues, parseBalanceList, parseSingleWallet } from '../../src/gateway/response-schemas.js';

const envelope = (data: string) => `{"code":200,"status":"success","message":"Completed","data":${data}}`;
const list = (json: string) => parseBalanceList(parseJsonLosslessly(json));

describe('balance list schema', () => {
  it('keeps integers beyond 2^53 exact', () => {
    expect(list(envelope('[{"currency":"EUR","balance":9007199254740993},{"currency":"JPY","balance":-12}]'))).toEqual({
      ok: true,
      value: [
        { currency: 'EUR', balance: 9007199254740993n },
        { currency: 'JPY', balance: -12n },
      ],
    });
  });

  it.each([
    ['1.5', 'a decimal number'],
    ['100.0', 'a decimal number'],
    ['1e3', 'a number in exponent notation'],
    ['"100"', 'a string'],
    ['null', 'null'],
  ])('rejects balance %s as %s', (balance, kind) => {
    const data = `[{"currency":"EUR","balance":1},{"currency":"USD","balance":1},{"currency":"GBP","balance":1},{"currency":"CHF","balance":1},{"currency":"JPY","balance":${balance}}]`;
    expect(list(envelope(data))).toEqual({ ok: false, problem: `data[4].balance must be an integer (got ${kind})` });
  });

  it('names a missing field and a bad currency', () => {
    expect(list(envelope('[{"currency":"EUR"}]'))).toEqual({ ok: false, problem: 'data[0].balance is missing' });
    expect(list(envelope('[{"currency":"eur","balance":1}]'))).toEqual({
      ok: false,
      problem: 'data[0].currency must be a three-letter uppercase code such as EUR (got "eur")',
    });
  });

  it('checks the envelope', () => {
    expect(list('{"code":500,"status":"error","message":"x","data":[]}')).toEqual({ ok: false, problem: 'status must be "success" (got "error")' });
    expect(list('{"code":200,"status":"success","message":"x","data":{}}')).toEqual({ ok: false, problem: 'data must be an array (got an object)' });
    expect(list('[]')).toEqual({ ok: false, problem: 'the body must be an object (got an array)' });
    // A parsed number is an object to JavaScript; it must still read as a number, not as missing fields.
    expect(list('5')).toEqual({ ok: false, problem: 'the body must be an object (got an integer)' });
    expect(list(envelope('[{"currency":"EUR","balance":1},2.5]'))).toEqual({ ok: false, problem: 'data[1] must be an object (got a decimal number)' });
    expect(list('{"status":"success","message":"x","data":[]}')).toEqual({ ok: false, problem: 'code is missing' });
    expect(list('{"code":200,"message":"x","data":[]}')).toEqual({ ok: false, problem: 'status is missing' });
  });

  it('quotes an unexpected status briefly, and describes one that is not a string by kind', () => {
    expect(list('{"code":500,"status":"abcdefghijkl","message":"x","data":[]}')).toEqual({ ok: false, problem: 'status must be "success" (got "abcdefghijkl")' });
    expect(list('{"code":500,"status":"abcdefghijklm","message":"x","data":[]}')).toEqual({ ok: false, problem: 'status must be "success" (got "abcdefghijkl…")' });
    expect(list('{"code":500,"status":7,"message":"x","data":[]}')).toEqual({ ok: false, problem: 'status must be "success" (got an integer)' });
  });

  it('counts further problems', () => {
    const result = list(envelope('[{"currency":"e","balance":1.5}]'));
    expect(result).toEqual({ ok: false, problem: 'data[0].currency must be a three-letter uppercase code such as EUR (got "e") (and 1 more problem)' });
    expect(list(envelope('[{"currency":"e","balance":1.5},{"currency":"EUR"}]'))).toEqual({
      ok: false,
      problem: 'data[0].currency must be a three-letter uppercase code such as EUR (got "e") (and 2 more problems)',
    });
  });

  it('has a sentence even for an error without issues', () => {
    expect(describeIssues(new z.ZodError([]))).toBe('the body does not match');
  });
});

describe('single wallet schema', () => {
  const one = (json: string, currency = 'EUR') => parseSingleWallet(parseJsonLosslessly(json), currency);

  it('accepts an object or a one-element array', () => {
    expect(one(envelope('{"currency":"EUR","balance":5}'))).toEqual({ ok: true, value: { currency: 'EUR', balance: 5n } });
    expect(one(envelope('[{"currency":"EUR","balance":5}]'))).toEqual({ ok: true, value: { currency: 'EUR', balance: 5n } });
  });

  it('refuses another wallet, several wallets, and bad fields with their path', () => {
    expect(one(envelope('{"currency":"USD","balance":5}'))).toEqual({ ok: false, problem: 'data.currency is "USD" but the wallet asked for was "EUR"' });
    expect(one(envelope('[]'))).toMatchObject({ ok: false, problem: expect.stringContaining('got an array of 0') });
    expect(one(envelope('[{"currency":"EUR","balance":5.5}]'))).toEqual({ ok: false, problem: 'data[0].balance must be an integer (got a decimal number)' });
    expect(one(envelope('{"currency":"EUR"}'))).toEqual({ ok: false, problem: 'data.balance is missing' });
    expect(one(envelope('5'))).toEqual({ ok: false, problem: 'data must be an object (got an integer)' });
  });

  it('checks the envelope around a single wallet', () => {
    expect(one('{"code":200,"status":"failed","message":"x","data":{"currency":"EUR","balance":5}}')).toEqual({ ok: false, problem: 'status must be "success" (got "failed")' });
    expect(one('"EUR 5"')).toEqual({ ok: false, problem: 'the body must be an object (got a string)' });
  });
});
