import * as z from 'zod';
import { POLICY_ACTIONS } from '../config/approval-schema.js';
import type { ApprovalView } from '../gate/index.js';

const HEX64 = /^[0-9a-f]{64}$/;
const LEVEL = z.enum(['low', 'medium', 'high']);

/** What the approval form and the console show of a call (`ApprovalView`), as another replica sealed it (other keys dropped). */
const ApprovalViewSchema = z.object({
  skill: z.string().describe('Skill name'),
  script: z.string().describe('Script path relative to the skill folder'),
  bundleSha256: z.string().regex(HEX64).describe('The bundle hash the call is bound to'),
  module: z.string().optional().describe('Python module run with -m'),
  runner: z.string().optional().describe('Interpreter'),
  argv: z.array(z.string()).describe('Arguments after the script'),
  callId: z.string().describe('The call waiting'),
  input: z.unknown().describe('The input as received'),
  inputSummary: z
    .object({
      input_sha256: z.string().regex(HEX64).describe('sha256 of the canonical JSON of the input'),
      input_bytes: z.number().int().nonnegative().describe('Its size in bytes'),
      input_keys: z.array(z.string()).describe('Sorted top-level keys'),
    })
    .describe('Digest, size and keys of the input'),
  sandbox: z
    .object({
      profile: z.string().describe('Sandbox profile'),
      enforced: z.boolean().describe('False when the operator turned the sandbox off'),
      network: z.enum(['none', 'full']).describe('Network of the run'),
      writablePaths: z.array(z.string()).describe('Paths the script may write, on the replica that runs it'),
    })
    .describe('What the run may do'),
  risk: z
    .object({
      level: LEVEL.describe('Risk level'),
      code: z.string().describe('Rule id of the first most severe finding'),
      findings: z
        .array(
          z.object({
            rule: z.string().describe('Finding id'),
            level: LEVEL.describe('Its level'),
            message: z.string().describe('One line a person can judge'),
            path: z.string().optional().describe('File relative to the skill folder'),
            line: z.number().int().optional().describe('1-based line'),
          }),
        )
        .describe('Every finding, most severe first'),
    })
    .describe('Risk'),
  policy: z
    .object({
      decision: z.enum(POLICY_ACTIONS).describe('What the policy said'),
      rule: z.string().describe('The rule that decided'),
    })
    .describe('Policy'),
  secretNames: z.array(z.string()).describe('Input keys and flags whose values are hidden'),
  fullInput: z.string().describe('Where the person sees the full input'),
  install: z
    .object({
      commands: z.array(z.string()).describe('Install commands'),
      sources: z.array(z.string()).describe('Package sources'),
      binaryOnly: z.boolean().describe('Binary packages only'),
    })
    .optional()
    .describe('Packages installed first'),
});

/**
 * A console approval waiting on one replica, as it shares it (sealed) with the consoles of the others: exactly what
 * its own console shows, and what binds it (the approval key; the input and bundle digests are in the view).
 */
export const SharedApprovalSchema = z.strictObject({
  callId: z.string().min(1).max(128).describe('The call waiting for the decision'),
  sessionId: z.string().min(1).max(256).describe('The audit session the call belongs to'),
  approvalKey: z.string().regex(HEX64).describe('The approval key recorded when the person was asked'),
  askedAt: z.number().describe('When it was asked (ms since the epoch, the asking replica clock)'),
  caller: z
    .strictObject({
      issuer: z.string().describe('The token issuer'),
      subject: z.string().describe('The token subject'),
    })
    .optional()
    .describe('The signed-in caller who made the call, if any'),
  view: ApprovalViewSchema.describe('What the person is shown'),
});
export type SharedApproval = Omit<z.infer<typeof SharedApprovalSchema>, 'view'> & { view: ApprovalView };

/** Parses an opened view; undefined when it is not one (never shown then). */
export function parseSharedApproval(body: unknown): SharedApproval | undefined {
  const r = SharedApprovalSchema.safeParse(body);
  // Parsed from JSON: an optional field is absent or set, never present as undefined.
  return r.success ? (r.data as SharedApproval) : undefined;
}
