import { z } from 'zod';
import { CallerRecordSchema } from './caller-record-schema.js';
import { auditKeyNames, auditPath } from './model-text.js';
import { CodeSchema, Sha256Schema } from './payload-fields.js';

/** The payloads of a call's own events: requested, policy decided, started, finished, interrupted. */

const Bytes = z.int().min(0).describe('A size in bytes');
const Name = z
  .string()
  .min(1)
  .max(256)
  .describe('A name we chose (tool, skill, profile), never model free text');
const KeyName = z.string().min(1).max(128).describe('A key or variable name, never its value');
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

export const FinishStatusSchema = z
  .enum(['ok', 'error', 'timeout', 'cancelled', 'denied', 'invalid', 'sandbox_denied', 'stale_binding'])
  .describe('How the call ended');

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
    error_code: CodeSchema.optional().describe('Why the request is invalid (SkillsError code)'),
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
      code: CodeSchema.describe('Guard finding id'),
      reason: z.string().max(512).describe('Guard explanation (our text, never input values)'),
    })
    .describe('Guard result'),
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
  error_code: CodeSchema.optional().describe('SkillsError code behind a non-ok status'),
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

export type FinishStatus = z.infer<typeof FinishStatusSchema>;
export type Artifact = z.infer<typeof ArtifactSchema>;
