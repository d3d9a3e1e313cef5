import * as z from 'zod';
import { POLICY_ACTIONS } from '../config/approval-schema.js';
import type { ApprovalView } from './approval-view.js';
import { cardDisplay, MAX_CARD_FINDINGS, type CardDisplay } from './card-display.js';
import { MAX_KEYS } from './display-call.js';

const HEX64 = /^[0-9a-f]{64}$/;
const LEVEL = z.enum(['low', 'medium', 'high']);

const FindingSchema = z.object({
  rule: z.string().describe('Finding id'),
  level: LEVEL.describe('Its level'),
  message: z.string().describe('One line a person can judge'),
  path: z.string().optional().describe('File relative to the skill folder'),
  line: z.number().int().optional().describe('1-based line'),
});

/**
 * What the console card shows of a call (`ApprovalView` without its arguments and input, with only the first input
 * keys and risk findings), as another replica sealed it (other keys dropped).
 */
const CardViewSchema = z.object({
  skill: z.string().describe('Skill name'),
  script: z.string().describe('Script path relative to the skill folder'),
  bundleSha256: z.string().regex(HEX64).describe('The bundle hash the call is bound to'),
  source: z.string().max(2100).optional().describe('The pinned git source of the skill, as url@short-commit'),
  module: z.string().optional().describe('Python module run with -m'),
  runner: z.string().optional().describe('Interpreter'),
  callId: z.string().describe('The call waiting'),
  inputSummary: z
    .object({
      input_sha256: z.string().regex(HEX64).describe('sha256 of the canonical JSON of the input'),
      input_bytes: z.number().int().nonnegative().describe('Its size in bytes'),
      input_keys: z.array(z.string()).max(MAX_KEYS).describe('The first sorted top-level keys'),
    })
    .describe('Digest, size and keys of the input'),
  sandbox: z
    .object({
      profile: z.string().describe('Sandbox profile'),
      enforced: z.boolean().describe('False when the operator turned the sandbox off'),
      network: z.enum(['none', 'full']).describe('Network of the run'),
      readablePaths: z
        .array(z.string())
        .optional()
        .describe('Host paths besides the skill the script may read (the workspace), on that replica'),
      writablePaths: z.array(z.string()).describe('Paths the script may write, on the replica that runs it'),
      sessionFolder: z
        .string()
        .optional()
        .describe("The session's working folder, read and changed by the run, on that replica"),
    })
    .describe('What the run may do'),
  operator: z
    .object({
      workspace: z.enum(['none', 'read', 'write']).optional().describe('Workspace access'),
      network: z.enum(['none', 'full']).optional().describe('Network'),
      profile: z.string().optional().describe('Sandbox profile'),
    })
    .optional()
    .describe("What the operator's skill_overrides set for the skill"),
  risk: z
    .object({
      level: LEVEL.describe('Risk level'),
      code: z.string().describe('Rule id of the first most severe finding'),
      findings: z
        .array(FindingSchema)
        .max(MAX_CARD_FINDINGS)
        .describe('The first findings, most severe first'),
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

/** What the card shows, as the console of the replica holding the call computed it (`cardDisplay`). */
const CardDisplaySchema = z.object({
  command: z.string().describe('Runner, script and the first arguments, escaped'),
  values: z
    .array(
      z.object({ name: z.string().describe('Input key'), text: z.string().describe('Its value as shown') }),
    )
    .max(MAX_KEYS)
    .describe('The first input keys with their values as shown'),
  moreKeys: z.number().int().nonnegative().describe('Input keys past those'),
  inFull: z
    .array(
      z.object({
        name: z.string().describe('Value name'),
        facts: z.string().describe('What it is'),
        lines: z.array(z.string()).describe('Its lines'),
      }),
    )
    .max(0)
    .default([])
    .describe('Values in full below the facts: none on a card (its call page shows them)'),
  shortened: z.number().int().nonnegative().default(0).describe('Values shortened on their line'),
  notShown: z
    .number()
    .int()
    .nonnegative()
    .describe('Values, arguments and keys the person cannot read on the card'),
  risk: z
    .object({
      level: LEVEL.describe('Risk level'),
      code: z.string().describe('Rule id of the first most severe finding'),
      findings: z.array(FindingSchema).max(MAX_CARD_FINDINGS).describe('The first findings'),
    })
    .describe('The risk as shown (raised when something is not shown in full)'),
  keyCount: z.number().int().nonnegative().describe('Input keys in all'),
  findingCount: z.number().int().nonnegative().describe('Findings in all'),
});

/**
 * A console approval waiting on one replica, as it shares it (sealed) with the consoles of the others: exactly what
 * its own console's card shows, and what binds it (the approval key; the input and bundle digests are in the view).
 * Small whatever the input: the arguments and input in full are sealed apart ({@link SharedInputSchema}).
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
  view: CardViewSchema.describe('What the card shows of the call'),
  display: CardDisplaySchema.describe('How the card shows its command, values and risk'),
});
export type SharedApproval = Omit<z.infer<typeof SharedApprovalSchema>, 'view' | 'display'> & {
  view: Omit<ApprovalView, 'argv' | 'input'>;
  display: CardDisplay;
};

/** The arguments and input of a call waiting on one replica, sealed apart from its card. */
export const SharedInputSchema = z.strictObject({
  argv: z.array(z.string()).describe('Arguments after the script'),
  input: z.unknown().describe('The input as received'),
});
export type SharedInput = z.infer<typeof SharedInputSchema>;

/** Parses an opened card; undefined when it is not one (never shown then). */
export function parseSharedApproval(body: unknown): SharedApproval | undefined {
  const r = SharedApprovalSchema.safeParse(body);
  // Parsed from JSON: an optional field is absent or set, never present as undefined.
  return r.success ? (r.data as SharedApproval) : undefined;
}

/** Parses opened arguments and input; undefined when they are not (never shown then). */
export function parseSharedInput(body: unknown): SharedInput | undefined {
  const r = SharedInputSchema.safeParse(body);
  return r.success ? r.data : undefined;
}

/** What a replica shares of a console approval waiting on it: its card, and apart its arguments and input. */
export function sharedParts(
  meta: Omit<SharedApproval, 'view' | 'display'>,
  view: ApprovalView,
): { card: SharedApproval; input: SharedInput } {
  const { argv, input, ...rest } = view;
  const card: SharedApproval = {
    ...meta,
    view: {
      ...rest,
      inputSummary: { ...view.inputSummary, input_keys: view.inputSummary.input_keys.slice(0, MAX_KEYS) },
      risk: { ...view.risk, findings: view.risk.findings.slice(0, MAX_CARD_FINDINGS) },
    },
    display: cardDisplay(view),
  };
  return { card, input: { argv: [...argv], input } };
}
