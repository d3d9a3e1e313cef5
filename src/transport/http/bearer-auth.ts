import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { DEFAULT_SCOPES, requestAuthInfo } from '../../mcp/auth-info.js';

/** An authenticated request: its principal (never the token) and what handlers learn of it. */
export interface RequestAuth {
  principal: string;
  info: AuthInfo;
}

/** A refused request: the HTTP answer (401 with a `WWW-Authenticate` challenge, 403, or 503). */
export interface AuthRefusal {
  status: 401 | 403 | 503;
  message: string;
  headers: Record<string, string>;
  /** For the log: why (never the token). Undefined when no token was sent. */
  reason?: string;
}

export type AuthResult = { ok: true; auth: RequestAuth } | { ok: false; refusal: AuthRefusal };

/** Checks a request's `Authorization` header: the static token, or OAuth access tokens (`createJwtAuth`). */
export type Authenticate = (authorization: string | undefined) => Promise<AuthResult>;

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerTokenOf(authorization: string | undefined): string | undefined {
  return /^Bearer +([\x21-\x7e]+) *$/i.exec(authorization ?? '')?.[1];
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * The principal a token stands for: the first 16 hex digits of its sha256. Safe to log and to store in the audit
 * log; the token itself never leaves this module.
 */
export const principalOf = (token: string): string => digest(token).toString('hex').slice(0, 16);

/**
 * The check for one configured token. Compares sha256 digests with `timingSafeEqual`, so the time taken depends
 * neither on where a wrong token differs nor on its length. The token grants every scope.
 */
export function createStaticTokenAuth(token: string): Authenticate {
  const expected = digest(token);
  const principal = principalOf(token);
  const info = requestAuthInfo(principal, [DEFAULT_SCOPES.read, DEFAULT_SCOPES.run]);
  const refuse = (reason?: string): AuthResult => ({
    ok: false,
    refusal: {
      status: 401,
      message: 'Unauthorized: send "Authorization: Bearer <token>"',
      headers: {
        'www-authenticate':
          reason === undefined
            ? 'Bearer realm="skills-mcp"'
            : 'Bearer realm="skills-mcp", error="invalid_token"',
      },
      ...(reason === undefined ? {} : { reason }),
    },
  });
  return (authorization) => {
    const presented = bearerTokenOf(authorization);
    if (presented === undefined) return Promise.resolve(refuse());
    return Promise.resolve(
      timingSafeEqual(digest(presented), expected)
        ? { ok: true, auth: { principal, info } }
        : refuse('wrong token'),
    );
  };
}
