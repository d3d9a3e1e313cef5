import { createHash, timingSafeEqual } from 'node:crypto';

/** The result of checking a request's `Authorization` header. */
export type BearerResult = { ok: true; principal: string } | { ok: false; reason: 'missing' | 'invalid' };

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * The principal a token stands for: the first 16 hex digits of its sha256. Safe to log and to store in the audit
 * log; the token itself never leaves this module.
 */
export const principalOf = (token: string): string => digest(token).toString('hex').slice(0, 16);

/**
 * Builds the bearer check for one configured token. Compares sha256 digests with `timingSafeEqual`, so the time
 * taken depends neither on where a wrong token differs nor on its length.
 */
export function createBearerCheck(token: string): (authorization: string | undefined) => BearerResult {
  const expected = digest(token);
  const principal = principalOf(token);
  return (authorization) => {
    const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(authorization ?? '');
    if (match === null) return { ok: false, reason: 'missing' };
    return timingSafeEqual(digest(match[1]!), expected)
      ? { ok: true, principal }
      : { ok: false, reason: 'invalid' };
  };
}
