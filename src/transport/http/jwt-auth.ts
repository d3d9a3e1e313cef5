import { createHash } from 'node:crypto';
import {
  OAuthError,
  OAuthErrorCode,
  verifyBearerToken,
  type OAuthTokenVerifier,
} from '@modelcontextprotocol/server';
import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { isSecureUrl, type OAuthConfig } from '../../config/oauth-schema.js';
import type { Caller } from '../../gate/caller.js';
import type { Logger } from '../../log.js';
import { requestAuthInfo } from '../../mcp/auth-info.js';
import { bearerTokenOf, type Authenticate, type AuthResult } from './bearer-auth.js';
import { boundedFetch } from './bounded-fetch.js';
import { checkTokenTimes, checkTokenType } from './check-token-profile.js';
import { createIssuerKeys } from './issuer-keys.js';
import { bearerChallenge, type ProtectedResource } from './protected-resource.js';

/** Signature algorithms accepted: asymmetric only, so neither `none` nor an HMAC keyed with a public key passes. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
/** Clock skew allowed on `nbf` and `iat` (`exp` is checked strictly). */
const CLOCK_TOLERANCE_S = 30;
const FETCH_TIMEOUT_MS = 5000;
/** After a failed fetch from the issuer, how long requests are refused (503) without fetching again. */
const FAILURE_COOLDOWN_MS = 5000;
const MAX_GROUPS = 1000;

/** The issuer's keys cannot be had now (discovery or JWKS unreachable): the request gets 503, not 401. */
class IssuerUnavailable extends Error {}

const invalid = (description: string) => new OAuthError(OAuthErrorCode.InvalidToken, description);

/** What a refused token is told, per jose error: the claim or check that failed, never the token. */
function whyRefused(err: errors.JOSEError): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return 'the token was not issued by the configured issuer';
    if (err.claim === 'aud') return 'the token was not issued for this resource';
    if (err.claim === 'nbf') return 'the token is not valid yet';
    return `the token's ${err.claim} claim is missing or invalid`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the token is not signed with an allowed algorithm';
  if (err instanceof errors.JWKSNoMatchingKey)
    return 'the token is signed with a key the issuer does not publish';
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  return 'the token is not a valid signed JWT';
}

/** Finds `jwks_uri` in the issuer's discovery document (OpenID Connect, then RFC 8414), which must name the issuer. */
async function discoverJwksUri(
  issuer: string,
  get: (url: string, init: RequestInit) => Promise<Response>,
): Promise<string> {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/$/, '');
  const candidates = [
    `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
    `${u.origin}/.well-known/oauth-authorization-server${path}`,
  ];
  for (const url of candidates) {
    const res = await get(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' }).catch(
      () => undefined,
    );
    if (res?.ok !== true) continue;
    const doc = (await res.json().catch(() => undefined)) as
      { issuer?: unknown; jwks_uri?: unknown } | undefined;
    if (doc?.issuer !== issuer || typeof doc.jwks_uri !== 'string' || !isSecureUrl(doc.jwks_uri)) continue;
    return doc.jwks_uri;
  }
  throw new IssuerUnavailable(`no discovery document of ${issuer} names it and a secure jwks_uri`);
}

const scopesOf = (p: JWTPayload): string[] => {
  if (typeof p.scope === 'string') return p.scope.split(' ').filter(Boolean);
  const scp: unknown = p.scp;
  if (typeof scp === 'string') return scp.split(' ').filter(Boolean);
  return Array.isArray(scp) ? scp.filter((s): s is string => typeof s === 'string') : [];
};

/**
 * A claim by name: the token's own key of that name, else, for a dotted name, the path through nested objects
 * (`realm_access.roles`, where Keycloak puts roles). Undefined when neither is there.
 */
export function claimAt(payload: JWTPayload, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, part))
      return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** The caller's groups from the groups claim (see `Caller.groups` for `unknown`). */
export function groupsOf(payload: JWTPayload, claim: string): string[] | 'unknown' {
  const value = claimAt(payload, claim);
  if (value === undefined) {
    const overage = payload._claim_names;
    return typeof overage === 'object' && overage !== null && Object.hasOwn(overage, claim) ? 'unknown' : [];
  }
  const list: unknown[] = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [value];
  if (!list.every((g) => typeof g === 'string')) return 'unknown';
  return list.filter((g) => g !== '' && g.length <= 256).slice(0, MAX_GROUPS);
}

/** The principal of a signed-in caller: a digest of issuer and subject (the audit log keeps its own digest of it). */
const callerPrincipal = (issuer: string, subject: string): string =>
  createHash('sha256').update(`${issuer}\n${subject}`, 'utf8').digest('hex').slice(0, 32);

/**
 * Verifies JWT access tokens of the configured issuer (RFC 9068): the `typ` header (`at+jwt`, or as configured),
 * the signature against the issuer's key set (see `createIssuerKeys` for when it is fetched again), `iss`, `aud` =
 * this resource, `exp`, `nbf`, `iat` (present, not in the future, within the maximum lifetime of `exp`), then a
 * subject. The caller is the token's issuer and subject; the groups come from the groups claim.
 */
function createJwtVerifier(oauth: OAuthConfig, log: Logger): OAuthTokenVerifier {
  // Every fetch from the issuer goes through here: bounded in size, and not repeated for a while after one failed,
  // so tokens sent while the issuer is down neither wait for nor start a fetch each.
  let failedAt = -Infinity;
  const issuerFetch = async (url: string, init: RequestInit) => {
    if (performance.now() - failedAt < FAILURE_COOLDOWN_MS)
      throw new IssuerUnavailable('the issuer could not be reached a moment ago');
    try {
      return await boundedFetch(url, init);
    } catch (err) {
      failedAt = performance.now();
      throw err;
    }
  };
  let keys: Promise<JWTVerifyGetKey> | undefined;
  const jwks = () =>
    (keys ??= (async () => {
      const uri = oauth.jwks_uri ?? (await discoverJwksUri(oauth.issuer, issuerFetch));
      log.info({ jwks_uri: uri }, 'verifying access tokens with the issuer keys');
      return createIssuerKeys(new URL(uri), {
        maxAgeMs: oauth.jwks_max_age_seconds * 1000,
        minRefetchMs: oauth.jwks_min_refetch_seconds * 1000,
        timeoutMs: FETCH_TIMEOUT_MS,
        fetch: issuerFetch,
      });
    })().catch((err: unknown) => {
      keys = undefined;
      failedAt = performance.now(); // a discovery that failed (an error status too) is not repeated per token
      throw err;
    }));
  return {
    async verifyAccessToken(token) {
      // The header first: a token of another kind is refused without fetching keys for it.
      let typ: unknown;
      try {
        ({ typ } = decodeProtectedHeader(token));
      } catch {
        throw invalid('the token is not a valid signed JWT');
      }
      const wrongType = checkTokenType(typ, oauth.accepted_token_types);
      if (wrongType !== undefined) throw invalid(wrongType);
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, await jwks(), {
          issuer: oauth.issuer,
          audience: oauth.resource,
          algorithms: ALGORITHMS,
          clockTolerance: CLOCK_TOLERANCE_S,
          requiredClaims: ['exp', 'iat'],
        }));
      } catch (err) {
        // Specific jose errors are about the token; anything else (network, timeouts, a broken key set) is about
        // the issuer.
        if (
          err instanceof errors.JOSEError &&
          err.code !== 'ERR_JOSE_GENERIC' &&
          !(err instanceof errors.JWKSTimeout) &&
          !(err instanceof errors.JWKSInvalid)
        )
          throw invalid(whyRefused(err));
        if (err instanceof IssuerUnavailable) throw err;
        throw new IssuerUnavailable('the issuer keys cannot be fetched', { cause: err });
      }
      const wrongTimes = checkTokenTimes(payload, {
        now: Math.floor(Date.now() / 1000),
        skew: CLOCK_TOLERANCE_S,
        maxLifetime: oauth.max_token_lifetime_seconds,
      });
      if (wrongTimes !== undefined) throw invalid(wrongTimes);
      const subject = claimAt(payload, oauth.subject_claim);
      if (typeof subject !== 'string' || subject === '' || subject.length > 256)
        throw invalid(`the token has no "${oauth.subject_claim}" claim naming the caller`);
      const caller: Caller = { issuer: oauth.issuer, subject, groups: groupsOf(payload, oauth.groups_claim) };
      return requestAuthInfo(callerPrincipal(oauth.issuer, subject), scopesOf(payload), {
        caller,
        expiresAt: payload.exp!,
        resource: new URL(oauth.resource),
      });
    },
  };
}

/**
 * OAuth sign-in for the MCP endpoint: no token → 401 naming the Protected Resource Metadata; a token that does not
 * verify → 401 `invalid_token`; a valid token without the read scope → 403 `insufficient_scope`; the issuer's keys
 * out of reach → 503 (fail closed). The run scope is checked per call (see `runScopeChallenge`).
 */
export function createJwtAuth(oauth: OAuthConfig, pr: ProtectedResource, log: Logger): Authenticate {
  const verifier = createJwtVerifier(oauth, log);
  const expectedResource = new URL(oauth.resource);
  const unauthorized = (description?: string): AuthResult => ({
    ok: false,
    refusal: {
      status: 401,
      message:
        description === undefined
          ? 'Unauthorized: sign in and send an access token'
          : `Unauthorized: ${description}`,
      headers: {
        'www-authenticate': bearerChallenge(
          pr,
          description === undefined ? undefined : { code: 'invalid_token', description },
        ),
      },
      ...(description === undefined ? {} : { reason: description }),
    },
  });
  return async (authorization) => {
    if (bearerTokenOf(authorization) === undefined) return unauthorized();
    try {
      const info = await verifyBearerToken(authorization, {
        verifier,
        expectedResource,
        requiredScopes: [oauth.scopes.read],
        resourceMetadataUrl: pr.metadataUrl,
      });
      return { ok: true, auth: { principal: info.clientId, info } };
    } catch (err) {
      if (err instanceof OAuthError && err.code === String(OAuthErrorCode.InsufficientScope)) {
        const description = `the token lacks the "${oauth.scopes.read}" scope`;
        return {
          ok: false,
          refusal: {
            status: 403,
            message: `Forbidden: ${description}`,
            headers: {
              'www-authenticate': bearerChallenge(pr, {
                code: 'insufficient_scope',
                description,
                scopes: [oauth.scopes.read],
              }),
            },
            reason: description,
          },
        };
      }
      if (err instanceof OAuthError) return unauthorized(err.message);
      const cause = err instanceof Error && err.cause instanceof Error ? { cause: err.cause.message } : {};
      log.warn(
        { err: err instanceof Error ? err.message : String(err), ...cause },
        'cannot verify access tokens now',
      );
      return {
        ok: false,
        refusal: {
          status: 503,
          message:
            'Service Unavailable: the sign-in issuer cannot be reached to check the token; retry shortly',
          headers: { 'retry-after': '5' },
          reason: 'issuer unreachable',
        },
      };
    }
  };
}
