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

const SEND =
  'send the token this server was started with (its --token-file or SKILLS_MCP_TOKEN) as the header "Authorization: Bearer <token>"; it takes no OAuth sign-in';
const NO_TOKEN = `Unauthorized: ${SEND}`;
const WRONG_TOKEN = `Unauthorized: the bearer token sent is not this server's token: ${SEND}`;
/** The challenge's `error_description`: RFC 6750 allows no `"` or `\\` in it. */
const WRONG_TOKEN_DESCRIPTION =
  "not this server's token: send Authorization: Bearer <the token the server was started with>; no OAuth sign-in here";

/**
 * The check for one configured token. Compares sha256 digests with `timingSafeEqual`, so the time taken depends
 * neither on where a wrong token differs nor on its length. The token grants every scope.
 */
export function createStaticTokenAuth(token: string): Authenticate {
  const expected = digest(token);
  const principal = principalOf(token);
  const info = requestAuthInfo(principal, [DEFAULT_SCOPES.read, DEFAULT_SCOPES.run]);
  // No `resource_metadata`: there is no OAuth here, and the answer says what to send instead. Without a token sent,
  // the challenge carries no error (RFC 6750 §3); the body says it all.
  const refuse = (reason?: string): AuthResult => ({
    ok: false,
    refusal: {
      status: 401,
      message: reason === undefined ? NO_TOKEN : WRONG_TOKEN,
      headers: {
        'www-authenticate':
          reason === undefined
            ? 'Bearer realm="skills-mcp"'
            : `Bearer realm="skills-mcp", error="invalid_token", error_description="${WRONG_TOKEN_DESCRIPTION}"`,
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
