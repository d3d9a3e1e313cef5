import * as z from 'zod';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https, or http on a loopback host (a local issuer while testing); no fragment, no credentials. */
export const isSecureUrl = (value: string): boolean => {
  try {
    const u = new URL(value);
    if (u.hash !== '' || u.username !== '' || u.password !== '') return false;
    return u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK.has(u.hostname));
  } catch {
    return false;
  }
};

const Url = (what: string) =>
  z
    .string()
    .min(1)
    .max(2048)
    .refine(isSecureUrl, `${what} must be an https:// URL (http:// only on localhost), without a fragment`);

const Scope = z
  .string()
  .regex(/^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/, 'an OAuth scope: printable characters, no space or quote');

const Claim = z.string().regex(/^[A-Za-z0-9_:./-]{1,128}$/, 'a claim name: letters, digits and _ : . / -');

/**
 * `http.oauth`: skills-mcp as an OAuth 2.1 resource server. Clients sign in at the issuer and send its JWT access
 * tokens; the static bearer token (`http.token_file`, SKILLS_MCP_TOKEN) is for one-person setups and cannot be
 * combined with this.
 */
export const OAuthConfigSchema = z
  .strictObject({
    issuer: Url('issuer').describe(
      "The authorization server's issuer URL, exactly as its tokens' `iss` claim says it (flag --oauth-issuer).",
    ),
    resource: Url('resource').describe(
      "This server's MCP endpoint as clients reach it, e.g. https://skills.example.com/mcp (flag --oauth-resource). Tokens must name it in `aud` (RFC 8707 resource indicator); the Protected Resource Metadata names it as `resource`.",
    ),
    jwks_uri: Url('jwks_uri')
      .optional()
      .describe(
        "Where the issuer's signing keys are. Default: `jwks_uri` from the issuer's discovery document (/.well-known/openid-configuration, else /.well-known/oauth-authorization-server).",
      ),
    scopes: z
      .strictObject({
        read: Scope.default('skills:read').describe(
          'Scope needed for every MCP request: the catalog (tools, prompts, resources, skill files).',
        ),
        run: Scope.default('skills:run').describe(
          'Scope also needed for a call that runs a skill script (executable skill tools, run_skill_script).',
        ),
      })
      // The same name for both would let every token that may read the catalog run scripts too.
      .refine((s) => s.read !== s.run, { message: 'read and run must be different scopes', path: ['run'] })
      .prefault({})
      .describe(
        'The scope names as the issuer grants them (some prefix them, e.g. api://skills/skills:run).',
      ),
    subject_claim: Claim.default('sub').describe(
      'Claim naming the person (a dotted name also finds a nested claim): policy rules match it (`caller.subjects`) and the audit log records it.',
    ),
    groups_claim: Claim.default('groups').describe(
      'Claim listing the groups of the person (a list of strings, or one string) that `caller.groups` in policy rules match; a dotted name such as `realm_access.roles` also finds a nested claim. When the claim holds anything else, or the issuer left it out as too long (`_claim_names`), the groups are unknown: rules that deny by group apply, rules that allow or ask by group do not.',
    ),
    accepted_token_types: z
      .array(
        z
          .string()
          .max(64)
          .regex(/^[\x21-\x7e]*$/, 'a media type without spaces, or "" for a token without a typ header'),
      )
      .min(1)
      .default(['at+jwt'])
      .describe(
        'The `typ` header values accepted, compared without case and with or without `application/`. Default: only RFC 9068 access tokens (`at+jwt`), so ID tokens, logout tokens and DPoP proofs signed by the same issuer are refused. Issuers that mark access tokens `JWT` (Entra ID always; Keycloak and Auth0 by default) need `[at+jwt, JWT]`; `""` also accepts a token without `typ`.',
      ),
    max_token_lifetime_seconds: z
      .int()
      .min(60)
      .max(31 * 86400)
      .default(86400)
      .describe(
        'Longest lifetime (`exp` − `iat`) a token may have. Tokens must carry `iat` (RFC 9068 requires it) and it may not be later than now plus 30 s of clock skew.',
      ),
    jwks_max_age_seconds: z
      .int()
      .min(1)
      .max(86400)
      .default(300)
      .describe(
        "Longest time the issuer's key set is used before it is fetched again, so a key the issuer removed stops verifying within it (sooner when the key set's Cache-Control max-age is shorter). While the key set cannot be fetched after that, tokens get 503.",
      ),
    jwks_min_refetch_seconds: z
      .int()
      .min(1)
      .max(300)
      .default(5)
      .describe(
        "Shortest time between two fetches of the issuer's key set. A token signed with a key not in the set fetches it again at once, or waits out the rest of this interval and then fetches it, so a newly published key works on its first request and unknown key ids cannot flood the issuer.",
      ),
    hash_subjects: z
      .boolean()
      .default(false)
      .describe(
        "Record only the sha256 of each caller's subject in the audit log (`subject_sha256`) instead of the subject itself.",
      ),
  })
  .refine((o) => o.jwks_min_refetch_seconds <= o.jwks_max_age_seconds, {
    message: 'jwks_min_refetch_seconds must not exceed jwks_max_age_seconds',
    path: ['jwks_min_refetch_seconds'],
  })
  .describe(
    'Sign-in with OAuth (JWT access tokens from your issuer) instead of one shared token: per-person grants, policy and audit.',
  );

export type OAuthConfig = z.infer<typeof OAuthConfigSchema>;
