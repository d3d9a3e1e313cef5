import {
  APPROVAL_DECISIONS,
  DECISION_TITLES,
  isApprovalDecision,
  type ApprovalOutcome,
} from './approval-decision.js';
import { approvalMessage, type ApprovalView } from './approval-message.js';

/**
 * The approval form as plain data (no SDK): an MCP elicitation in form mode with one required field,
 * `decision`, a titled single-select (`oneOf: [{const, title}]`) defaulting to `denied`.
 */
export interface ApprovalForm {
  message: string;
  requestedSchema: {
    type: 'object';
    properties: {
      decision: {
        type: 'string';
        title: string;
        description: string;
        oneOf: { const: string; title: string }[];
        default: 'denied';
      };
    };
    required: ['decision'];
  };
}

/** The requested schema alone (the same for every call). */
export function approvalSchema(): ApprovalForm['requestedSchema'] {
  return {
    type: 'object',
    properties: {
      decision: {
        type: 'string',
        title: 'Decision',
        description:
          'Approve once, approve for the rest of this session, deny, or deny and stop all skill runs.',
        oneOf: APPROVAL_DECISIONS.map((d) => ({ const: d, title: DECISION_TITLES[d] })),
        default: 'denied',
      },
    },
    required: ['decision'],
  };
}

/** Message + schema for the `elicitation/create` (or `input_required`) of one call. */
export function approvalRequest(view: ApprovalView): ApprovalForm {
  return { message: approvalMessage(view), requestedSchema: approvalSchema() };
}

/**
 * What came back from asking. `accept`/`decline`/`cancel` are the MCP elicitation actions (`content` as
 * sent by the client); `timeout` when `timeout_ms` passed; `error` when the request failed.
 */
export type ApprovalAnswer =
  | { action: 'accept'; content?: unknown }
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
      return isApprovalDecision(decision)
        ? { decision, reason: 'user' }
        : { decision: 'denied', reason: 'invalid_response' };
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

export type { ApprovalView } from './approval-message.js';
