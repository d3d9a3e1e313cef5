import * as z from 'zod';

/**
 * The `approval` section of `skills-mcp.yaml`. Parsing `{}` yields every default.
 *
 * ```yaml
 * approval:
 *   mode: ask              # no rule matched → ask a person
 *   rules:                 # first match wins, but a matching deny always wins
 *     - { skill: pdf, script: scripts/fill_form.py, action: allow }
 *     - { skill: pdf, action: ask }
 *     - { skill: 'untrusted-*', action: deny }
 *     - { skill: deploy, caller: { groups: [ops] }, action: allow }   # signed-in callers (http.oauth) only
 *   high_risk: ask
 *   fallback: rules-only   # clients that cannot show the approval form: let the rules decide
 * ```
 */

export const POLICY_ACTIONS = ['allow', 'ask', 'deny'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

export const GRANULARITIES = ['exact', 'skill'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Whole names (see `secret_names`) whose values the approval screen hides by default. */
export const DEFAULT_SECRET_NAMES = [
  'password',
  'passwd',
  'passphrase',
  'secret',
  'client_secret',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'auth_token',
  'api_token',
  'api_key',
  'apikey',
  'private_key',
  'secret_key',
  'access_key',
  'authorization',
  'cookie',
  'credentials',
];

const noDotDot = (p: string): boolean => !p.split('/').includes('..');

const ClaimValue = z.string().min(1).max(256);

export const CallerConditionSchema = z
  .strictObject({
    subjects: z
      .array(ClaimValue)
      .max(1000)
      .default([])
      .describe('Subjects (the `sub` claim, or `http.oauth.subject_claim`) this rule is for.'),
    groups: z
      .array(ClaimValue)
      .max(1000)
      .default([])
      .describe('Groups (from `http.oauth.groups_claim`) this rule is for.'),
  })
  .refine((c) => c.subjects.length + c.groups.length > 0, 'list at least one subject or group')
  .describe('Who a rule is for: a signed-in caller whose subject is listed or who is in a listed group.');

export type CallerCondition = z.infer<typeof CallerConditionSchema>;

export const ApprovalRuleSchema = z
  .strictObject({
    skill: z
      .string()
      .min(1)
      .regex(/^[^/]+$/, 'a skill name or pattern, without "/" (put the script in `script`)')
      .describe(
        'Skill name, or a pattern where `*` matches any run of characters (e.g. `pdf`, `data-*`, `*`).',
      ),
    script: z
      .string()
      .min(1)
      .refine((p) => !p.startsWith('/') && noDotDot(p), 'a path relative to the skill folder, without ".."')
      .optional()
      .describe(
        'Script path relative to the skill folder (e.g. `scripts/fill_form.py`). `*` matches within one path ' +
          'segment, `**` across segments; a pattern without "/" also matches the file name alone. Omit to ' +
          'match every script of the skill.',
      ),
    caller: CallerConditionSchema.optional().describe(
      "Only for these signed-in callers (HTTP with `http.oauth`): the rule matches when the caller's subject is " +
        'listed or the caller is in a listed group. A rule with a caller never matches a request without a ' +
        'signed-in caller (stdio, a static token, no token).',
    ),
    action: z
      .enum(POLICY_ACTIONS)
      .describe('allow: run without asking; ask: ask a person first; deny: never run.'),
  })
  .describe('One policy rule: which skill (and optionally which script and caller) and what to do.');

export type ApprovalRule = z.infer<typeof ApprovalRuleSchema>;

const RISK_LEVELS = ['low', 'medium', 'high'] as const;

export const PasskeyScopeSchema = z
  .strictObject({
    skills: z
      .array(
        z
          .string()
          .min(1)
          .max(256)
          .regex(/^[^/]+$/, 'a skill name or pattern, without "/"'),
      )
      .max(1000)
      .default([])
      .describe(
        'Skill names, or patterns where `*` matches any run of characters, whose calls need a passkey.',
      ),
    risk: z
      .array(z.enum(RISK_LEVELS))
      .max(3)
      .default([])
      .describe('Risk levels (low, medium, high) whose calls need a passkey.'),
  })
  .refine((s) => s.skills.length + s.risk.length > 0, 'list at least one skill or risk level')
  .describe('Which calls need a passkey: a call of a listed skill, or a call rated at a listed risk level.');

export type PasskeyScope = z.infer<typeof PasskeyScopeSchema>;

const SkillPatterns = z
  .array(
    z
      .string()
      .min(1)
      .max(256)
      .regex(/^[^/]+$/, 'a skill name or pattern, without "/"'),
  )
  .max(1000);

export const FourEyesScopeSchema = z
  .strictObject({
    skills: SkillPatterns.min(1, 'list at least one skill').describe(
      'Skill names, or patterns where `*` matches any run of characters, whose calls need a passkey of someone ' +
        'other than the caller.',
    ),
  })
  .describe(
    'Which calls need four eyes: a passkey approval by an enrolled person other than the signed-in caller.',
  );

export type FourEyesScope = z.infer<typeof FourEyesScopeSchema>;

export const ApprovalRequireSchema = z
  .union([
    z.enum(['passkey', 'none']),
    z
      .strictObject({
        passkey: PasskeyScopeSchema.optional(),
        four_eyes: FourEyesScopeSchema.optional(),
      })
      .refine((r) => r.passkey !== undefined || r.four_eyes !== undefined, 'set passkey or four_eyes'),
  ])
  .default('none')
  .describe(
    'Whose approval counts for a call that a person must approve. none (default): an answer in the client form, ' +
      'the approval console or the terminal prompt. passkey: only an approval in the approval console signed ' +
      'with a passkey enrolled by `skills-mcp approvers enroll`; an answer in the client form or the terminal ' +
      'never runs it, and without a console (--approval-console) or an enrolled passkey it is refused ' +
      '(`passkey_required`). `{passkey: {skills: [...], risk: [...]}}`: only for those skills or risk levels. ' +
      '`{four_eyes: {skills: [...]}}` (with or without `passkey`): calls of those skills need a passkey whose ' +
      'enrolment names a subject (`approvers enroll --subject`) other than the signed-in caller (HTTP with ' +
      '`http.oauth`); a call without a signed-in caller is refused before anyone is asked ' +
      "(`four_eyes_required`), an approval with the caller's own passkey is refused (`self_approval`). " +
      'Calls that a rule allows still run without asking.',
  );

export type ApprovalRequire = z.infer<typeof ApprovalRequireSchema>;

export const ApprovalConfigSchema = z
  .strictObject({
    mode: z
      .enum(POLICY_ACTIONS)
      .default('ask')
      .describe(
        'What to do when no rule matches: ask (default), allow or deny. With allow, a call the guard rates ' +
          'medium risk (network, workspace writes, no sandbox) is still asked unless a rule allows it.',
      ),
    rules: z
      .array(ApprovalRuleSchema)
      .default([])
      .describe(
        'Ordered rules matched against skill and script. The first matching rule decides, except that a ' +
          'matching deny rule always wins, wherever it stands.',
      ),
    high_risk: z
      .enum(['ask', 'deny'])
      .default('ask')
      .describe(
        'What to do when the static scan rates a skill high risk (credential paths, curl|sh, encoded exec, ' +
          'shell rc writes): ask a person even when a rule or mode allows it (default), or deny outright.',
      ),
    require: ApprovalRequireSchema,
    timeout_ms: z
      .int()
      .min(1_000)
      .max(86_400_000)
      .default(120_000)
      .describe('How long to wait for a person to answer an approval request before denying it (ms).'),
    loop_guard: z
      .int()
      .min(0)
      .max(100)
      .default(2)
      .describe(
        'The Nth denial of the same approval key in a session refuses later calls with that key without ' +
          'asking (default 2). 0 turns the loop guard off.',
      ),
    granularity: z
      .enum(GRANULARITIES)
      .default('exact')
      .describe(
        'What an approval is bound to. exact: skill + script + content + input + args (new input asks again). ' +
          'skill: skill + script + content only (one approval or denial covers any input).',
      ),
    fallback: z
      .enum(['deny', 'rules-only'])
      .default('deny')
      .describe(
        'For clients that cannot show the approval form (or with --no-elicitation). deny (default): fail ' +
          'closed, no skill script runs, and the refusal says how to allow it. rules-only: the rules alone ' +
          'decide: allow runs, ask and deny are refused.',
      ),
    http_elicitation: z
      .enum(['token', 'any'])
      .default('token')
      .describe(
        "Over HTTP, when an answer in the client's own approval form (MCP elicitation) counts as a person's " +
          'approval. token (default): only when the server has a bearer token (SKILLS_MCP_TOKEN or ' +
          '--token-file) or signs callers in (http.oauth), so every request is authenticated; without one the approval console decides if it is ' +
          'on, else the call is refused. any: also without a token; then any local program that reaches the ' +
          "port, the model's own HTTP client included, can approve its own calls (single-user machines only). " +
          'stdio is not affected.',
      ),
    secret_names: z
      .array(
        z
          .string()
          .min(1)
          .max(100)
          .regex(/^[A-Za-z0-9_.-]+$/, 'a name of letters, digits, "_", "-" or "."'),
      )
      .max(200)
      .default(DEFAULT_SECRET_NAMES)
      .describe(
        'Input keys and command-line flags whose value the approval screen hides (matched as whole names, ' +
          'ignoring case, leading dashes and the difference between "-" and "_"; `keywords` is not `key`). A ' +
          'hidden value is shown by its length only and raises the risk shown; every other value ' +
          'is shown. The default lists common credential names.',
      ),
    console: z
      .union([z.boolean(), z.enum(['auto'])])
      .default(false)
      .describe(
        'Approval console (flag --approval-console): a local web page (127.0.0.1, random port, secret URL) ' +
          'where a person approves runs when the client cannot show the approval form (or with ' +
          '--no-elicitation); it also shows recent calls from the audit log. auto: on when a desktop session ' +
          'is detected (macOS, Windows, or DISPLAY / WAYLAND_DISPLAY set).',
      ),
    console_wait_ms: z
      .int()
      .min(1_000)
      .max(86_400_000)
      .default(50_000)
      .describe(
        'How long a tool call waits for a decision in the approval console before answering "approval ' +
          'pending, call again once the user has decided" (keep it under the client request timeout, often ' +
          '60 s). The approval stays open, and its decision is kept for that retry, until timeout_ms.',
      ),
    console_open_browser: z
      .boolean()
      .default(true)
      .describe(
        'Open the approval console in the default browser (xdg-open, open) when an approval is waiting ' +
          'and no console page is open, through a private file in the state folder (the link is never sent to ' +
          'the client, logged or put on a command line; `skills-mcp console` prints it in a terminal).',
      ),
  })
  .describe('Policy and approvals for running skill scripts (the `approval` section of skills-mcp.yaml).');

export type ApprovalConfig = z.infer<typeof ApprovalConfigSchema>;
export type ApprovalConfigInput = z.input<typeof ApprovalConfigSchema>;
