import type { PasskeyEvidence } from './passkey-evidence.js';
import {
  APPROVAL_DECISIONS,
  DECISION_TITLES,
  isApprovalDecision,
  type ApprovalOutcome,
} from './approval-decision.js';
import { approvalMessage } from './approval-message.js';
import type { ApprovalView } from './approval-view.js';

/**
 * Protocol revisions whose elicitation schemas differ: 2025-06-18 (single-select as `enum` + `enumNames`, no
 * `default`, no `mode`), and 2025-11-25, whose constructs 2026-07-28 keeps (titled `oneOf: [{const, title}]`, a
 * `default`). Earlier revisions have no elicitation; a client of one that declares it gets the 2025-06-18 form.
 */
export type FormRevision = '2025-06-18' | '2025-11-25';

/** The form revision for a negotiated protocol version (`YYYY-MM-DD`, compared as text). */
export function formRevision(protocolVersion: string | undefined): FormRevision {
  return protocolVersion !== undefined && protocolVersion < '2025-11-25' ? '2025-06-18' : '2025-11-25';
}

const DECISION_FIELD = {
  type: 'string',
  title: 'Decision',
  description: 'Approve once, approve for the rest of this session, deny, or deny and stop all skill runs.',
} as const;

/** The requested schema of 2025-06-18: an enum with display names, nothing preselected. */
export type LegacyApprovalSchema = {
  type: 'object';
  properties: {
    decision: typeof DECISION_FIELD & { enum: string[]; enumNames: string[] };
  };
  required: ['decision'];
};

/** The requested schema of 2025-11-25 (and 2026-07-28): a titled single-select defaulting to `denied`. */
export type TitledApprovalSchema = {
  type: 'object';
  properties: {
    decision: typeof DECISION_FIELD & { oneOf: { const: string; title: string }[]; default: 'denied' };
  };
  required: ['decision'];
};

export type ApprovalSchema = LegacyApprovalSchema | TitledApprovalSchema;

/** The approval form as plain data (no SDK): an MCP elicitation in form mode with one required field, `decision`. */
export interface ApprovalForm {
  message: string;
  requestedSchema: ApprovalSchema;
}

/** The requested schema for a revision (the same for every call). */
export function approvalSchema(revision: FormRevision = '2025-11-25'): ApprovalSchema {
  if (revision === '2025-06-18') {
    return {
      type: 'object',
      properties: {
        decision: {
          ...DECISION_FIELD,
          enum: [...APPROVAL_DECISIONS],
          enumNames: APPROVAL_DECISIONS.map((d) => DECISION_TITLES[d]),
        },
      },
      required: ['decision'],
    };
  }
  return {
    type: 'object',
    properties: {
      decision: {
        ...DECISION_FIELD,
        oneOf: APPROVAL_DECISIONS.map((d) => ({ const: d, title: DECISION_TITLES[d] })),
        default: 'denied',
      },
    },
    required: ['decision'],
  };
}

/** Message + schema for the `elicitation/create` (or `input_required`) of one call. */
export function approvalRequest(view: ApprovalView, revision?: FormRevision): ApprovalForm {
  return { message: approvalMessage(view), requestedSchema: approvalSchema(revision) };
}

/**
 * What came back from asking. `accept`/`decline`/`cancel` are the MCP elicitation actions (`content` as
 * sent by the client); `timeout` when `timeout_ms` passed; `error` when the request failed.
 */
export type ApprovalAnswer =
  | { action: 'accept'; content?: unknown; passkey?: PasskeyEvidence }
  | { action: 'decline' | 'cancel' | 'timeout' }
  | { action: 'error'; error?: unknown };

/**
 * Maps an answer to the decision and its reason. Anything but a valid accepted decision is a denial with a
 * distinct reason; an unknown action or malformed content is `invalid_response` (fail closed).
 */
export function interpretAnswer(
  answer: ApprovalAnswer | { action: string; content?: unknown },
): ApprovalOutcome {
  switch (answer.action) {
    case 'accept': {
      const content = 'content' in answer ? answer.content : undefined;
      const decision =
        typeof content === 'object' && content !== null
          ? (content as Record<string, unknown>).decision
          : undefined;
      if (!isApprovalDecision(decision)) return { decision: 'denied', reason: 'invalid_response' };
      // Set only by the console, after it verified the assertion over this decision.
      const passkey = 'passkey' in answer ? (answer.passkey as PasskeyEvidence | undefined) : undefined;
      return passkey?.challenge.decision === decision
        ? { decision, reason: 'user', passkey }
        : { decision, reason: 'user' };
    }
    case 'decline':
      return { decision: 'denied', reason: 'declined' };
    case 'cancel':
      return { decision: 'denied', reason: 'cancelled' };
    case 'timeout':
      return { decision: 'denied', reason: 'timeout' };
    case 'error':
      return { decision: 'denied', reason: 'elicitation_error' };
    default:
      return { decision: 'denied', reason: 'invalid_response' };
  }
}
