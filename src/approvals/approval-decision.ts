import type { PasskeyEvidence, PasskeyPerson } from './passkey-evidence.js';
/** The decisions a person can give, and why a call ended up approved or refused. */

import { APPROVAL_DECISIONS, DECISION_REASONS } from './approval-vocabulary.js';

export { APPROVAL_DECISIONS, DECISION_REASONS };

export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/** Titles shown in the approval form, in display order. */
export const DECISION_TITLES: Readonly<Record<ApprovalDecision, string>> = {
  approved: 'Approve once',
  approved_for_session: 'Approve for this session',
  denied: 'Deny',
  abort: 'Deny and stop all skill runs in this session',
};

export type DecisionReason = (typeof DECISION_REASONS)[number];

/** What the gate decided for one call that needed approval (the `approval_decided` payload, minus the key). */
export interface ApprovalOutcome {
  decision: ApprovalDecision;
  reason: DecisionReason;
  /** The passkey assertion that approved it, verified by the console. */
  passkey?: PasskeyEvidence;
  /** Whose passkey answered, on a refusal of it (`self_approval`): the attempt is recorded with its person. */
  person?: PasskeyPerson;
}

/**
 * The one definition of a denial (what the loop guard counts, and what the audit log's view of a session counts): a
 * person said no, dismissed the form, or let it time out. Client failures (`invalid_response`,
 * `elicitation_error`), answers no one saw (`answered_unseen`), tool calls the client cancelled
 * (`request_cancelled`), refusals without a prompt (`rules`, `no_approver`, `cached`, `loop_guard`,
 * `session_aborted`), closings (`server_restart`, `session_ended`) and aborts do not.
 */
export function countsAsDenial(outcome: { decision: string; reason: string }): boolean {
  return (
    outcome.decision === 'denied' &&
    (outcome.reason === 'user' ||
      outcome.reason === 'declined' ||
      outcome.reason === 'cancelled' ||
      outcome.reason === 'timeout')
  );
}

export const isApprovalDecision = (v: unknown): v is ApprovalDecision =>
  typeof v === 'string' && (APPROVAL_DECISIONS as readonly string[]).includes(v);

export const isDecisionReason = (v: unknown): v is DecisionReason =>
  typeof v === 'string' && (DECISION_REASONS as readonly string[]).includes(v);
