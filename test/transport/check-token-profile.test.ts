import { describe, expect, it } from 'vitest';
import { checkTokenTimes, checkTokenType } from '../../src/transport/http/check-token-profile.js';
import { keySetMaxAge, type IssuerKeysOptions } from '../../src/transport/http/issuer-keys.js';

describe('the RFC 9068 checks of an access token', () => {
  it.each<[string, unknown, string[], boolean]>([
    ['at+jwt', 'at+jwt', ['at+jwt'], true],
    ['application/at+jwt', 'application/at+jwt', ['at+jwt'], true],
    ['another case', 'Application/AT+JWT', ['at+jwt'], true],
    ['JWT by default', 'JWT', ['at+jwt'], false],
    ['JWT when listed', 'jwt', ['at+jwt', 'JWT'], true],
    ['no typ', undefined, ['at+jwt'], false],
    ['no typ when "" is listed', undefined, ['at+jwt', ''], true],
    ['an empty typ, even when "" is listed', '', ['at+jwt', ''], false],
    ['a DPoP proof', 'dpop+jwt', ['at+jwt', 'JWT'], false],
    ['a logout token', 'logout+jwt', ['at+jwt'], false],
    ['a number', 7, ['at+jwt'], false],
    ['application/ alone', 'application/', ['at+jwt', ''], false],
  ])('typ: %s', (_what, typ, accepted, ok) => {
    const problem = checkTokenType(typ, accepted);
    if (ok) expect(problem).toBeUndefined();
    else expect(problem).toMatch(/typ header/);
  });

  it('never names the typ the token sent, nor puts a double quote in the description', () => {
    const problem = checkTokenType('"evil\r\nheader', ['at+jwt', 'JWT']);
    expect(problem).toBe('the token is not an access token: its typ header is not at+jwt, JWT');
  });

  const times = { now: 1_000_000, skew: 30, maxLifetime: 86400 };
  it.each<[string, { iat?: number; exp?: number }, RegExp | undefined]>([
    ['issued now', { iat: 1_000_000, exp: 1_000_600 }, undefined],
    ['issued within the skew ahead', { iat: 1_000_030, exp: 1_000_600 }, undefined],
    ['issued beyond the skew ahead', { iat: 1_000_031, exp: 1_000_600 }, /in the future/],
    ['issued a year ahead', { iat: 1_000_000 + 365 * 86400, exp: 1_000_000 + 366 * 86400 }, /in the future/],
    ['without iat', { exp: 1_000_600 }, /no iat/],
    ['living exactly the maximum', { iat: 1_000_000, exp: 1_086_400 }, undefined],
    ['living a second longer', { iat: 1_000_000, exp: 1_086_401 }, /lifetime/],
    ['living 1,000 years', { iat: 1_000_000, exp: 1_000_000 + 1000 * 365 * 86400 }, /lifetime/],
  ])('times: %s', (_what, payload, problem) => {
    const found = checkTokenTimes(payload, times);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });
});

describe("how long the issuer's key set is used", () => {
  const o = { maxAgeMs: 300_000, minRefetchMs: 5_000 } as IssuerKeysOptions;
  it.each<[string, string | null, number]>([
    ['no Cache-Control: the configured maximum', null, 300_000],
    ['a shorter max-age', 'public, max-age=60', 60_000],
    ['a longer max-age: capped', 'max-age=86400, must-revalidate', 300_000],
    ['max-age=0: the refetch interval', 'max-age=0', 5_000],
    ['no-store: the refetch interval', 'no-store', 5_000],
    ['no-cache: the refetch interval', 'public, no-cache', 5_000],
    ['s-maxage only: the configured maximum', 's-maxage=10', 300_000],
    ['garbage: the configured maximum', 'max-age=soon', 300_000],
  ])('%s', (_what, header, ms) => {
    expect(keySetMaxAge(header, o)).toBe(ms);
  });
});
