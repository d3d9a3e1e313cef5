import { requireScopes, type AuthInfo, type ScopeChallengeHandler } from '@modelcontextprotocol/server';
import type { Config } from '../config/config-schema.js';
import { SkillsError } from '../errors.js';
import type { Caller } from '../gate/caller.js';

/**
 * What the HTTP transport tells handlers about a request's credentials (`ctx.http.authInfo`): the principal (as
 * `clientId`), the granted scopes and, with OAuth, the signed-in caller. The token itself is never handed on.
 */

const CALLER = 'skills-mcp/caller';

export const DEFAULT_SCOPES = { read: 'skills:read', run: 'skills:run' } as const;

/** The scope names in use: `http.oauth.scopes`, else `skills:read` and `skills:run`. */
export const scopeNames = (config: Config): { read: string; run: string } =>
  config.http.oauth?.scopes ?? DEFAULT_SCOPES;

/** The AuthInfo of an authenticated request. */
export function requestAuthInfo(
  principal: string,
  scopes: readonly string[],
  more: { caller?: Caller; expiresAt?: number; resource?: URL; resourceMetadataUrl?: string } = {},
): AuthInfo {
  const { caller, ...rest } = more;
  return {
    token: '',
    clientId: principal,
    scopes: [...scopes],
    ...rest,
    ...(caller === undefined ? {} : { extra: { [CALLER]: caller } }),
  };
}

/** The signed-in caller a request's AuthInfo carries, if any. */
export const callerOf = (info: AuthInfo | undefined): Caller | undefined =>
  info?.extra?.[CALLER] as Caller | undefined;

/**
 * The scope challenge of tools that run skill scripts: the SDK answers an authenticated request lacking either
 * scope with HTTP 403 and `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` before the call is
 * dispatched, so a client can ask its user to consent to more (step-up). Unauthenticated requests (stdio,
 * loopback HTTP without a token) pass.
 */
export const runScopeChallenge = (config: Config): ScopeChallengeHandler => {
  const { read, run } = scopeNames(config);
  return requireScopes(read, run);
};

/**
 * The same rule inside the handler, for any path the challenge did not cover: an authenticated request without the
 * run scope is refused as a tool error that says what is missing.
 */
export function assertRunScope(info: AuthInfo | undefined, config: Config): void {
  const { run } = scopeNames(config);
  if (info === undefined || info.scopes.includes(run)) return;
  throw new SkillsError('SCOPE_MISSING', `this call runs a skill script, which needs the "${run}" scope`, {
    hint: `Your access token grants ${info.scopes.length === 0 ? 'no scopes' : info.scopes.join(' ')}. Sign in again asking for "${run}", or ask the operator to grant it; reading skills works without it.`,
  });
}
