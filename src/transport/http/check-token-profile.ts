import type { JWTPayload } from 'jose';

/** A `typ` value as RFC 7515 §4.1.9 compares media types: without case, `application/` implied. */
export const normalizeTokenType = (typ: string): string => {
  const lower = typ.toLowerCase();
  return lower.startsWith('application/') ? lower.slice('application/'.length) : lower;
};

/**
 * Why a token's `typ` header is not one of `accepted` (RFC 9068 §2.1: `at+jwt`), or undefined when it is. `""` in
 * `accepted` lets in a token without `typ`. The description never quotes the token's own value, nor uses `"`
 * (RFC 6750 leaves it out of `error_description`).
 */
export function checkTokenType(typ: unknown, accepted: readonly string[]): string | undefined {
  const wanted = new Set(accepted.map(normalizeTokenType));
  const shown = accepted.filter((t) => t !== '').join(', ');
  if (typ === undefined)
    return wanted.has('') ? undefined : `the token has no typ header; an access token says ${shown}`;
  const given = typeof typ === 'string' ? normalizeTokenType(typ) : '';
  if (given !== '' && wanted.has(given)) return undefined;
  return `the token is not an access token: its typ header is not ${shown}`;
}

export interface TokenTimes {
  /** Now, in seconds since the epoch. */
  now: number;
  /** Clock skew allowed on `iat` (s). */
  skew: number;
  /** Longest `exp` − `iat` allowed (s). */
  maxLifetime: number;
}

/**
 * Why a signature-checked token's `iat` is wrong, or undefined when it is not: it must be there (RFC 9068 §2.2),
 * not later than now plus the skew, and at most `maxLifetime` before `exp` (jose has checked both are numbers).
 */
export function checkTokenTimes(payload: JWTPayload, t: TokenTimes): string | undefined {
  const { iat, exp } = payload;
  if (iat === undefined) return 'the token has no iat claim saying when it was issued';
  if (iat > t.now + t.skew) return "the token's iat claim says it was issued in the future";
  if (exp !== undefined && exp - iat > t.maxLifetime)
    return `the token's lifetime (exp - iat) is longer than the ${t.maxLifetime} s allowed`;
  return undefined;
}
