import { PasskeyEvidenceSchema, PasskeyPersonSchema } from '../approvals/passkey-evidence.js';
import { z } from 'zod';
import { APPROVAL_DECISIONS, CLOSING_REASONS, DECISION_REASONS } from '../approvals/approval-vocabulary.js';
import type { EventType } from './event-types.js';
import { auditKeyNames, auditPath } from './model-text.js';

/*
 * Payloads hold hashes, sizes, counts, key names and our own identifiers: never env values, file contents,
 * stdout/stderr text or raw inputs. Every schema is strict (unknown keys are refused), so a raw value cannot
 * ride along by accident; `assertPrivate` adds a key-name check for the one open-ended record (sandbox evidence).
 * Numbers are integers only (timestamps and durations in ms): the hash chain's canonical JSON refuses floats.
 */

export const Sha256Schema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256')
  .describe('Lowercase hex sha256 digest');
const Bytes = z.int().min(0).describe('A size in bytes');
const Name = z
  .string()
  .min(1)
  .max(256)
  .describe('A name we chose (tool, skill, profile), never model free text');
const KeyName = z.string().min(1).max(128).describe('A key or variable name, never its value');
const Code = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be an identifier')
  .describe('An identifier such as an error code');
const RelPath = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => !p.startsWith('/') && !/^[A-Za-z]:/.test(p) && !p.split(/[\\/]/).includes('..'), {
    message: 'must be a relative path that stays inside its folder',
  })
  .describe('POSIX path relative to the skill or output folder');
const ArgvItem = z
  .string()
  .regex(/^[^\s/][^\s]{0,255}$/, 'argv holds program and skill-relative script names only')
  .describe('A program name or skill-relative script path (never an argument value)');

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.null(),
    z.boolean(),
    z.int(),
    z.string().max(4096),
    z.array(JsonValueSchema),
    z.record(z.string(), JsonValueSchema),
  ]),
);

export const ApprovalDecisionSchema = z.enum(APPROVAL_DECISIONS).describe('What was decided for the call');
export const ApprovalReasonSchema = z
  .enum([...DECISION_REASONS, ...CLOSING_REASONS])
  .describe('Why: the source of the decision');
export const ApprovalChannelSchema = z
  .enum(['elicitation', 'console', 'terminal', 'rules', 'session', 'none'])
  .describe(
    'Who was asked: MCP elicitation, the approval console, the terminal, config rules, session state, nobody',
  );
export const FinishStatusSchema = z
  .enum(['ok', 'error', 'timeout', 'cancelled', 'denied', 'invalid', 'sandbox_denied', 'stale_binding'])
  .describe('How the call ended');

/**
 * A signed-in caller (HTTP with OAuth) as the log holds it: the issuer, and the subject, or only the subject's
 * sha256 when the operator asked for that (`http.oauth.hash_subjects`). Never a token, never the groups.
 */
export const CallerRecordSchema = z
  .strictObject({
    issuer: z.string().min(1).max(2048).describe('Issuer of the access token (`iss`)'),
    subject: z.string().min(1).max(256).optional().describe('Subject of the access token'),
    subject_sha256: Sha256Schema.optional().describe(
      'sha256 of the subject (UTF-8), when subjects are hashed',
    ),
  })
  .refine((c) => (c.subject === undefined) !== (c.subject_sha256 === undefined), {
    message: 'exactly one of subject and subject_sha256',
  })
  .describe('Who called: the signed-in caller');

export const ApproverSchema = z
  .strictObject({
    kind: z
      .enum(['caller', 'console', 'terminal'])
      .describe(
        "Where the person answered: the caller's own client (MCP elicitation), the approval console, the terminal",
      ),
    caller: CallerRecordSchema.optional().describe('The signed-in caller who answered in their client'),
    person: PasskeyPersonSchema.optional().describe(
      "The enrolled person whose passkey answered in the console (its enrolment's name and subject)",
    ),
  })
  .describe('Who decided: set when a person answered');

export const SessionStartedPayloadSchema = z.strictObject({
  transport: z.enum(['stdio', 'http', 'cli']).describe('How the client reached us'),
  server_version: z.string().min(1).max(64).describe('skills-mcp version'),
  protocol_version: z.string().max(32).optional().describe('Negotiated MCP protocol version'),
  client: z
    .strictObject({
      name: z.string().max(128).describe('clientInfo.name'),
      version: z.string().max(64).optional().describe('clientInfo.version'),
    })
    .optional()
    .describe('What the client said it is'),
  principal_sha256: Sha256Schema.optional().describe(
    'sha256 of the authenticated principal (HTTP), never a token',
  ),
  caller: CallerRecordSchema.optional().describe('The signed-in caller of the session (HTTP with OAuth)'),
  owner: z
    .strictObject({
      pid: z.int().min(1).describe('Process id of the server that owns the session'),
      host: z.string().min(1).max(255).describe('Host name of that server'),
    })
    .describe('Filled in by the store: lets recovery tell a live session from a crashed one'),
});

export const ToolCallRequestedPayloadSchema = z
  .strictObject({
    tool: Name.describe('MCP tool name'),
    skill: Name.nullable().describe('Catalog skill name, null when the request did not resolve to a skill'),
    script: z
      .string()
      .min(1)
      .transform(auditPath)
      .optional()
      .describe('Skill-relative script path, when the call runs one (a digest when it is not a plain path)'),
    input_sha256: Sha256Schema.describe('sha256 of the canonical JSON input'),
    input_bytes: Bytes.describe('Size of the canonical JSON input'),
    input_keys: z
      .array(z.string())
      .describe(
        'Top-level input key names, sorted: plain names of up to 32 characters as they are, others as a digest; at most 64',
      ),
    input_keys_omitted: z.int().min(1).optional().describe('Key names past the first 64, not kept'),
    bundle_sha256: Sha256Schema.nullable().describe('Content binding of the skill, null when not resolved'),
    env_sha256: Sha256Schema.optional().describe(
      "Identity of the skill's environment, when it declares packages",
    ),
    approval_key: Sha256Schema.nullable().describe(
      'Approval key (sha256 of the tool and its sanitized request), null for read-only tools',
    ),
    request_sha256: Sha256Schema.optional().describe(
      'sha256 of all the call asked for (tool, skill, script as named or module, args, input), for gated calls: ' +
        'a retry on any replica runs the call only when its own is equal (absent in records of older versions)',
    ),
    valid: z.boolean().describe('Whether the input validated against the tool schema'),
    read_only: z.boolean().optional().describe('True for tools that never run code'),
    error_code: Code.optional().describe('Why the request is invalid (SkillsError code)'),
    caller: CallerRecordSchema.optional().describe(
      'The signed-in caller who made the call (HTTP with OAuth)',
    ),
  })
  .transform(({ input_keys, input_keys_omitted, ...rest }) => {
    const { kept, omitted } = auditKeyNames(input_keys, input_keys_omitted);
    return { ...rest, input_keys: kept, ...(omitted > 0 ? { input_keys_omitted: omitted } : {}) };
  });

export const PolicyDecidedPayloadSchema = z.strictObject({
  decision: z.enum(['allow', 'ask', 'deny']).describe('Policy outcome'),
  rule: z.string().min(1).max(256).nullable().describe('The matched rule, null for the default mode'),
  risk: z
    .strictObject({
      level: z.enum(['low', 'medium', 'high']).describe('Guard risk level'),
      code: Code.describe('Guard finding id'),
      reason: z.string().max(512).describe('Guard explanation (our text, never input values)'),
    })
    .describe('Guard result'),
});

const RiskLevelSchema = z.enum(['low', 'medium', 'high']).describe('Risk level');

export const ShownPayloadSchema = z
  .strictObject({
    risk: z
      .strictObject({
        level: RiskLevelSchema,
        code: Code.describe('Rule id of the first most severe finding'),
      })
      .describe('The risk as shown: raised to medium when a value was not shown'),
    findings: z
      .array(z.strictObject({ rule: Code.describe('Finding rule id'), level: RiskLevelSchema }))
      .max(16)
      .describe('The findings listed, in order'),
    findings_count: z.int().min(1).optional().describe('Findings in all, when more than were listed'),
    message_sha256: Sha256Schema.optional().describe(
      "sha256 of the approval form's message (UTF-8), for the form and the terminal; absent for the console card",
    ),
  })
  .describe('What the person was shown when asked');

export const ApprovalRequestedPayloadSchema = z.strictObject({
  approval_key: Sha256Schema.describe('The key being asked about'),
  channel: ApprovalChannelSchema,
  shown: ShownPayloadSchema.optional(),
  url_elicitation: z
    .literal(true)
    .optional()
    .describe(
      "The client was sent a URL-mode elicitation with the console approval's secret-free link; its answer approves nothing",
    ),
});

export const ApprovalDecidedPayloadSchema = z.strictObject({
  approval_key: Sha256Schema.describe('The key decided'),
  decision: ApprovalDecisionSchema,
  reason: ApprovalReasonSchema,
  channel: ApprovalChannelSchema,
  approver: ApproverSchema.optional(),
  passkey: PasskeyEvidenceSchema.optional(),
  mac: Sha256Schema.optional().describe(
    'With a log shared by replicas: HMAC-SHA256, under a key derived from their shared secret, of the call id, its ' +
      'audit session, approval key, input and bundle digests and the decision. A replica acts on a decision ' +
      'recorded by another, or applies its grant, only when this verifies.',
  ),
});

export const LoopGuardTrippedPayloadSchema = z.strictObject({
  approval_key: Sha256Schema.describe('The key that is now refused without asking'),
  denials: z.int().min(1).describe('Denials of that key in the session so far'),
});

export const SessionAbortedPayloadSchema = z.strictObject({
  approval_key: Sha256Schema.nullable().describe('Key of the approval answered with abort, if any'),
  channel: ApprovalChannelSchema,
});

export const ToolCallStartedPayloadSchema = z.strictObject({
  argv: z
    .array(ArgvItem)
    .min(1)
    .max(16)
    .describe('Program and script names only; argument values are hashed'),
  args_count: z.int().min(0).optional().describe('Number of arguments passed after argv'),
  args_sha256: Sha256Schema.optional().describe('sha256 of the canonical JSON list of those arguments'),
  env_keys: z.array(KeyName).max(512).describe('Names of the env vars passed, sorted'),
  sandbox: z
    .record(z.string(), JsonValueSchema)
    .describe('Sandbox evidence (what was enforced), integers only'),
  output_dir: z.string().min(1).max(4096).describe('Host path of the per-call output folder'),
  env_sha256: Sha256Schema.optional().describe("Identity of the skill's environment mounted for the run"),
  env_install: z.boolean().optional().describe('True when the call builds that environment before running'),
});

export const ArtifactSchema = z.strictObject({
  path: RelPath.describe('Path inside the output files folder'),
  sha256: Sha256Schema.describe('Content digest'),
  bytes: Bytes.describe('File size'),
});

/** True when the audit log can hold `p` as an artifact path (else the file is left out, its name recorded as a digest). */
export const isRecordablePath = (p: string): boolean => RelPath.safeParse(p).success;

export const RefusedArtifactSchema = z.strictObject({
  path_sha256: Sha256Schema.describe('sha256 of the raw name, which the log cannot hold as a path'),
});

/** A workspace path as the log holds it: the path when recordable, else its digest. */
const WorkspacePathSchema = z.strictObject({
  path: RelPath.optional().describe('Path relative to the workspace'),
  path_sha256: Sha256Schema.optional().describe('sha256 of a name the log cannot hold as a path'),
});

export const WorkspaceChangesSchema = z.strictObject({
  written: z
    .array(
      WorkspacePathSchema.extend({
        sha256: Sha256Schema.describe('Digest of the content written'),
        bytes: Bytes.describe('Size written'),
      }),
    )
    .max(20_000)
    .describe('Files the run created or rewrote in the workspace'),
  deleted: z.array(WorkspacePathSchema).max(20_000).describe('Files the run deleted from the workspace'),
  refused: z.int().min(0).describe('Changes not applied (protected, conflicting or not regular files)'),
  applied: z
    .boolean()
    .optional()
    .describe(
      'False: the run failed and nothing was applied; written and deleted are what it would have changed',
    ),
});

export const ToolCallFinishedPayloadSchema = z.strictObject({
  status: FinishStatusSchema,
  exit_code: z.int().nullable().describe('Process exit code, null when nothing ran or it was killed'),
  signal: z.string().max(16).optional().describe('Signal that ended the process, if any'),
  duration_ms: z.int().min(0).describe('Wall time of the call in ms'),
  stdout_sha256: Sha256Schema.nullable().describe('sha256 of stdout, null when nothing ran'),
  stdout_bytes: Bytes.describe('stdout size (before capping)'),
  stderr_bytes: Bytes.describe('stderr size (before capping)'),
  truncated: z.boolean().optional().describe('Output was capped'),
  error_code: Code.optional().describe('SkillsError code behind a non-ok status'),
  artifacts: z.array(ArtifactSchema).max(10_000).describe('Files the call produced'),
  artifacts_refused: z
    .array(RefusedArtifactSchema)
    .max(1000)
    .optional()
    .describe('Files left out because their names are not recordable paths'),
  env_installed: z
    .array(z.string().regex(/^[^\s]{1,300}$/, 'name==version or name@version'))
    .max(5000)
    .optional()
    .describe('Packages this call installed into its environment (names and versions)'),
  workspace_changes: WorkspaceChangesSchema.optional().describe(
    'What a run granted workspace writes changed on the host, as applied',
  ),
});

export const ToolCallInterruptedPayloadSchema = z.strictObject({
  reason: z
    .enum(['server_restart', 'session_ended', 'lease_expired'])
    .describe(
      "Why the call never finished; 'lease_expired': a peer closed it when the server's lease ran out (stalled or cut off, not known dead): whether its script ran on is unknown",
    ),
  stage: z.enum(['requested', 'started']).describe("How far it got: 'started' means a process may have run"),
});

export const SessionErrorPayloadSchema = z.strictObject({
  code: Code.describe('Error code'),
  ref: z.string().max(64).nullable().describe('Reference id of the logged error'),
  stage: Code.optional().describe('Pipeline stage, when known'),
});

export const SessionEndedPayloadSchema = z.strictObject({
  reason: z
    .enum(['client_closed', 'signal', 'shutdown', 'error', 'server_restart'])
    .describe('Why the session ended'),
  interrupted_calls: z.int().min(0).describe('Calls still open at the end, now interrupted'),
});

const B64URL = /^[A-Za-z0-9_-]+$/;
const CredentialId = z.string().min(1).max(1400).regex(B64URL).describe('WebAuthn credential id (base64url)');

export const ApproverEnrolledPayloadSchema = z.strictObject({
  credential_id: CredentialId,
  public_key: z
    .string()
    .min(1)
    .max(4096)
    .regex(B64URL)
    .describe(
      "The credential's public key as COSE (base64url): what `audit verify` checks its assertions with",
    ),
  name: z.string().min(1).max(100).describe('Who or which device it is, as given at enrolment'),
  subject: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe("The person's sign-in subject, as given at enrolment (`--subject`)"),
  enrolled_at: z.string().max(40).describe('When it was enrolled (ISO 8601)'),
});

export const ApproverRemovedPayloadSchema = z.strictObject({
  credential_id: CredentialId,
  public_key: z
    .string()
    .min(1)
    .max(4096)
    .regex(B64URL)
    .describe("The removed credential's public key (COSE, base64url)"),
  name: z.string().min(1).max(100).describe('Its name, as given at enrolment'),
  subject: z.string().min(1).max(256).optional().describe('Its subject, as given at enrolment'),
  removed_at: z.string().max(40).describe('When it was removed (ISO 8601)'),
});

/** `skills-mcp sources update`: a pinned git source fetched again, at the commit the configuration names. */
export const SourceUpdatedPayloadSchema = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(2048)
    .describe('The repository URL (the configuration refuses one holding a password)'),
  path: z.string().min(1).max(1024).describe('The skills folder inside the repository'),
  ref: z.string().min(1).max(255).describe('The ref as configured: the commit, or the moving ref resolved'),
  old_commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .nullable()
    .describe('The commit the checkout held before, null when there was none (or its pin was unreadable)'),
  new_commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .describe('The commit fetched and served from now on'),
});

export const payloadSchemas = {
  session_started: SessionStartedPayloadSchema,
  tool_call_requested: ToolCallRequestedPayloadSchema,
  policy_decided: PolicyDecidedPayloadSchema,
  approval_requested: ApprovalRequestedPayloadSchema,
  approval_decided: ApprovalDecidedPayloadSchema,
  loop_guard_tripped: LoopGuardTrippedPayloadSchema,
  session_aborted: SessionAbortedPayloadSchema,
  tool_call_started: ToolCallStartedPayloadSchema,
  tool_call_finished: ToolCallFinishedPayloadSchema,
  tool_call_interrupted: ToolCallInterruptedPayloadSchema,
  session_error: SessionErrorPayloadSchema,
  session_ended: SessionEndedPayloadSchema,
  approver_enrolled: ApproverEnrolledPayloadSchema,
  approver_removed: ApproverRemovedPayloadSchema,
  source_updated: SourceUpdatedPayloadSchema,
} as const satisfies Record<EventType, z.ZodType>;

/** The payload type of each event type. */
export type EventPayloads = { [K in EventType]: z.infer<(typeof payloadSchemas)[K]> };

export type SessionStartedPayload = EventPayloads['session_started'];
export type ToolCallRequestedPayload = EventPayloads['tool_call_requested'];
export type PolicyDecidedPayload = EventPayloads['policy_decided'];
export type ApprovalRequestedPayload = EventPayloads['approval_requested'];
export type ApprovalDecidedPayload = EventPayloads['approval_decided'];
export type LoopGuardTrippedPayload = EventPayloads['loop_guard_tripped'];
export type SessionAbortedPayload = EventPayloads['session_aborted'];
export type ToolCallStartedPayload = EventPayloads['tool_call_started'];
export type ToolCallFinishedPayload = EventPayloads['tool_call_finished'];
export type ToolCallInterruptedPayload = EventPayloads['tool_call_interrupted'];
export type SessionErrorPayload = EventPayloads['session_error'];
export type SessionEndedPayload = EventPayloads['session_ended'];
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;
export type ApprovalReason = z.infer<typeof ApprovalReasonSchema>;
export type ApprovalChannel = z.infer<typeof ApprovalChannelSchema>;
export type FinishStatus = z.infer<typeof FinishStatusSchema>;
export type Artifact = z.infer<typeof ArtifactSchema>;
export type CallerRecord = z.infer<typeof CallerRecordSchema>;
export type Approver = z.infer<typeof ApproverSchema>;
