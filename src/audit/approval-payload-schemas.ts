import { z } from 'zod';
import { PasskeyEvidenceSchema, PasskeyPersonSchema } from '../approvals/passkey-evidence.js';
import { APPROVAL_DECISIONS, CLOSING_REASONS, DECISION_REASONS } from '../approvals/approval-vocabulary.js';
import { CallerRecordSchema } from './caller-record-schema.js';
import { CodeSchema, Sha256Schema } from './payload-fields.js';

/** The payloads of asking a person and of what was decided: requested, decided, loop guard, session aborted. */

export const ApprovalDecisionSchema = z.enum(APPROVAL_DECISIONS).describe('What was decided for the call');
export const ApprovalReasonSchema = z
  .enum([...DECISION_REASONS, ...CLOSING_REASONS])
  .describe('Why: the source of the decision');
export const ApprovalChannelSchema = z
  .enum(['elicitation', 'console', 'terminal', 'rules', 'session', 'none'])
  .describe(
    'Who was asked: MCP elicitation, the approval console, the terminal, config rules, session state, nobody',
  );

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

const RiskLevelSchema = z.enum(['low', 'medium', 'high']).describe('Risk level');

export const ShownPayloadSchema = z
  .strictObject({
    risk: z
      .strictObject({
        level: RiskLevelSchema,
        code: CodeSchema.describe('Rule id of the first most severe finding'),
      })
      .describe('The risk as shown: raised to medium when a value was not shown'),
    findings: z
      .array(z.strictObject({ rule: CodeSchema.describe('Finding rule id'), level: RiskLevelSchema }))
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
  passkey_required: z
    .literal(true)
    .optional()
    .describe(
      'The call needs a passkey approval (`approval.require`): `audit verify` fails an approval of it that holds ' +
        'no passkey assertion',
    ),
  four_eyes_required: z
    .literal(true)
    .optional()
    .describe(
      'The call needs four eyes (`approval.require.four_eyes`): `audit verify` fails an approval of it whose ' +
        'passkey evidence is not a four-eyes one (`four_eyes: true`)',
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

export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;
export type ApprovalReason = z.infer<typeof ApprovalReasonSchema>;
export type ApprovalChannel = z.infer<typeof ApprovalChannelSchema>;
export type Approver = z.infer<typeof ApproverSchema>;
