/**
 * The words of an approval, shared by the gate (which decides) and the audit log (which records): one list each,
 * so the two can never drift apart.
 */

/** What a person (or the policy) can decide for a call. */
export const APPROVAL_DECISIONS = ['approved', 'approved_for_session', 'denied', 'abort'] as const;

export const DECISION_REASONS = [
  /** A person answered the form. */
  'user',
  /** An `approved_for_session` grant for the same key. */
  'cached',
  /** The policy decided without asking (allow or deny rule, mode, high_risk, fallback rules-only). */
  'rules',
  'declined',
  'cancelled',
  /**
   * The client declined or cancelled the form faster than a person can read it (`claude -p`, `codex exec`): it
   * answered without showing it, and no one was asked.
   */
  'answered_unseen',
  'timeout',
  /** The client cancelled the tool call while its approval waited (its request timeout, or its user stopped it). */
  'request_cancelled',
  'invalid_response',
  'elicitation_error',
  /** The key was denied `loop_guard` times in this session. */
  'loop_guard',
  'session_aborted',
  /** Approval was needed and nobody could be asked (fallback `deny`). */
  'no_approver',
  /**
   * `approval.require` asks a passkey for the call, and none approved it: no console or no passkey enrolled (refused
   * before anyone is asked), or an approval without passkey evidence for this call (refused where it is applied).
   */
  'passkey_required',
  /**
   * `approval.require` asks four eyes for the call and nobody else's passkey could approve it: no signed-in caller
   * (refused before anyone is asked), or a passkey whose enrolment names no subject (refused where it is applied).
   */
  'four_eyes_required',
  /** `approval.require` asks four eyes for the call, and the caller approved it with their own passkey. */
  'self_approval',
] as const;

/** Reasons only the audit log writes: approvals left pending when the server or the session ended. */
export const CLOSING_REASONS = ['server_restart', 'session_ended'] as const;
