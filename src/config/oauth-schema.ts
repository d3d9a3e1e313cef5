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
    hash_subjects: z
      .boolean()
      .default(false)
      .describe(
        "Record only the sha256 of each caller's subject in the audit log (`subject_sha256`) instead of the subject itself.",
      ),
  })
  .describe(
    'Sign-in with OAuth (JWT access tokens from your issuer) instead of one shared token: per-person grants, policy and audit.',
  );

export type OAuthConfig = z.infer<typeof OAuthConfigSchema>;
